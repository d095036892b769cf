//! The boot's proof that the CPUs exclude each other: with more than one CPU, every CPU at
//! once adds to one counter under a spin lock, with a read and a separate write (so that
//! two CPUs inside the lock together would lose an update), and allocates and frees under
//! the heap's lock. The count must come out exact.
//!
//! Under `-icount` QEMU runs the vCPUs in turn, each for a slice of the time to the next
//! timer, so the loop is made long enough (several ticks) for the CPUs' turns to cut it
//! many times, and a CPU whose turn ends inside the lock leaves the others spinning on it.

use super::ipi;
use crate::sync::{Rank, SpinLock};
use alloc::boxed::Box;
use alloc::vec::Vec;

/// Rounds per CPU: about 10 ms of virtual time each at `-icount shift=2`, several ticks.
const ROUNDS: u64 = 20_000;
/// How long the boot CPU waits for the others to finish (virtual time).
const FINISH_WAIT_NS: u64 = 2_000_000_000;

/// The counter: outermost, as tests' locks are.
static COUNTER: SpinLock<u64> = SpinLock::new(Rank::TestOutermost, 0);

/// One CPU's share: ROUNDS additions, each a read, an allocation and a write.
fn add_rounds() -> u64 {
    for _ in 0..ROUNDS {
        let mut counter = COUNTER.lock();
        let seen = core::hint::black_box(*counter);
        let boxed = Box::new(seen);
        *counter = *boxed + 1;
    }
    ROUNDS
}

/// What the check found: the count every CPU's rounds should make, and the count made.
pub struct Contention {
    pub expected: u64,
    pub counted: u64,
}

/// Runs the rounds on `cpus` (the online ones, by number; CPU 0 is the caller) together.
pub fn check(cpus: &[usize]) -> Contention {
    let others: Vec<usize> = cpus.iter().copied().filter(|&c| c != 0).collect();
    let started: Vec<usize> = others
        .iter()
        .copied()
        .filter(|&cpu| ipi::start_on(cpu, add_rounds).is_some())
        .collect();
    let mut expected = add_rounds();
    for cpu in started {
        expected += ipi::answer_of(cpu, FINISH_WAIT_NS).unwrap_or(0);
    }
    Contention {
        expected,
        counted: *COUNTER.lock(),
    }
}
