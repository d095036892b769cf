//! Resource limits as `getrlimit` and `prlimit64` report them (Linux's kernel/sys.c): the
//! limits cfslab enforces, as soft and hard limit alike, and RLIM_INFINITY for the rest.
//! Changing a limit is not implemented (ENOSYS): a limit that is reported must be the one
//! enforced, and cfslab's are fixed.

use super::{errno, space};
use crate::sched;
use crate::task::id_of_pid;
use crate::user::address_space::MAX_PROCESS_BYTES;
use crate::user::files::MAX_FDS;

const RLIM_INFINITY: u64 = u64::MAX;
const RLIMIT_STACK: u64 = 3;
const RLIMIT_NPROC: u64 = 6;
const RLIMIT_NOFILE: u64 = 7;
const RLIMIT_AS: u64 = 9;
/// Linux's RLIM_NLIMITS: resources 0..16.
const RESOURCES: u64 = 16;

/// The limit of `resource` (soft = hard).
fn limit(resource: u64) -> u64 {
    match resource {
        RLIMIT_STACK => crate::user::stack::STACK_BYTES,
        RLIMIT_NPROC => sched::MAX_PROCESSES as u64,
        RLIMIT_NOFILE => MAX_FDS as u64,
        RLIMIT_AS => MAX_PROCESS_BYTES,
        _ => RLIM_INFINITY,
    }
}

/// Writes `resource`'s `struct rlimit` (two u64: soft, hard) to `out`.
fn write_limit(resource: u64, out: u64) -> i64 {
    let value = limit(resource).to_le_bytes();
    let mut raw = [0u8; 16];
    raw[..8].copy_from_slice(&value);
    raw[8..].copy_from_slice(&value);
    match space().write(out, &raw) {
        Ok(()) => 0,
        Err(_) => -errno::EFAULT,
    }
}

/// `getrlimit(resource, rlim)`.
pub fn getrlimit(resource: u64, out: u64) -> i64 {
    if resource >= RESOURCES {
        return -errno::EINVAL;
    }
    write_limit(resource, out)
}

/// `prlimit64(pid, resource, new, old)`: the old limit of the caller (pid 0) or a process
/// it may see; a new one is not taken (ENOSYS).
pub fn prlimit64(pid: i64, resource: u64, new: u64, old: u64) -> i64 {
    if resource >= RESOURCES {
        return -errno::EINVAL;
    }
    if pid != 0 && id_of_pid(pid).and_then(sched::task_uid).is_none() {
        return -errno::ESRCH;
    }
    if new != 0 {
        return -errno::ENOSYS;
    }
    if old == 0 {
        return 0;
    }
    write_limit(resource, old)
}
