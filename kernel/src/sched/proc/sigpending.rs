//! The signals sent and not yet taken, with what each carries: Linux's `struct sigpending`
//! (a set of signal numbers and a list of `sigqueue`s). A process has one, shared by its
//! threads, for the signals sent to it (`kill`: Linux's `signal->shared_pending`); a thread
//! has one of its own for the signals sent to it alone (`tgkill`, `tkill`,
//! `rt_tgsigqueueinfo`: Linux's `task->pending`). `sighand` holds both kinds under the
//! process's one lock, as Linux's `siglock` guards both.
//!
//! Standard signals do not queue: a second SIGCHLD while one is pending is lost, as on
//! Linux; the first one's `siginfo` is kept. Real-time signals (32–64) queue: each one sent
//! is taken once, with its own `siginfo`, the lowest number first and one number in the
//! order sent. A process may have [`MAX_QUEUED`] queued at once, its threads' included
//! (Linux's RLIMIT_SIGPENDING, which it counts per user): beyond it a real-time signal
//! sent with its own `siginfo` (`sigqueue`) fails with EAGAIN, and any other is pending
//! without its `siginfo`, as Linux's `__send_signal` does.
//!
//! What it does not hold: what a signal does (its action, `sighand`'s), and which signals a
//! thread blocks (each thread's, in its `Task`).

use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

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

/// How many signals may be queued for a process and its threads at once (see the module's docs): what
/// `getrlimit(RLIMIT_SIGPENDING)` reports. Each costs 40 bytes of the kernel's heap.
pub const MAX_QUEUED: usize = 1024;

/// A signal that could not be queued: the queue is full (EAGAIN).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueFull;

/// A signal's bit in a mask (signal 1 is bit 0).
pub fn bit(signal: u8) -> u64 {
    1 << (signal - 1)
}

/// The signals a fault sends (SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV, SIGSYS): taken
/// before any other pending one (Linux's `SYNCHRONOUS_MASK`).
pub const SYNCHRONOUS: u64 =
    1 << (4 - 1) | 1 << (5 - 1) | 1 << (7 - 1) | 1 << (8 - 1) | 1 << (11 - 1) | 1 << (31 - 1);

/// Pending signals in every process, and stopped processes: while there are none (nearly
/// always), the way back to ring 3 need not look for one, and takes no lock.
pub(super) static PENDING_ANYWHERE: AtomicUsize = AtomicUsize::new(0);

/// Whether any process has a signal pending (if not, the running one has none).
#[inline]
pub fn any_pending() -> bool {
    PENDING_ANYWHERE.load(Ordering::Relaxed) != 0
}

/// One set of pending signals, with the `siginfo` of each (see the module's docs).
#[derive(Default)]
pub struct Pending {
    /// The signals pending.
    set: u64,
    /// What each carries, in the order sent: a standard signal's once, each real-time
    /// signal's sent.
    info: Vec<(u8, SigInfo)>,
}

impl Pending {
    /// The signals pending.
    pub fn set(&self) -> u64 {
        self.set
    }

    /// How many `siginfo`s are queued.
    pub fn queued(&self) -> usize {
        self.info.len()
    }

    /// Makes `signal` pending with `info`: a standard signal once (a second is lost while
    /// the first is pending, its `siginfo` kept), a real-time one once more each time.
    /// Without `room` for one more `siginfo` the signal is pending without it — but a
    /// real-time one sent with a `siginfo` of its own (not `kill`'s SI_USER) is refused.
    pub fn enqueue(&mut self, signal: u8, info: SigInfo, room: bool) -> Result<(), QueueFull> {
        let realtime = signal >= SIGRTMIN;
        if self.set & bit(signal) != 0 && !realtime {
            return Ok(());
        }
        if room {
            self.info.push((signal, info));
        } else if realtime && info.code != SI_USER {
            return Err(QueueFull);
        }
        if self.set & bit(signal) == 0 {
            self.set |= bit(signal);
            PENDING_ANYWHERE.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Takes the next pending signal in `wanted` (Linux's `next_signal`: the lowest, but a
    /// fault's before any other), with its `siginfo`.
    pub fn take(&mut self, wanted: u64) -> Option<(u8, SigInfo)> {
        let mut ready = self.set & wanted;
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
        if signal < SIGRTMIN || !self.info.iter().any(|(n, _)| *n == signal) {
            self.set &= !bit(signal);
            PENDING_ANYWHERE.fetch_sub(1, Ordering::Relaxed);
        }
        Some((signal, info.unwrap_or_default()))
    }
}

impl Drop for Pending {
    /// The signals never taken no longer count as pending anywhere.
    fn drop(&mut self) {
        PENDING_ANYWHERE.fetch_sub(self.set.count_ones() as usize, Ordering::Relaxed);
    }
}
