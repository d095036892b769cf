//! The calls that send signals and set what they do: `kill`, `tkill`, `tgkill`,
//! `rt_sigqueueinfo`, `rt_tgsigqueueinfo`, `rt_sigaction`, `rt_sigprocmask` and
//! `rt_sigpending`. Sending is the process model's
//! (`sched::proc::signal`); a handler runs on the way back to ring 3 (`user::signal`); the
//! calls that wait for a signal are `sigwait`'s.

use super::{errno, space};
use crate::sched;
use crate::sched::proc::sighand::{
    SI_TKILL, SI_USER, SIG_IGN, SentTo, SigAction, SigInfo, UNBLOCKABLE, bit,
};
use crate::sched::proc::signal::{SendError, send, send_as, send_info_as};
use crate::task::{id_of_pid, pid_of};
use alloc::vec::Vec;

/// What a signal from the running process carries: SI_USER (or SI_TKILL), its pid, and
/// its uid `uid`.
fn from_caller(code: i32, uid: u32) -> SigInfo {
    SigInfo {
        code,
        pid: pid_of(sched::current_process()) as u32,
        uid,
        ..SigInfo::default()
    }
}

/// The size of a `sigset_t` the kernel takes: 64 signals, 8 bytes.
const SIGSET_BYTES: u64 = 8;

/// `kill(pid, signal)`: signal 0 checks. Another uid's process may be signalled by root
/// only (EPERM). `pid` -1 signals every process the caller may, but itself (Linux also
/// spares init, which on cfslab is a kernel thread); 0 signals the caller's process group,
/// and a pid below -1 the group -pid.
pub fn kill(pid: i64, signal: i64) -> i64 {
    if !(0..=64).contains(&signal) {
        return -errno::EINVAL;
    }
    let signal = signal as u8;
    if pid > 0 {
        let Some(id) = id_of_pid(pid) else {
            return -errno::ESRCH;
        };
        // The sender's uid is filled in as the permission is checked, in the same look.
        return answer(send_as(
            id,
            SentTo::Process,
            signal,
            from_caller(SI_USER, 0),
        ));
    }
    let me = sched::current_uid();
    let info = from_caller(SI_USER, me);
    if pid == 0 || pid < -1 {
        // A process group: the caller's (0), or -pid.
        let pgid = if pid == 0 {
            sched::current_group().map_or(0, |g| g.pgid())
        } else {
            pid.unsigned_abs() as u32
        };
        let uid = (me != 0).then_some(me);
        return match crate::sched::proc::groups::signal_group(pgid, uid, signal, info) {
            (0, _) => -errno::ESRCH,
            (_, 0) => -errno::EPERM,
            _ => 0,
        };
    }
    // -1: every process the caller may signal, but itself.
    let myself = sched::current_process();
    let uid = (me != 0).then_some(me);
    let targets: Vec<_> = sched::processes_of(uid)
        .into_iter()
        .filter(|&id| id != myself)
        .collect();
    if targets.is_empty() {
        return -errno::ESRCH;
    }
    for id in targets {
        send(id, signal, info);
    }
    0
}

/// The answer of a system call that sent one signal.
fn answer(sent: Result<(), SendError>) -> i64 {
    match sent {
        Ok(()) => 0,
        Err(SendError::NoSuchProcess) => -errno::ESRCH,
        Err(SendError::NotPermitted) => -errno::EPERM,
        Err(SendError::QueueFull) => -errno::EAGAIN,
    }
}

/// `tgkill(tgid, tid, signal)`: `signal` to thread `tid` of process `tgid` (ESRCH if it is
/// not one of its threads), with `kill`'s permission rule. It is pending for that thread
/// alone: no other thread of the process takes it, even while `tid` blocks it.
pub fn tgkill(tgid: i64, tid: i64, signal: i64) -> i64 {
    if tgid <= 0 || tid <= 0 {
        return -errno::EINVAL;
    }
    let leader = id_of_pid(tid).map(|id| sched::group_of(id).map_or(id, |g| g.leader));
    if leader.map(crate::task::pid_of) != Some(tgid) {
        return -errno::ESRCH;
    }
    tkill(tid, signal)
}

/// `tkill(tid, signal)`: `signal` to thread `tid`, as [`tgkill`] without the check.
pub fn tkill(tid: i64, signal: i64) -> i64 {
    if tid <= 0 || !(0..=64).contains(&signal) {
        return -errno::EINVAL;
    }
    let Some(id) = id_of_pid(tid) else {
        return -errno::ESRCH;
    };
    answer(send_as(
        id,
        SentTo::Thread(id),
        signal as u8,
        from_caller(SI_TKILL, 0),
    ))
}

/// `rt_sigqueueinfo(tgid, signal, info)`: `signal` to process `tgid` with the `siginfo_t`
/// at `info` (`sigqueue`'s call: SI_QUEUE and a value), by `kill`'s permission rule; EAGAIN
/// if the target's queue is full (Linux's `do_rt_sigqueueinfo`, 6.1).
pub fn rt_sigqueueinfo(tgid: i64, signal: i64, info: u64) -> i64 {
    if tgid <= 0 {
        return -errno::ESRCH;
    }
    queue_info(tgid, false, signal, info)
}

/// `rt_tgsigqueueinfo(tgid, tid, signal, info)`: as [`rt_sigqueueinfo`], to thread `tid`
/// of process `tgid` (ESRCH if it is not one of its threads).
pub fn rt_tgsigqueueinfo(tgid: i64, tid: i64, signal: i64, info: u64) -> i64 {
    if tgid <= 0 || tid <= 0 {
        return -errno::EINVAL;
    }
    let leader = id_of_pid(tid).map(|id| sched::group_of(id).map_or(id, |g| g.leader));
    if leader.map(crate::task::pid_of) != Some(tgid) {
        return -errno::ESRCH;
    }
    queue_info(tid, true, signal, info)
}

/// Sends `signal` with the caller's `siginfo_t` at `info` to task `pid`'s process, or to
/// that thread alone (`to_thread`). A program may make up any `siginfo` for itself, but to
/// another (`pid` is not the calling thread) not one that would pass for the kernel's or
/// `kill`'s — si_code >= 0 — or `tkill`'s (EPERM), so that a receiver can trust those.
fn queue_info(pid: i64, to_thread: bool, signal: i64, info: u64) -> i64 {
    if !(0..=64).contains(&signal) {
        return -errno::EINVAL;
    }
    let mut raw = [0u8; 128];
    if space().read(info, &mut raw).is_err() {
        return -errno::EFAULT;
    }
    let field = |at: usize| u32::from_le_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]]);
    let code = field(8) as i32;
    // The caller is the thread itself, by its tid, as Linux compares `task_pid_vnr`.
    let to_myself = pid == pid_of(sched::current());
    if (code >= 0 || code == SI_TKILL) && !to_myself {
        return -errno::EPERM;
    }
    let Some(id) = id_of_pid(pid) else {
        return -errno::ESRCH;
    };
    let info = SigInfo {
        code,
        pid: field(16),
        uid: field(20),
        value: u64::from(field(24)) | u64::from(field(28)) << 32,
        ..SigInfo::default()
    };
    let to = if to_thread {
        SentTo::Thread(id)
    } else {
        SentTo::Process
    };
    answer(send_info_as(id, to, signal as u8, info))
}

/// `rt_sigaction(signal, act, oldact, sigsetsize)`: keeps the action (Linux's 32-byte
/// `struct sigaction`: handler, flags, restorer, mask) and returns the old one. SIGKILL and
/// SIGSTOP cannot be changed (EINVAL). Ignoring a signal drops it if pending.
pub fn rt_sigaction(signal: u64, act: u64, oldact: u64, sigsetsize: u64) -> i64 {
    if sigsetsize != SIGSET_BYTES || !(1..=64).contains(&signal) {
        return -errno::EINVAL;
    }
    let signal = signal as u8;
    let group = sched::current_group().expect("a process");
    let space = space();
    let old = group.sighand.action(signal);
    if act != 0 {
        if bit(signal) & UNBLOCKABLE != 0 {
            return -errno::EINVAL;
        }
        let mut raw = [0u8; 32];
        if space.read(act, &mut raw).is_err() {
            return -errno::EFAULT;
        }
        let word =
            |i: usize| u64::from_le_bytes(raw[8 * i..8 * i + 8].try_into().unwrap_or_default());
        let action = SigAction {
            handler: word(0),
            flags: word(1),
            restorer: word(2),
            mask: word(3) & !UNBLOCKABLE,
        };
        group.sighand.set_action(signal, action);
        if action.handler == SIG_IGN {
            group.sighand.discard(bit(signal));
        }
    }
    if oldact != 0 {
        let mut raw = [0u8; 32];
        for (i, w) in [old.handler, old.flags, old.restorer, old.mask]
            .iter()
            .enumerate()
        {
            raw[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
        }
        if space.write(oldact, &raw).is_err() {
            return -errno::EFAULT;
        }
    }
    0
}

/// `rt_sigprocmask(how, set, oldset, sigsetsize)`: SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK on
/// the running thread's mask (SIGKILL and SIGSTOP are never blocked). A pending signal that
/// is unblocked is taken on the way back to ring 3.
pub fn rt_sigprocmask(how: u64, set: u64, oldset: u64, sigsetsize: u64) -> i64 {
    const SIG_BLOCK: u64 = 0;
    const SIG_UNBLOCK: u64 = 1;
    const SIG_SETMASK: u64 = 2;
    if sigsetsize != SIGSET_BYTES {
        return -errno::EINVAL;
    }
    let space = space();
    let old = sched::blocked_signals();
    if set != 0 {
        let mut raw = [0u8; 8];
        if space.read(set, &mut raw).is_err() {
            return -errno::EFAULT;
        }
        let set = u64::from_le_bytes(raw);
        let new = match how {
            SIG_BLOCK => old | set,
            SIG_UNBLOCK => old & !set,
            SIG_SETMASK => set,
            _ => return -errno::EINVAL,
        };
        sched::set_blocked_signals(new & !UNBLOCKABLE);
    }
    if oldset != 0 && space.write(oldset, &old.to_le_bytes()).is_err() {
        return -errno::EFAULT;
    }
    0
}

/// `rt_sigpending(set, sigsetsize)`: the signals pending for the caller that it blocks
/// (the others are being taken), as Linux's `do_sigpending`.
pub fn rt_sigpending(set: u64, sigsetsize: u64) -> i64 {
    if sigsetsize > SIGSET_BYTES {
        return -errno::EINVAL;
    }
    let pending = crate::sched::proc::signal::pending_for_current() & sched::blocked_signals();
    let bytes = pending.to_le_bytes();
    match space().write(set, &bytes[..sigsetsize as usize]) {
        Ok(()) => 0,
        Err(_) => -errno::EFAULT,
    }
}
