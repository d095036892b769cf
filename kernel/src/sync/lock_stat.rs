//! How often CPUs waited for each rank of lock, and how long (Linux's `/proc/lock_stat`,
//! CONFIG_LOCK_STAT, reduced to what the slow path knows): a lock taken at the first try
//! costs nothing here; one that had to wait adds one contention and the spins it took.
//! One CPU never waits, so the counters stay zero with `smp=1`. `/proc/lock_stat` shows
//! them: the scheduler's lock, one for every CPU's runqueue, is the one to watch.

use super::Rank;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The ranks, in order (a rank's number is its index).
const RANKS: usize = Rank::Leaf as usize + 1;

/// Per rank: acquisitions that had to wait, and the spins they took.
static CONTENTIONS: [AtomicU64; RANKS] = [const { AtomicU64::new(0) }; RANKS];
static SPINS: [AtomicU64; RANKS] = [const { AtomicU64::new(0) }; RANKS];

/// A lock of `rank` was taken after `spins` failed tries.
pub(super) fn record(rank: Rank, spins: u64) {
    CONTENTIONS[rank as usize].fetch_add(1, Relaxed);
    SPINS[rank as usize].fetch_add(spins, Relaxed);
}

/// Each rank that was ever waited for: its contentions and the spins they took.
pub fn contended() -> impl Iterator<Item = (Rank, u64, u64)> {
    Rank::ALL.into_iter().filter_map(|rank| {
        let i = rank as usize;
        let contentions = CONTENTIONS[i].load(Relaxed);
        (contentions != 0).then(|| (rank, contentions, SPINS[i].load(Relaxed)))
    })
}
