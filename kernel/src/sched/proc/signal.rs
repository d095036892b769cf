//! Sending a signal and finding the thread that takes it (Linux's `send_signal`,
//! `prepare_signal` and `complete_signal`, in `kernel/signal.c`), under the scheduler's
//! lock so that a child's exit can send SIGCHLD from inside it.
//!
//! A signal sent to a process is, in this order:
//! - dropped if it is ignored — by `SIG_IGN`, or by a default action of "ignore" (SIGCHLD,
//!   SIGCONT, SIGURG, SIGWINCH) — unless the thread it names blocks it: a blocked signal
//!   stays pending, so `sigtimedwait` can take it;
//! - fatal at once if its action is the default "terminate" and no thread needs to see it
//!   first (it is not blocked): every thread is marked killed and woken, and dies on its
//!   way back to ring 3;
//! - a stop at once if its action is the default "stop" (SIGSTOP, SIGTSTP, SIGTTIN,
//!   SIGTTOU): every thread stops on its way back to ring 3 until SIGCONT, which continues
//!   a stopped process whatever its action; the parent hears of both (SIGCHLD, `wait4`);
//! - otherwise pending for the process, and one thread that does not block it — the named
//!   one if it can — is woken from an interruptible sleep to take it: its way back to ring 3
//!   runs the handler (`user::signal`). A signal sent to one thread (`tgkill`) is pending
//!   for that thread alone, which takes it when it does not block it.
//!
//! The calls that send signals are `user::syscall::signal`'s, the console's Ctrl-C is
//! `user::tty`'s.

use super::sighand::{
    CLD_CONTINUED, SIG_DFL, SIG_IGN, SIGCHLD, SIGCONT, SIGSTOP, STOP_SIGNALS, SentTo, SigAction,
    SigInfo, UNBLOCKABLE, any_pending, bit,
};
use crate::sched::{Scheduler, change_then_reschedule, with_tasks};
use crate::task::{Slot, TaskId};
use crate::time::clock;
use alloc::vec::Vec;

/// Signals whose default action is to do nothing: SIGCHLD, SIGCONT, SIGURG, SIGWINCH.
pub fn ignored_by_default(signal: u8) -> bool {
    matches!(signal, 17 | 18 | 23 | 28)
}

/// Whether `action` makes the kernel drop `signal` as it comes.
pub(super) fn ignores(action: SigAction, signal: u8) -> bool {
    action.handler == SIG_IGN || (action.handler == SIG_DFL && ignored_by_default(signal))
}

/// Whether thread `t` takes `signal` when it is pending: it does not block it, or waits for
/// it (`sigtimedwait`), which unblocks it for the wait. Both the running thread's fast path
/// and the choice of a thread to wake ask it, so that they never disagree.
fn takes(t: &crate::task::Task, signal: u8) -> bool {
    (t.blocked_signals & !t.waiting_for) & bit(signal) == 0
}

/// The test the common case gives `queue_unless`: a signal that is not blocked, at its
/// default action or ignored, is not queued there — it is dropped, or its default action is
/// the slow path's to carry out. Only a caught or blocked signal is queued at once.
fn not_queued_at_once(action: SigAction, blocked: bool) -> bool {
    !blocked && (action.handler == SIG_DFL || action.handler == SIG_IGN)
}

/// Sends `signal` to every process: the console's Ctrl-C (`user::tty`), from its interrupt.
/// The terminal's foreground process group is every process, as cfslab has no groups.
pub fn signal_every_process(signal: u8, info: SigInfo) {
    for id in crate::sched::processes_of(None) {
        send(id, signal, info);
    }
}

/// Sends `signal` to task `id`'s process, from task or interrupt context (a wake-up it
/// causes switches at the interrupt's end then); false if it is gone. Signal 0 only checks.
pub fn send(id: TaskId, signal: u8, info: SigInfo) -> bool {
    change_then_reschedule(|s| s.send_signal(id, signal, info))
}

/// Why a process's signal was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendError {
    /// No such task (ESRCH).
    NoSuchProcess,
    /// Another uid's, and the sender is not root (EPERM).
    NotPermitted,
    /// A real-time signal with its own `siginfo`, and the queue is full (EAGAIN).
    QueueFull,
}

/// [`send`] from the running process to task `id`'s process or to that thread alone (`to`),
/// with `info` and the sender's uid, which this fills in: only root may signal another
/// uid's process. One look under the lock, as `kill` to a pid is common (a shell's job
/// control, a signal to oneself).
pub fn send_as(id: TaskId, to: SentTo, signal: u8, info: SigInfo) -> Result<(), SendError> {
    if id == crate::sched::current()
        && let Some(sent) = with_tasks(|s| s.send_to_self(to, signal, info))
    {
        return sent;
    }
    change_then_reschedule(|s| {
        let uid = s.current_task().uid;
        s.send_signal_from(id, to, signal, SigInfo { uid, ..info }, Some(uid))
    })
}

/// [`send_as`] with `info` as the sender made it (`rt_sigqueueinfo`: the caller's uid is
/// not filled in, as Linux keeps the `siginfo` it was given).
pub fn send_info_as(id: TaskId, to: SentTo, signal: u8, info: SigInfo) -> Result<(), SendError> {
    change_then_reschedule(|s| {
        let uid = s.current_task().uid;
        s.send_signal_from(id, to, signal, info, Some(uid))
    })
}

/// [`send`] with what `kill` from the kernel carries: SI_KERNEL.
pub fn deliver(id: TaskId, signal: u8) -> bool {
    let info = SigInfo {
        code: super::sighand::SI_KERNEL,
        ..SigInfo::default()
    };
    send(id, signal, info)
}

impl Scheduler {
    /// [`send_as`]'s common case of a signal to oneself (`raise`, `kill(getpid(), …)`): a
    /// caught or ignored signal that the running thread takes itself, on its way back to
    /// ring 3. It wakes no one, so it needs the task table and the process's signal state
    /// alone, not the runqueues (Linux takes `sighand->siglock` alone too, and a runqueue's
    /// lock only to wake a taker). `None` for every other case, which
    /// [`send_signal_from`](Self::send_signal_from) decides, as if this had not looked.
    fn send_to_self(
        &mut self,
        to: SentTo,
        signal: u8,
        info: SigInfo,
    ) -> Option<Result<(), SendError>> {
        if signal == 0 {
            return None; // only a check, which the slow path makes
        }
        let t = self.current_task();
        let info = SigInfo { uid: t.uid, ..info };
        let b = bit(signal);
        let special = UNBLOCKABLE | STOP_SIGNALS | bit(SIGCONT);
        if b & special != 0 || !takes(t, signal) {
            return None;
        }
        let blocked = t.blocked_signals & b != 0;
        let sighand = &t.group.as_ref()?.sighand;
        let queued = sighand.queue_unless(to, signal, info, |action| {
            not_queued_at_once(action, blocked)
        });
        match queued {
            Err(_) => Some(Err(SendError::QueueFull)),
            Ok((_, true)) => Some(Ok(())),
            Ok((action, false)) => ignores(action, signal).then_some(Ok(())),
        }
    }

    /// [`send`], under the lock.
    pub(in crate::sched) fn send_signal(&mut self, id: TaskId, signal: u8, info: SigInfo) -> bool {
        self.send_signal_from(id, SentTo::Process, signal, info, None)
            .is_ok()
    }

    /// [`send_signal`](Self::send_signal) to task `id`'s process or to that thread alone
    /// (`to`), from a process of uid `sender` (`None`: the kernel), which must be root or
    /// the target's (EPERM).
    fn send_signal_from(
        &mut self,
        id: TaskId,
        to: SentTo,
        signal: u8,
        info: SigInfo,
        sender: Option<u32>,
    ) -> Result<(), SendError> {
        // A signal to oneself (`raise`, `abort`, a shell's `kill $$`) names the running
        // task: no lookup, and it is alive (an exiting task is marked exited and switches
        // away under this lock, so it sends nothing after).
        let slot = if id == crate::sched::current() {
            let slot = self.current_slot();
            debug_assert!(self.alive(slot), "the running task has exited");
            slot
        } else {
            let slot = *self.by_id.get(&id).ok_or(SendError::NoSuchProcess)?;
            if !self.alive(slot) {
                return Err(SendError::NoSuchProcess);
            }
            slot
        };
        let target = self.slots[slot]
            .as_deref()
            .ok_or(SendError::NoSuchProcess)?;
        if sender.is_some_and(|uid| uid != 0 && uid != target.uid) {
            return Err(SendError::NotPermitted);
        }
        if signal == 0 {
            return Ok(());
        }
        // Borrowed for the common case below, cloned only past it: an `Arc` clone and drop
        // is two atomic operations.
        let Some(group) = target.group.as_ref() else {
            // A kernel thread — pid 1, the boot task, among them — has a handler for
            // nothing and ignores every signal, as Linux's kernel threads and its init do
            // (SIGKILL from user space included).
            return Ok(());
        };
        let unblockable = bit(signal) & UNBLOCKABLE != 0;
        let blocked = !unblockable && target.blocked_signals & bit(signal) != 0;
        // The common cases first, in one look at the process's signals: a caught signal,
        // queued for a thread to take; a signal dropped as it comes (SIGCHLD at its default
        // action, at every child's exit).
        let plain = !unblockable && bit(signal) & (STOP_SIGNALS | bit(SIGCONT)) == 0;
        if plain {
            let (action, queued) = group
                .sighand
                .queue_unless(to, signal, info, |action| {
                    not_queued_at_once(action, blocked)
                })
                .map_err(|_| SendError::QueueFull)?;
            if queued {
                self.wake_a_taker(slot, to, signal);
                return Ok(());
            }
            if ignores(action, signal) {
                return Ok(());
            }
        }
        let group = group.clone();
        let action = if unblockable {
            SigAction::default()
        } else {
            group.sighand.action(signal)
        };
        let dropped = ignores(action, signal) && !blocked;
        if dropped && signal != SIGCONT {
            return Ok(());
        }
        let for_a_taker = action.handler != SIG_DFL || blocked || ignores(action, signal);
        if for_a_taker && !dropped && bit(signal) & (STOP_SIGNALS | bit(SIGCONT)) == 0 {
            // The common case of a caught signal: pending, and one thread woken to take it.
            group
                .sighand
                .add_pending(to, signal, info)
                .map_err(|_| SendError::QueueFull)?;
            self.wake_a_taker(slot, to, signal);
            return Ok(());
        }
        let threads: Vec<TaskId> = self.threads_of(&group).map(|t| t.id).collect();
        // SIGCONT continues a stopped process whatever its action, and a stop signal
        // cancels a pending SIGCONT (Linux's `prepare_signal`).
        if signal == SIGCONT {
            group.sighand.discard(STOP_SIGNALS);
            if group.sighand.resume() {
                self.wake_all(&threads);
                self.tell_parent_of_job(&group, CLD_CONTINUED, SIGCONT);
            }
        } else if bit(signal) & STOP_SIGNALS != 0 {
            group.sighand.discard(bit(SIGCONT));
        }
        if dropped {
            return Ok(());
        }
        if for_a_taker {
            group
                .sighand
                .add_pending(to, signal, info)
                .map_err(|_| SendError::QueueFull)?;
            self.wake_a_taker(slot, to, signal);
        } else if bit(signal) & STOP_SIGNALS != 0 {
            // An orphaned group's job control stops are dropped: no one would continue it.
            if signal != SIGSTOP && self.orphaned_pgrp(group.pgid(), None) {
                return Ok(());
            }
            self.stop_process(&group, signal, &threads);
        } else {
            for t in threads {
                self.kill(t, signal);
            }
        }
        Ok(())
    }

    /// Wakes the thread that is to take a pending `signal`: `named` if it does not block
    /// it, else — for a signal sent `to` the process — another thread of its process that
    /// does not, else none (it stays pending until a thread unblocks it; Linux's
    /// `complete_signal`). Only an interruptible sleep ends: a vfork parent waits for its
    /// child whatever comes (but SIGKILL), as Linux's `wait_for_vfork_done`.
    fn wake_a_taker(&mut self, named: Slot, to: SentTo, signal: u8) {
        let taker = match self.slots[named].as_deref() {
            Some(t) if takes(t, signal) => Some((t.id, named)),
            Some(t) if to == SentTo::Process => t.group.as_ref().and_then(|group| {
                self.threads_of(group)
                    .find(|t| takes(t, signal))
                    .map(|t| (t.id, t.slot))
            }),
            _ => None,
        };
        let Some((taker, slot)) = taker else {
            return;
        };
        // The running thread takes it on its way back to ring 3: nothing to wake.
        if slot == self.current_slot() {
            return;
        }
        match self.state(slot) {
            crate::task::State::Sleeping if !self.is_vfork_parent(taker) => {}
            // Running on another CPU, perhaps in ring 3 for a while yet: `wake` kicks it
            // there (Linux's `signal_wake_up`, which kicks a running task).
            crate::task::State::Running => {}
            _ => return,
        }
        self.wake(taker, ::sched::Wakeup::default(), clock::now());
    }

    /// Whether `id` sleeps until a vfork child execs or exits.
    pub(super) fn is_vfork_parent(&self, id: TaskId) -> bool {
        self.slots
            .iter()
            .flatten()
            .any(|t| t.vfork_parent == Some(id))
    }

    /// Whether the running thread has a signal to take: killed, or a pending signal it
    /// does not block (Linux's `signal_pending`). Every interruptible sleep asks it.
    pub(in crate::sched) fn current_signal_pending(&mut self) -> bool {
        let t = self.current_task();
        if t.killed.is_some() {
            return true;
        }
        let blocked = t.blocked_signals & !t.waiting_for;
        t.group
            .as_ref()
            .is_some_and(|g| g.sighand.pending(t.id) & !blocked != 0 || g.sighand.is_stopped())
    }
}

/// [`Scheduler::current_signal_pending`] for the running thread: no lock while no process
/// has a signal pending and no task is marked killed, and the task table alone otherwise
/// (what it reads is the task's and its process's, none of it on a runqueue).
pub fn signal_pending() -> bool {
    if !any_pending() && !crate::sched::kills_pending() {
        return false;
    }
    with_tasks(|s| s.current_signal_pending())
}

/// The running thread's pending signals (blocked ones included): `rt_sigpending`'s answer
/// is these and its mask.
pub fn pending_for_current() -> u64 {
    crate::sched::current_group().map_or(0, |g| g.sighand.pending(crate::sched::current()))
}

/// Sends SIGCHLD for child `child`, which ended with `status` (a wait status), to its parent
/// `parent`, under the lock (`family`'s `notify_parent`).
pub(in crate::sched) fn child_ended(
    s: &mut Scheduler,
    parent: TaskId,
    child_pid: u32,
    uid: u32,
    status: super::exit_status::Exit,
) {
    use super::sighand::{CLD_EXITED, CLD_KILLED};
    let (code, value) = match status {
        super::exit_status::Exit::Status(code) => (CLD_EXITED, i32::from(code)),
        super::exit_status::Exit::Signal(signal) => (CLD_KILLED, i32::from(signal)),
    };
    let info = SigInfo {
        code,
        pid: child_pid,
        uid,
        status: value,
        ..SigInfo::default()
    };
    s.send_signal(parent, SIGCHLD, info);
}

/// The ITIMER_REAL of the process `leader` leads has expired (from the timer interrupt):
/// re-arm it, then send SIGALRM (after the lock: sending takes the scheduler's).
pub fn alarm_expired(leader: TaskId, now: u64) {
    let Some(group) = crate::sched::group_of(leader) else {
        return;
    };
    group.sighand.with_alarm(|timer| timer.expired(now, leader));
    let info = SigInfo {
        code: super::sighand::SI_KERNEL,
        ..SigInfo::default()
    };
    send(leader, super::sighand::SIGALRM, info);
}
