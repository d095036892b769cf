//! What a signal does when it comes, with honest minimal semantics: its default action is
//! taken (end the process, or nothing for SIGCHLD, SIGCONT, SIGURG and SIGWINCH); an
//! ignored signal is dropped; a blocked one stays pending until it is unblocked. cfslab runs
//! no handlers: a caught signal stays pending (see [`super::thread_group`]). Linux's
//! `kernel/signal.c`; the calls that send signals and change actions and masks are
//! `user::syscall::signal`'s, the console's Ctrl-C is `user::tty`'s.

use super::thread_group::{SIG_DFL, SIG_IGN, SIGKILL};
use crate::sched;
use crate::task::TaskId;

const SIGSTOP: u8 = 19;

/// Signals whose default action is to do nothing: SIGCHLD, SIGCONT, SIGURG, SIGWINCH.
fn ignored_by_default(signal: u8) -> bool {
    matches!(signal, 17 | 18 | 23 | 28)
}

/// A signal's bit in a mask (signal 1 is bit 0).
pub fn bit(signal: u8) -> u64 {
    1 << (signal - 1)
}

/// What can never be blocked or caught.
pub const UNBLOCKABLE: u64 = 1 << (SIGKILL - 1) | 1 << (SIGSTOP - 1);

/// Sends `signal` to every process: the console's Ctrl-C (`user::tty`), from its interrupt.
/// The terminal's foreground process group is every process, as cfslab has no groups.
pub fn signal_every_process(signal: u8) {
    for id in sched::processes_of(None) {
        deliver(id, signal);
    }
}

/// Sends `signal` to task `id`'s process, from task or interrupt context (a kill's wake-up
/// switches at the interrupt's end then); false if it is gone.
pub fn deliver(id: TaskId, signal: u8) -> bool {
    let threads = sched::threads_of_task(id);
    if threads.is_empty() {
        return false;
    }
    if signal == 0 {
        return true;
    }
    let Some(group) = sched::group_of(id) else {
        // A kernel thread — pid 1, the boot task, among them — has a handler for nothing
        // and ignores every signal, as Linux's kernel threads and its init do (SIGKILL
        // from user space included).
        return true;
    };
    if bit(signal) & UNBLOCKABLE == 0 {
        let action = group.action(signal);
        if action.handler == SIG_IGN || (action.handler == SIG_DFL && ignored_by_default(signal)) {
            return true;
        }
        if action.handler != SIG_DFL || sched::blocks(id, signal) {
            group.add_pending(signal);
            return true;
        }
    }
    for t in threads {
        sched::kill_task(t, signal);
    }
    true
}

/// Takes the default action of pending signals the running thread no longer blocks (and
/// whose action is still the default).
pub fn act_on_unblocked() {
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
