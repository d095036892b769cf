//! What each CPU keeps for itself (Linux's per-CPU variables): its index, how deep in
//! interrupt handlers it is, the spin locks it holds, and its tick count. cfslab runs on one CPU today, so
//! there is one [`PerCpu`]; the paths that use it ask [`this_cpu`], so more CPUs change
//! this file, not them.
//!
//! Every field is changed only by its own CPU with interrupts off, so plain loads and stores
//! suffice (no locked instructions): the atomics are there to make the statics `Sync`.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// One CPU's own state.
pub struct PerCpu {
    /// The CPU's number (0 for the boot CPU).
    pub index: usize,
    /// Interrupt handlers entered and not yet left (Linux's hardirq count).
    irq_depth: AtomicU32,
    /// Spin locks held (Linux's preempt count, in part): `schedule()` asserts it is 0.
    locks_held: AtomicU32,
    /// The ranks of the locks held, one bit each: the lock-order checker's record.
    ranks_held: AtomicU64,
    /// Scheduler ticks so far.
    ticks: AtomicU64,
}

static BOOT_CPU: PerCpu = PerCpu {
    index: 0,
    irq_depth: AtomicU32::new(0),
    locks_held: AtomicU32::new(0),
    ranks_held: AtomicU64::new(0),
    ticks: AtomicU64::new(0),
};

/// The running CPU's state.
#[inline(always)]
pub fn this_cpu() -> &'static PerCpu {
    &BOOT_CPU
}

impl PerCpu {
    /// Whether the CPU is in an interrupt handler.
    pub fn in_interrupt(&self) -> bool {
        self.irq_depth.load(Relaxed) != 0
    }

    /// An interrupt handler starts (Linux's `irq_enter`).
    pub fn irq_enter(&self) {
        self.irq_depth
            .store(self.irq_depth.load(Relaxed) + 1, Relaxed);
    }

    /// An interrupt handler's own work is done (`irq_exit`); what follows (a preemption)
    /// runs as the interrupted task.
    pub fn irq_exit(&self) {
        let depth = self.irq_depth.load(Relaxed);
        assert!(depth > 0, "irq_exit without irq_enter");
        self.irq_depth.store(depth - 1, Relaxed);
    }

    /// Scheduler ticks so far.
    pub fn ticks(&self) -> u64 {
        self.ticks.load(Relaxed)
    }

    /// A scheduler tick happens (interrupts are off).
    pub fn count_tick(&self) {
        self.ticks.store(self.ticks.load(Relaxed) + 1, Relaxed);
    }

    /// How many spin locks this CPU holds.
    pub fn locks_held(&self) -> u32 {
        self.locks_held.load(Relaxed)
    }

    /// A lock of `rank` was taken (interrupts are off).
    #[inline(always)]
    pub(crate) fn lock_taken(&self, rank: u32) {
        self.locks_held
            .store(self.locks_held.load(Relaxed) + 1, Relaxed);
        if cfg!(debug_assertions) {
            let held = self.ranks_held.load(Relaxed);
            crate::sync::lock_order::check(held, rank);
            self.ranks_held.store(held | 1 << rank, Relaxed);
        }
    }

    /// A lock of `rank` was released (interrupts are still off).
    #[inline(always)]
    pub(crate) fn lock_released(&self, rank: u32) {
        self.locks_held
            .store(self.locks_held.load(Relaxed) - 1, Relaxed);
        if cfg!(debug_assertions) {
            let held = self.ranks_held.load(Relaxed);
            self.ranks_held.store(held & !(1 << rank), Relaxed);
        }
    }
}
