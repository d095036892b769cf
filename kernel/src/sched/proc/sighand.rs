//! A process's signal actions and the signals pending for it: Linux's `sighand_struct` and
//! the shared `sigpending` of its `signal_struct`, with the `siginfo` each pending signal
//! carries. One lock holds them, ranked inside the scheduler's, so that a signal is sent
//! atomically with finding the thread that takes it and waking it (`signal::send`), even
//! from the scheduler's own paths (a child's exit sends SIGCHLD there).
//!
//! Standard signals do not queue: a second SIGCHLD while one is pending is lost, as on
//! Linux; the first one's `siginfo` is kept. Real-time signals (32–64) queue: each one sent
//! is taken once, with its own `siginfo`, the lowest number first and one number in the
//! order sent (Linux's `sigqueue` list). A process may have [`MAX_QUEUED`] queued at once
//! (Linux's RLIMIT_SIGPENDING, which it counts per user): beyond it a real-time signal
//! sent with its own `siginfo` (`sigqueue`) fails with EAGAIN, and any other is pending
//! without its `siginfo`, as Linux's `__send_signal` does.
//!
//! What it does not hold: which signals a thread blocks (each thread's, in its `Task`), and
//! what a signal does (`signal`, and `user::signal`, which runs handlers).

use super::alarm::RealTimer;
use crate::sync::{Rank, SpinLock};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

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

/// What a pending signal tells its handler (`SA_SIGINFO`): the parts of Linux's `siginfo_t`
/// that cfslab's senders fill in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SigInfo {
    /// `si_code`: who sent it (SI_USER, SI_KERNEL, SI_TKILL, CLD_EXITED, SEGV_MAPERR, …).
    pub code: i32,
    /// The sender's pid and uid (a `kill`), or the child's (SIGCHLD).
    pub pid: u32,
    pub uid: u32,
    /// SIGCHLD: the exit status or the signal.
    pub status: i32,
    /// A fault's address (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP).
    pub addr: u64,
    /// `si_value`, which `sigqueue` sends (an int or a pointer).
    pub value: u64,
}

/// `si_code` values (Linux's).
pub const SI_USER: i32 = 0;
pub const SI_QUEUE: i32 = -1;
pub const SI_KERNEL: i32 = 0x80;
pub const SI_TKILL: i32 = -6;
pub const CLD_EXITED: i32 = 1;
pub const CLD_KILLED: i32 = 2;
pub const CLD_DUMPED: i32 = 3;
pub const CLD_STOPPED: i32 = 5;
pub const CLD_CONTINUED: i32 = 6;

/// The first real-time signal (Linux's kernel SIGRTMIN; the C libraries keep 32 and 33).
pub const SIGRTMIN: u8 = 32;

/// How many signals may be queued for a process at once (see the module's docs): what
/// `getrlimit(RLIMIT_SIGPENDING)` reports. Each costs 40 bytes of the kernel's heap.
pub const MAX_QUEUED: usize = 1024;

/// A signal that could not be queued: the queue is full (EAGAIN).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueFull;

/// A signal's bit in a mask (signal 1 is bit 0).
pub fn bit(signal: u8) -> u64 {
    1 << (signal - 1)
}

/// The signals whose default action stops the process: SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU.
pub const STOP_SIGNALS: u64 =
    1 << (SIGSTOP - 1) | 1 << (SIGTSTP - 1) | 1 << (SIGTTIN - 1) | 1 << (SIGTTOU - 1);

/// The signals a fault sends (SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV, SIGSYS): taken
/// before any other pending one (Linux's `SYNCHRONOUS_MASK`).
pub const SYNCHRONOUS: u64 =
    1 << (4 - 1) | 1 << (5 - 1) | 1 << (7 - 1) | 1 << (8 - 1) | 1 << (11 - 1) | 1 << (31 - 1);

/// What can never be blocked or caught.
pub const UNBLOCKABLE: u64 = 1 << (SIGKILL - 1) | 1 << (SIGSTOP - 1);

/// Pending signals in every process, and stopped processes: while there are none (nearly
/// always), the way back to ring 3 need not look for one, and takes no lock.
static PENDING_ANYWHERE: AtomicUsize = AtomicUsize::new(0);

/// Whether any process has a signal pending (if not, the running one has none).
#[inline]
pub fn any_pending() -> bool {
    PENDING_ANYWHERE.load(Ordering::Relaxed) != 0
}

/// A process's actions and pending signals (see the module's docs).
pub struct SigHand {
    state: SpinLock<State>,
}

struct State {
    /// The signals whose action is not the default (SIG_DFL), with their actions: nearly
    /// always none or a few, so a fork copies and an `execve` resets only those rather than
    /// 64 actions of 32 bytes each (2 KiB, a tenth of a vfork + execve's instructions).
    actions: Vec<(u8, SigAction)>,
    /// Signals sent and not yet taken, and what each carries.
    pending: u64,
    info: Vec<(u8, SigInfo)>,
    /// ITIMER_REAL (`alarm`), which sends SIGALRM.
    alarm: RealTimer,
    /// Job control: stopped (by this signal) until SIGCONT.
    stopped: Option<u8>,
    /// What the parent's `wait4` has not heard yet.
    report: Option<JobReport>,
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
                    pending: 0,
                    info: Vec::new(),
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

    /// Queues `signal` with `info` unless its action drops it as it comes (`drops`, given
    /// the action): the action, and whether it was queued — one look at the state for the
    /// common case of a caught signal (`signal::send`). Err if the queue is full.
    pub fn queue_unless(
        &self,
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
        state.enqueue(signal, info)?;
        Ok((action, true))
    }

    /// Makes `signal` pending with `info` (see [`State::enqueue`]).
    pub fn add_pending(&self, signal: u8, info: SigInfo) -> Result<(), QueueFull> {
        self.state.lock().enqueue(signal, info)
    }

    /// The pending signals.
    pub fn pending(&self) -> u64 {
        self.state.lock().pending
    }

    /// What the running thread of this process is to do next: wait, if the process is
    /// stopped, or take the next pending signal in `set` (`State::take`) for a
    /// handler or its default action — so a handler with `SA_RESETHAND` is reset to the
    /// default as it is taken (Linux resets it in `get_signal`, which runs handlers, and
    /// not in `dequeue_signal`, which `rt_sigtimedwait` uses too).
    pub fn next(&self, set: u64) -> Option<Next> {
        // One look under the lock: this runs on every return to ring 3 with a signal
        // pending somewhere.
        let mut state = self.state.lock();
        if state.stopped.is_some() {
            return Some(Next::Stopped);
        }
        state
            .take(set, true)
            .map(|(signal, info, action)| Next::Signal(signal, info, action))
    }

    /// Takes the next pending signal in `set`, with its info and its action, without
    /// running it: `rt_sigtimedwait`'s way (an `SA_RESETHAND` action stays).
    pub fn take_one(&self, set: u64) -> Option<(u8, SigInfo, SigAction)> {
        self.state.lock().take(set, false)
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

    /// Drops the pending signals in `set` (an action changed to ignore them).
    pub fn discard(&self, set: u64) {
        while self.take_one(set).is_some() {}
    }
}

impl State {
    /// Takes the next pending signal in `set` (Linux's `next_signal`: the lowest, but a
    /// fault's signal before any other), with its info and action; `oneshot`: an
    /// `SA_RESETHAND` action is reset as the signal is taken.
    fn take(&mut self, set: u64, oneshot: bool) -> Option<(u8, SigInfo, SigAction)> {
        let mut ready = self.pending & set;
        if ready == 0 {
            return None;
        }
        if ready & SYNCHRONOUS != 0 {
            ready &= SYNCHRONOUS;
        }
        let signal = ready.trailing_zeros() as u8 + 1;
        // The first sent of this number (most often the only one queued, and the last);
        // a real-time signal stays pending while more of its number are queued.
        let info = match self.info.iter().position(|(n, _)| *n == signal) {
            Some(i) if i + 1 == self.info.len() => self.info.pop().map(|(_, info)| info),
            Some(i) => Some(self.info.remove(i).1),
            None => None,
        };
        let info = info.unwrap_or_default();
        if signal < SIGRTMIN || !self.info.iter().any(|(n, _)| *n == signal) {
            self.pending &= !bit(signal);
            PENDING_ANYWHERE.fetch_sub(1, Ordering::Relaxed);
        }
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

    /// Makes `signal` pending with `info`: a standard signal once (a second is lost while
    /// the first is pending, its `siginfo` kept), a real-time one once more each time. On a
    /// full queue the signal is pending without its `siginfo` — but a real-time one sent
    /// with a `siginfo` of its own (not `kill`'s SI_USER) is refused (Err).
    fn enqueue(&mut self, signal: u8, info: SigInfo) -> Result<(), QueueFull> {
        let realtime = signal >= SIGRTMIN;
        if self.pending & bit(signal) != 0 && !realtime {
            return Ok(());
        }
        if self.info.len() < MAX_QUEUED {
            self.info.push((signal, info));
        } else if realtime && info.code != SI_USER {
            return Err(QueueFull);
        }
        if self.pending & bit(signal) == 0 {
            self.pending |= bit(signal);
            PENDING_ANYWHERE.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

impl Drop for SigHand {
    fn drop(&mut self) {
        let mut state = self.state.lock();
        state.alarm.cancel();
        let counted = state.pending.count_ones() as usize + usize::from(state.stopped.is_some());
        PENDING_ANYWHERE.fetch_sub(counted, Ordering::Relaxed);
    }
}
