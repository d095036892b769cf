//! A process's signal actions and the signals pending for it and for each of its threads:
//! Linux's `sighand_struct`, the shared `sigpending` of its `signal_struct` and each
//! thread's own (`sigpending`'s queues). One lock holds them — as Linux's `siglock` guards
//! a thread's pending signals too — ranked inside the scheduler's, so that a signal is sent
//! atomically with finding the thread that takes it and waking it (`signal::send`), even
//! from the scheduler's own paths (a child's exit sends SIGCHLD there).
//!
//! A thread takes the signals sent to it alone first, then its process's (Linux's
//! `dequeue_signal`); a signal sent to one thread (`tgkill`) is never taken by another.
//!
//! What it does not hold: which signals a thread blocks (each thread's, in its `Task`), and
//! what a signal does (`signal`, and `user::signal`, which runs handlers).

use super::alarm::RealTimer;
pub use super::sigpending::{
    CLD_CONTINUED, CLD_DUMPED, CLD_EXITED, CLD_KILLED, CLD_STOPPED, MAX_QUEUED, QueueFull,
    SI_KERNEL, SI_QUEUE, SI_TKILL, SI_USER, SIGRTMIN, SYNCHRONOUS, SigInfo, any_pending, bit,
};
use super::sigpending::{PENDING_ANYWHERE, Pending};
use crate::sync::{Rank, SpinLock};
use crate::task::TaskId;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

/// What a signal does when it arrives: Linux's `struct sigaction` as `rt_sigaction` sees it
/// (handler, flags, restorer, mask).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SigAction {
    pub handler: u64,
    pub flags: u64,
    pub restorer: u64,
    pub mask: u64,
}

/// `SIG_DFL` and `SIG_IGN`, the two handlers that are not code.
pub const SIG_DFL: u64 = 0;
pub const SIG_IGN: u64 = 1;

/// The `sa_flags` cfslab honours (Linux's values).
pub const SA_SIGINFO: u64 = 0x4;
pub const SA_ONSTACK: u64 = 0x0800_0000;
pub const SA_RESTART: u64 = 0x1000_0000;
pub const SA_NODEFER: u64 = 0x4000_0000;
pub const SA_RESETHAND: u64 = 0x8000_0000;
/// The C library's trampoline that calls `rt_sigreturn` is in `sa_restorer`.
pub const SA_RESTORER: u64 = 0x0400_0000;
/// SIGCHLD is not sent for children that stop (only for those that end).
pub const SA_NOCLDSTOP: u64 = 0x1;

/// Linux's signal numbers that the kernel itself names.
pub const SIGHUP: u8 = 1;
pub const SIGINT: u8 = 2;
pub const SIGQUIT: u8 = 3;
pub const SIGTRAP: u8 = 5;
pub const SIGKILL: u8 = 9;
pub const SIGSEGV: u8 = 11;
pub const SIGPIPE: u8 = 13;
pub const SIGALRM: u8 = 14;
pub const SIGCHLD: u8 = 17;
pub const SIGCONT: u8 = 18;
pub const SIGSTOP: u8 = 19;
pub const SIGTSTP: u8 = 20;
pub const SIGTTIN: u8 = 21;
pub const SIGTTOU: u8 = 22;

/// The signals whose default action stops the process: SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU.
pub const STOP_SIGNALS: u64 =
    1 << (SIGSTOP - 1) | 1 << (SIGTSTP - 1) | 1 << (SIGTTIN - 1) | 1 << (SIGTTOU - 1);

/// What can never be blocked or caught.
pub const UNBLOCKABLE: u64 = 1 << (SIGKILL - 1) | 1 << (SIGSTOP - 1);

/// A process's actions and pending signals (see the module's docs).
pub struct SigHand {
    state: SpinLock<State>,
}

struct State {
    /// The signals whose action is not the default (SIG_DFL), with their actions: nearly
    /// always none or a few, so a fork copies and an `execve` resets only those rather than
    /// 64 actions of 32 bytes each (2 KiB, a tenth of a vfork + execve's instructions).
    actions: Vec<(u8, SigAction)>,
    /// Signals sent to the process and not yet taken (`kill`'s).
    shared: Pending,
    /// Signals sent to one thread and not yet taken (`tgkill`'s), for each thread that has
    /// any: nearly always none.
    threads: Vec<(TaskId, Pending)>,
    /// ITIMER_REAL (`alarm`), which sends SIGALRM.
    alarm: RealTimer,
    /// Job control: stopped (by this signal) until SIGCONT.
    stopped: Option<u8>,
    /// What the parent's `wait4` has not heard yet.
    report: Option<JobReport>,
}

/// Whom a signal is sent to: the process, whose threads any may take it (`kill`: Linux's
/// PIDTYPE_TGID), or one thread, which alone may (`tgkill`: PIDTYPE_PID).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SentTo {
    Process,
    Thread(TaskId),
}

/// What a thread is to do next ([`SigHand::next`]).
pub enum Next {
    /// Wait: the process is stopped.
    Stopped,
    /// Take this signal, with its info and action.
    Signal(u8, SigInfo, SigAction),
}

/// A change of a process's job state, for its parent's `wait4` (WUNTRACED, WCONTINUED).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobReport {
    Stopped(u8),
    Continued,
}

impl SigHand {
    /// Every signal at its default action, none pending; or the actions `inherited`.
    pub fn new(actions: Vec<(u8, SigAction)>) -> SigHand {
        SigHand {
            state: SpinLock::new(
                Rank::Signals,
                State {
                    actions,
                    shared: Pending::default(),
                    threads: Vec::new(),
                    alarm: RealTimer::default(),
                    stopped: None,
                    report: None,
                },
            ),
        }
    }

    /// The actions a child forked now inherits (Linux's `copy_sighand`).
    pub fn actions(&self) -> Vec<(u8, SigAction)> {
        self.state.lock().actions.clone()
    }

    /// The action for `signal` (1..=64).
    pub fn action(&self, signal: u8) -> SigAction {
        let state = self.state.lock();
        state
            .actions
            .iter()
            .find(|(n, _)| *n == signal)
            .map_or_else(SigAction::default, |&(_, a)| a)
    }

    /// Sets the action for `signal` (1..=64); returns the old one.
    pub fn set_action(&self, signal: u8, action: SigAction) -> SigAction {
        let mut state = self.state.lock();
        let actions = &mut state.actions;
        match actions.iter().position(|(n, _)| *n == signal) {
            Some(i) if action == SigAction::default() => actions.swap_remove(i).1,
            Some(i) => core::mem::replace(&mut actions[i].1, action),
            None => {
                if action != SigAction::default() {
                    actions.push((signal, action));
                }
                SigAction::default()
            }
        }
    }

    /// After `execve`: handlers are gone (the code is), ignored signals stay ignored.
    pub fn reset_handlers(&self) {
        let mut state = self.state.lock();
        state.actions.retain(|(_, a)| a.handler == SIG_IGN);
    }

    /// Queues `signal` with `info` for `to` unless its action drops it as it comes
    /// (`drops`, given the action): the action, and whether it was queued — one look at the
    /// state for the common case of a caught signal (`signal::send`). Err if the queue is
    /// full.
    pub fn queue_unless(
        &self,
        to: SentTo,
        signal: u8,
        info: SigInfo,
        drops: impl FnOnce(SigAction) -> bool,
    ) -> Result<(SigAction, bool), QueueFull> {
        let mut state = self.state.lock();
        let action = state
            .actions
            .iter()
            .find(|(n, _)| *n == signal)
            .map_or_else(SigAction::default, |&(_, a)| a);
        if drops(action) {
            return Ok((action, false));
        }
        state.enqueue(to, signal, info)?;
        Ok((action, true))
    }

    /// Makes `signal` pending for `to` with `info` (see [`Pending::enqueue`]).
    pub fn add_pending(&self, to: SentTo, signal: u8, info: SigInfo) -> Result<(), QueueFull> {
        self.state.lock().enqueue(to, signal, info)
    }

    /// The signals pending for `thread`: its own and its process's.
    pub fn pending(&self, thread: TaskId) -> u64 {
        let state = self.state.lock();
        state.shared.set() | state.own(thread).map_or(0, Pending::set)
    }

    /// `thread` has ended: the signals sent to it alone are dropped with it (Linux's
    /// `__exit_signal` flushes a thread's own pending ones).
    pub fn thread_ended(&self, thread: TaskId) {
        let gone = {
            let mut state = self.state.lock();
            let i = state.threads.iter().position(|(t, _)| *t == thread);
            i.map(|i| state.threads.swap_remove(i))
        };
        drop(gone);
    }

    /// Threads `a` and `b` swap ids (a thread's `execve` makes it its process's leader):
    /// the signals sent to each alone follow it.
    pub fn swap_threads(&self, a: TaskId, b: TaskId) {
        for (t, _) in &mut self.state.lock().threads {
            if *t == a {
                *t = b;
            } else if *t == b {
                *t = a;
            }
        }
    }

    /// What `thread`, running, is to do next: wait, if the process is
    /// stopped, or take the next pending signal in `set` (`State::take`) for a
    /// handler or its default action — so a handler with `SA_RESETHAND` is reset to the
    /// default as it is taken (Linux resets it in `get_signal`, which runs handlers, and
    /// not in `dequeue_signal`, which `rt_sigtimedwait` uses too).
    pub fn next(&self, set: u64, thread: TaskId) -> Option<Next> {
        // One look under the lock: this runs on every return to ring 3 with a signal
        // pending somewhere.
        let mut state = self.state.lock();
        if state.stopped.is_some() {
            return Some(Next::Stopped);
        }
        state
            .take(set, thread, true)
            .map(|(signal, info, action)| Next::Signal(signal, info, action))
    }

    /// Takes the next signal in `set` pending for `thread`, with its info and its action,
    /// without running it: `rt_sigtimedwait`'s way (an `SA_RESETHAND` action stays).
    pub fn take_one(&self, set: u64, thread: TaskId) -> Option<(u8, SigInfo, SigAction)> {
        self.state.lock().take(set, thread, false)
    }

    /// Runs `f` on the process's ITIMER_REAL.
    pub fn with_alarm<R>(&self, f: impl FnOnce(&mut RealTimer) -> R) -> R {
        f(&mut self.state.lock().alarm)
    }

    /// Stops the process by `signal`; false if it was stopped already. While it is stopped
    /// it counts as a pending signal everywhere (see [`any_pending`]), so that the way back
    /// to ring 3 looks.
    pub fn stop(&self, signal: u8) -> bool {
        let mut state = self.state.lock();
        if state.stopped.is_some() {
            return false;
        }
        state.stopped = Some(signal);
        state.report = Some(JobReport::Stopped(signal));
        PENDING_ANYWHERE.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Continues a stopped process (SIGCONT); false if it was not stopped.
    pub fn resume(&self) -> bool {
        let mut state = self.state.lock();
        if state.stopped.take().is_none() {
            return false;
        }
        state.report = Some(JobReport::Continued);
        PENDING_ANYWHERE.fetch_sub(1, Ordering::Relaxed);
        true
    }

    /// Whether the process is stopped.
    pub fn is_stopped(&self) -> bool {
        self.state.lock().stopped.is_some()
    }

    /// Whether a stop or continue is waiting to be reported.
    pub fn has_report(&self) -> bool {
        self.state.lock().report.is_some()
    }

    /// Takes the job report if it is one the caller wants (`stopped`, `continued`).
    pub fn take_report(&self, stopped: bool, continued: bool) -> Option<JobReport> {
        let mut state = self.state.lock();
        let wanted = match state.report? {
            JobReport::Stopped(_) => stopped,
            JobReport::Continued => continued,
        };
        if wanted { state.report.take() } else { None }
    }

    /// Drops the signals in `set` pending for the process and for each of its threads (an
    /// action changed to ignore them; SIGCONT and the stop signals cancel each other).
    pub fn discard(&self, set: u64) {
        let mut state = self.state.lock();
        while state.shared.take(set).is_some() {}
        for (_, own) in &mut state.threads {
            while own.take(set).is_some() {}
        }
        state.threads.retain(|(_, own)| own.set() != 0);
    }
}

impl State {
    /// The signals sent to `thread` alone, if it has any.
    fn own(&self, thread: TaskId) -> Option<&Pending> {
        self.threads
            .iter()
            .find(|(t, _)| *t == thread)
            .map(|(_, own)| own)
    }

    /// Takes the next signal in `set` pending for `thread` — its own first, then its
    /// process's, as Linux's `dequeue_signal` — with its info and action; `oneshot`: an
    /// `SA_RESETHAND` action is reset as the signal is taken.
    fn take(
        &mut self,
        set: u64,
        thread: TaskId,
        oneshot: bool,
    ) -> Option<(u8, SigInfo, SigAction)> {
        let own = self.threads.iter().position(|(t, _)| *t == thread);
        let from_own = own.and_then(|i| {
            let taken = self.threads[i].1.take(set);
            if self.threads[i].1.set() == 0 {
                self.threads.swap_remove(i);
            }
            taken
        });
        let (signal, info) = from_own.or_else(|| self.shared.take(set))?;
        let position = self.actions.iter().position(|(n, _)| *n == signal);
        let action = position.map_or_else(SigAction::default, |i| self.actions[i].1);
        if oneshot
            && action.flags & SA_RESETHAND != 0
            && let Some(i) = position
        {
            self.actions.swap_remove(i);
        }
        Some((signal, info, action))
    }

    /// Makes `signal` pending for `to` with `info` (see [`Pending::enqueue`]), counting
    /// the `siginfo`s the process and its threads hold against [`MAX_QUEUED`].
    fn enqueue(&mut self, to: SentTo, signal: u8, info: SigInfo) -> Result<(), QueueFull> {
        let queued = self.shared.queued()
            + self
                .threads
                .iter()
                .map(|(_, own)| own.queued())
                .sum::<usize>();
        let room = queued < MAX_QUEUED;
        match to {
            SentTo::Process => self.shared.enqueue(signal, info, room),
            SentTo::Thread(thread) => {
                let i = match self.threads.iter().position(|(t, _)| *t == thread) {
                    Some(i) => i,
                    None => {
                        self.threads.push((thread, Pending::default()));
                        self.threads.len() - 1
                    }
                };
                let sent = self.threads[i].1.enqueue(signal, info, room);
                if self.threads[i].1.set() == 0 {
                    self.threads.swap_remove(i);
                }
                sent
            }
        }
    }
}

impl Drop for SigHand {
    fn drop(&mut self) {
        let mut state = self.state.lock();
        state.alarm.cancel();
        // The pending signals' count goes with their queues (`Pending`'s drop).
        if state.stopped.is_some() {
            PENDING_ANYWHERE.fetch_sub(1, Ordering::Relaxed);
        }
    }
}
