//! Signals, with honest minimal semantics: `kill`, `rt_sigaction` and `rt_sigprocmask`.
//! Actions and masks are kept as Linux keeps them and read back; a signal's default action
//! is taken (end the process, or nothing for SIGCHLD, SIGCONT, SIGURG and SIGWINCH); an
//! ignored signal is dropped; a blocked one stays pending until it is unblocked. cfslab runs
//! no handlers: a caught signal stays pending (see `sched::proc::thread_group`).

use super::{errno, space};
use crate::sched;
use crate::sched::proc::thread_group::{SIG_DFL, SIG_IGN, SIGKILL, SigAction};
use crate::task::{TaskId, id_of_pid};
use alloc::vec::Vec;

const SIGSTOP: u8 = 19;
/// The size of a `sigset_t` the kernel takes: 64 signals, 8 bytes.
const SIGSET_BYTES: u64 = 8;

/// Signals whose default action is to do nothing: SIGCHLD, SIGCONT, SIGURG, SIGWINCH.
fn ignored_by_default(signal: u8) -> bool {
    matches!(signal, 17 | 18 | 23 | 28)
}

fn bit(signal: u8) -> u64 {
    1 << (signal - 1)
}

/// What can never be blocked or caught.
const UNBLOCKABLE: u64 = 1 << (SIGKILL - 1) | 1 << (SIGSTOP - 1);

/// `kill(pid, signal)`: signal 0 checks. Another uid's process may be signalled by root
/// only (EPERM). `pid` -1 signals every process the caller may, but itself (Linux also
/// spares init, which on cfslab is a kernel thread); cfslab has no process groups, so 0 and
/// other negative pids give ESRCH.
pub fn kill(pid: i64, signal: i64) -> i64 {
    if !(0..=64).contains(&signal) {
        return -errno::EINVAL;
    }
    let signal = signal as u8;
    let me = sched::current_uid();
    if pid as i32 == -1 {
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
            deliver(id, signal);
        }
        return 0;
    }
    let Some(id) = id_of_pid(pid) else {
        return -errno::ESRCH;
    };
    let Some(uid) = sched::task_uid(id) else {
        return -errno::ESRCH;
    };
    if me != 0 && me != uid {
        return -errno::EPERM;
    }
    if deliver(id, signal) {
        0
    } else {
        -errno::ESRCH
    }
}

/// Sends `signal` to every process: the console's Ctrl-C (`user::tty`), from its interrupt.
/// The terminal's foreground process group is every process, as cfslab has no groups.
pub fn signal_every_process(signal: u8) {
    for id in sched::processes_of(None) {
        deliver(id, signal);
    }
}

/// Sends `signal` to task `id`'s process, from task or interrupt context (a kill's wake-up
/// switches at the interrupt's end then); false if it is gone.
fn deliver(id: TaskId, signal: u8) -> bool {
    let threads = sched::threads_of_task(id);
    if threads.is_empty() {
        return false;
    }
    if signal == 0 {
        return true;
    }
    if let Some(group) = sched::group_of(id)
        && bit(signal) & UNBLOCKABLE == 0
    {
        let action = group.action(signal);
        if action.handler == SIG_IGN || (action.handler == SIG_DFL && ignored_by_default(signal)) {
            return true;
        }
        if action.handler != SIG_DFL || sched::blocks(id, signal) {
            group.add_pending(signal);
            return true;
        }
    } else if ignored_by_default(signal) {
        return true;
    }
    for t in threads {
        sched::kill_task(t, signal);
    }
    true
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
    let old = group.action(signal);
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
        group.set_action(signal, action);
        if action.handler == SIG_IGN {
            group.take_pending(bit(signal));
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
/// is unblocked takes its default action now.
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
    act_on_unblocked();
    0
}

/// Takes the default action of pending signals the running thread no longer blocks (and
/// whose action is still the default).
fn act_on_unblocked() {
    let group = sched::current_group().expect("a process");
    let candidates = group.take_pending(!sched::blocked_signals());
    for signal in (1..=64u8).filter(|&s| candidates & bit(s) != 0) {
        let action = group.action(signal);
        if action.handler == SIG_DFL && !ignored_by_default(signal) {
            deliver(sched::current(), signal);
        } else if action.handler != SIG_IGN && action.handler != SIG_DFL {
            // Caught: still pending, as no handler runs.
            group.add_pending(signal);
        }
    }
}
