//! The locks this CPU holds, as the lock-order checker counts them (`sync::lock_order`):
//! one bit per rank held in `ranks_held` — one read, one test and one write at each lock —
//! and, for the one rank whose locks may be held together (the runqueues', taken in CPU
//! order as Linux's `double_rq_lock` takes them), one bit per key held in `keys_held`.
//! Together they are also the count of locks held, which `schedule()` asserts is zero.

use super::{ACQUISITIONS, KEYS_HELD, PREEMPT_COUNT, RANK_BITS, RANKS_HELD, ThisCpu};
use crate::arch::cpu_local;

impl ThisCpu {
    /// How many spin locks this CPU holds (a keyed rank's bit counts once, its keys each).
    pub fn locks_held(&self) -> u64 {
        let (ranks, keys) = (
            cpu_local::read::<RANKS_HELD>(),
            cpu_local::read::<KEYS_HELD>(),
        );
        u64::from(ranks.count_ones() + keys.count_ones()) - u64::from(keys != 0)
    }

    /// Whether the CPU holds no spin lock and is in no interrupt handler: where a switch may
    /// happen (Linux's `preemptible()`, with interrupts off asked apart).
    #[inline(always)]
    pub fn preemptible(&self) -> bool {
        cpu_local::read::<PREEMPT_COUNT>() | cpu_local::read::<RANKS_HELD>() == 0
    }

    /// A lock of `rank` is being taken (interrupts are off): checked against the ranks
    /// held, in every build (a read, a mask test and a write of this CPU's word, which is
    /// also the count of locks held).
    #[inline(always)]
    pub(crate) fn lock_taken(&self, rank: u32) {
        let held = cpu_local::read::<RANKS_HELD>();
        if crate::sync::lock_order::violated(held, rank) {
            crate::sync::lock_order::violation(held, rank, self.index());
        }
        cpu_local::write::<RANKS_HELD>(held | 1 << rank);
        Self::count_acquisition(rank);
    }

    /// One more lock of `rank` taken here (`/proc/lock_stat`): one increment of this CPU's
    /// word, with interrupts off.
    #[inline(always)]
    fn count_acquisition(rank: u32) {
        cpu_local::increment_nth::<ACQUISITIONS, RANK_BITS>(rank as usize);
    }

    /// A lock of `rank` was taken by a try, which never waits and so is not held to the
    /// order (interrupts are off; no lock of its rank is held).
    #[inline(always)]
    pub(crate) fn lock_tried(&self, rank: u32) {
        let held = cpu_local::read::<RANKS_HELD>();
        cpu_local::write::<RANKS_HELD>(held | 1 << rank);
        Self::count_acquisition(rank);
    }

    /// Whether a lock of `rank` is held.
    #[inline(always)]
    pub(crate) fn holds_rank(&self, rank: u32) -> bool {
        cpu_local::read::<RANKS_HELD>() & 1 << rank != 0
    }

    /// A lock of `rank` was released (interrupts are still off).
    #[inline(always)]
    pub(crate) fn lock_released(&self, rank: u32) {
        cpu_local::clear_bit::<RANKS_HELD>(rank);
    }

    /// Whether the one lock this CPU holds is of `rank`, outside any interrupt handler.
    #[inline(always)]
    pub fn holds_only(&self, rank: u32) -> bool {
        cpu_local::read::<RANKS_HELD>() == 1 << rank && cpu_local::read::<PREEMPT_COUNT>() == 0
    }

    /// A lock of `rank` keyed `key` is being taken (interrupts are off): locks of one rank
    /// may be held together if each is taken with a key above every key held (runqueues in
    /// CPU order). Checked in every build, as [`ThisCpu::lock_taken`] is.
    #[inline(always)]
    pub(crate) fn keyed_lock_taken(&self, rank: u32, key: u32) {
        let (held, keys) = (
            cpu_local::read::<RANKS_HELD>(),
            cpu_local::read::<KEYS_HELD>(),
        );
        // Nothing held of its rank or above: the common case, one test. Else its rank may
        // be held only through keys below this one, and nothing above it.
        if held >> rank != 0 {
            let plain_same_rank = keys == 0;
            if plain_same_rank || held >> rank >> 1 != 0 || keys >> key != 0 {
                crate::sync::lock_order::keyed_violation(held, keys, rank, key, self.index());
            }
        }
        cpu_local::write::<RANKS_HELD>(held | 1 << rank);
        cpu_local::write::<KEYS_HELD>(keys | 1 << key);
        Self::count_acquisition(rank);
    }

    /// A lock of `rank` keyed `key` was released: its rank stays held while other keys are.
    #[inline(always)]
    pub(crate) fn keyed_lock_released(&self, rank: u32, key: u32) {
        let keys = cpu_local::read::<KEYS_HELD>() & !(1 << key);
        cpu_local::write::<KEYS_HELD>(keys);
        if keys == 0 {
            cpu_local::clear_bit::<RANKS_HELD>(rank);
        }
    }

    /// Whether the one lock this CPU holds is the lock of `rank` keyed `key`, outside any
    /// interrupt handler: three compares, where counting the locks held would take a
    /// software popcount (the kernel's target has no `popcnt`).
    #[inline(always)]
    pub fn holds_only_key(&self, rank: u32, key: u32) -> bool {
        cpu_local::read::<RANKS_HELD>() == 1 << rank
            && cpu_local::read::<KEYS_HELD>() == 1 << key
            && cpu_local::read::<PREEMPT_COUNT>() == 0
    }

    /// Whether this CPU holds the lock of `rank` keyed `key` (a runqueue's, by CPU).
    #[inline(always)]
    pub fn holds_key(&self, rank: u32, key: u32) -> bool {
        self.holds_rank(rank) && cpu_local::read::<KEYS_HELD>() & 1 << key != 0
    }
}
