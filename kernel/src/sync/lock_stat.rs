//! How often CPUs waited for each rank of lock, and how long (Linux's `/proc/lock_stat`,
//! CONFIG_LOCK_STAT, reduced to what the slow path knows, and how often each was taken): a
//! lock taken at the first try costs one per-CPU increment (below); one that had to wait
//! adds one contention, the spins it took and the
//! TSC cycles it spent (Linux's `waittime-total`; under `-icount` a cycle is a virtual
//! nanosecond). One CPU never waits, so those counters stay zero with `smp=1`. Every
//! acquisition is counted too, by the CPU that takes the lock in its own state (Linux's
//! `acquisitions`), which says which locks a path takes at all: a wake-up across CPUs of a
//! task allowed one CPU takes two runqueues and not the scheduler's lock.
//! `/proc/lock_stat` shows them: the scheduler's lock, one for every CPU's runqueue, is
//! the one to watch.

use super::Rank;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The ranks, in order (a rank's number is its index).
const RANKS: usize = Rank::ALL.len();

/// Per rank: acquisitions that had to wait, the spins they took, the cycles they spent.
static CONTENTIONS: [AtomicU64; RANKS] = [const { AtomicU64::new(0) }; RANKS];
static SPINS: [AtomicU64; RANKS] = [const { AtomicU64::new(0) }; RANKS];
static WAIT_CYCLES: [AtomicU64; RANKS] = [const { AtomicU64::new(0) }; RANKS];

/// One rank's locks so far, every CPU's together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankCounts {
    pub rank: Rank,
    /// Acquisitions that found the lock taken.
    pub contentions: u64,
    /// Failed tries among them.
    pub spins: u64,
    /// TSC cycles spent waiting in all.
    pub cycles: u64,
    /// Acquisitions in all, waited for or not (counted per CPU, `percpu::locks`).
    pub acquisitions: u64,
}

/// A lock of `rank` was taken after `spins` failed tries over `cycles` TSC cycles.
pub(super) fn record(rank: Rank, spins: u64, cycles: u64) {
    CONTENTIONS[rank as usize].fetch_add(1, Relaxed);
    SPINS[rank as usize].fetch_add(spins, Relaxed);
    WAIT_CYCLES[rank as usize].fetch_add(cycles, Relaxed);
}

/// Each rank that was ever taken: its acquisitions and its waits.
pub fn by_rank() -> impl Iterator<Item = RankCounts> {
    Rank::ALL.into_iter().filter_map(|rank| {
        let i = rank as usize;
        let cpus = (0..bootopts::MAX_CPUS as usize).filter_map(crate::percpu::cpu);
        let acquisitions = cpus.map(|cpu| cpu.acquisitions(i)).sum();
        (acquisitions != 0).then(|| RankCounts {
            rank,
            contentions: CONTENTIONS[i].load(Relaxed),
            spins: SPINS[i].load(Relaxed),
            cycles: WAIT_CYCLES[i].load(Relaxed),
            acquisitions,
        })
    })
}
