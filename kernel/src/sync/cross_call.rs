//! The mailboxes through which one CPU has another run a function (the data half of
//! Linux's `smp_call_function_single`; `cpus::ipi` sends the interrupt that says one is
//! waiting): one per CPU, one caller at a time, and the answer the function returned.
//!
//! Here, below the locks, because every CPU that waits serves its own mailbox while it
//! waits — for a lock ([`super::SpinLock`]), for an answer, for a mailbox — with
//! interrupts off. A CPU that sends a TLB shootdown while holding a lock would otherwise
//! wait for ever for a CPU that spins on that lock with its interrupts off. The functions
//! sent this way must be safe to run at any of those points: they take no lock (reading a
//! register, flushing the TLB).

use crate::percpu::this_cpu;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// One CPU's mailbox.
struct Mailbox {
    /// Taken by one caller at a time, from sending to reading the answer.
    busy: AtomicBool,
    /// The function left to run (0: none).
    function: AtomicUsize,
    answer: AtomicU64,
    answered: AtomicBool,
}

static MAILBOXES: [Mailbox; bootopts::MAX_CPUS as usize] = [const {
    Mailbox {
        busy: AtomicBool::new(false),
        function: AtomicUsize::new(0),
        answer: AtomicU64::new(0),
        answered: AtomicBool::new(false),
    }
}; bootopts::MAX_CPUS as usize];

/// Takes CPU `cpu`'s mailbox (serving this CPU's own while it waits for it) and leaves
/// `function` in it; the caller then sends the interrupt, and waits with [`answer_of`].
pub fn post(cpu: usize, function: fn() -> u64) {
    let mailbox = &MAILBOXES[cpu];
    while mailbox
        .busy
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        serve();
        core::hint::spin_loop();
    }
    mailbox.answered.store(false, Ordering::Relaxed);
    mailbox.function.store(function as usize, Ordering::Release);
}

/// Waits until `give_up()` for CPU `cpu`'s answer to what [`post`] left it, serving this
/// CPU's mailbox meanwhile, and frees the mailbox; `None` if it did not answer, and the
/// function is withdrawn.
pub fn answer_of(cpu: usize, give_up: impl Fn() -> bool) -> Option<u64> {
    let mailbox = &MAILBOXES[cpu];
    let answer = loop {
        if mailbox.answered.load(Ordering::Acquire) {
            break Some(mailbox.answer.load(Ordering::Relaxed));
        }
        if give_up() {
            mailbox.function.store(0, Ordering::Relaxed);
            break None;
        }
        serve();
        core::hint::spin_loop();
    };
    mailbox.busy.store(false, Ordering::Release);
    answer
}

/// Runs the function left for this CPU, if any (the call-function IPI's work, and what
/// every waiting CPU does between two looks).
#[inline]
pub fn serve() {
    let mailbox = &MAILBOXES[this_cpu().index()];
    if mailbox.function.load(Ordering::Relaxed) == 0 {
        return;
    }
    let function = mailbox.function.swap(0, Ordering::Acquire);
    if function != 0 {
        // SAFETY: only `post` stores here, and it stores a `fn() -> u64`.
        let function: fn() -> u64 = unsafe { core::mem::transmute(function) };
        mailbox.answer.store(function(), Ordering::Relaxed);
        mailbox.answered.store(true, Ordering::Release);
    }
}
