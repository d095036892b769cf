//! Resource limits as `getrlimit`, `setrlimit` and `prlimit64` see them (Linux's
//! kernel/sys.c): the limits cfslab enforces, and RLIM_INFINITY for the rest. A limit that is
//! reported must be the one enforced, so only RLIMIT_NOFILE, which the descriptor table
//! enforces, can be changed (lowered by anyone, raised up to its hard limit, and the hard
//! limit raised by root only, never past cfslab's 1024 descriptors: EPERM). The others are
//! fixed, soft and hard alike: a change to one gives ENOSYS.

use super::{errno, space};
use crate::sched;
use crate::task::id_of_pid;
use crate::user::address_space::MAX_PROCESS_BYTES;
use crate::user::files::{FdLimit, MAX_FDS};

const RLIM_INFINITY: u64 = u64::MAX;
const RLIMIT_STACK: u64 = 3;
const RLIMIT_NPROC: u64 = 6;
const RLIMIT_NOFILE: u64 = 7;
const RLIMIT_AS: u64 = 9;
const RLIMIT_SIGPENDING: u64 = 11;
/// Linux's RLIM_NLIMITS: resources 0..16.
const RESOURCES: u64 = 16;

/// The limits (soft, hard) of `resource` for the running process.
fn limits(resource: u64) -> (u64, u64) {
    let fixed = |v: u64| (v, v);
    match resource {
        RLIMIT_STACK => fixed(crate::user::stack::STACK_BYTES),
        RLIMIT_NPROC => fixed(sched::MAX_PROCESSES as u64),
        RLIMIT_NOFILE => {
            let files = sched::current_files().expect("a process");
            let limit = files.lock().limit();
            (limit.soft as u64, limit.hard as u64)
        }
        RLIMIT_AS => fixed(MAX_PROCESS_BYTES),
        RLIMIT_SIGPENDING => fixed(crate::sched::proc::sighand::MAX_QUEUED as u64),
        _ => fixed(RLIM_INFINITY),
    }
}

/// Writes `resource`'s `struct rlimit` (two u64: soft, hard) to `out`.
fn write_limit(resource: u64, out: u64) -> i64 {
    let (soft, hard) = limits(resource);
    let mut raw = [0u8; 16];
    raw[..8].copy_from_slice(&soft.to_le_bytes());
    raw[8..].copy_from_slice(&hard.to_le_bytes());
    match space().write(out, &raw) {
        Ok(()) => 0,
        Err(_) => -errno::EFAULT,
    }
}

/// Takes the `struct rlimit` at `new` for `resource` (see the module's docs for the rules).
fn set_limit(resource: u64, new: u64) -> i64 {
    let mut raw = [0u8; 16];
    if space().read(new, &mut raw).is_err() {
        return -errno::EFAULT;
    }
    let soft = u64::from_le_bytes(raw[..8].try_into().unwrap_or_default());
    let hard = u64::from_le_bytes(raw[8..].try_into().unwrap_or_default());
    if soft > hard {
        return -errno::EINVAL;
    }
    if resource != RLIMIT_NOFILE {
        return if (soft, hard) == limits(resource) {
            0
        } else {
            -errno::ENOSYS
        };
    }
    let files = sched::current_files().expect("a process");
    let mut table = files.lock();
    let old = table.limit();
    let raising_hard = hard > old.hard as u64;
    if hard > MAX_FDS as u64 || (raising_hard && sched::current_uid() != 0) {
        return -errno::EPERM;
    }
    table.set_limit(FdLimit {
        soft: soft as usize,
        hard: hard as usize,
    });
    0
}

/// `setrlimit(resource, rlim)`.
pub fn setrlimit(resource: u64, new: u64) -> i64 {
    if resource >= RESOURCES {
        return -errno::EINVAL;
    }
    set_limit(resource, new)
}

/// `getrlimit(resource, rlim)`.
pub fn getrlimit(resource: u64, out: u64) -> i64 {
    if resource >= RESOURCES {
        return -errno::EINVAL;
    }
    write_limit(resource, out)
}

/// `prlimit64(pid, resource, new, old)`: the old limit, then the new one, of the caller (pid
/// 0 or its own); another process's limits are read as the caller's are (cfslab's are the
/// same for all but RLIMIT_NOFILE) and not changed (EPERM).
pub fn prlimit64(pid: i64, resource: u64, new: u64, old: u64) -> i64 {
    if resource >= RESOURCES {
        return -errno::EINVAL;
    }
    if pid != 0 && id_of_pid(pid).and_then(sched::task_uid).is_none() {
        return -errno::ESRCH;
    }
    let myself = pid == 0 || id_of_pid(pid) == Some(sched::current_process());
    if old != 0 {
        let e = write_limit(resource, old);
        if e != 0 {
            return e;
        }
    }
    match new {
        0 => 0,
        _ if !myself => -errno::EPERM,
        _ => set_limit(resource, new),
    }
}
