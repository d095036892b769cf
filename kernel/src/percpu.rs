//! What each CPU keeps for itself (Linux's per-CPU variables): its index, which names its
//! runqueue, the task it runs and that task's address space and open files, how deep in
//! interrupt handlers it is, the spin locks it holds, and its tick count. cfslab runs on one
//! CPU today, so there is one [`PerCpu`]; the paths that use it ask [`this_cpu`], so more
//! CPUs change this file, not them.
//!
//! A low module: the locks (`sync`) and the clock read it, so it names no module above them.
//! What the scheduler keeps here it keeps untyped (a runqueue by its index, the running
//! task's address space and files as bare pointers), and `sched` reads them as what they
//! are.
//!
//! Every field is changed only by its own CPU with interrupts off; the atomics are there to
//! make the statics `Sync`. Counters use one read-modify-write instruction each (`lock
//! inc`): under `-icount` time is instructions, and a lock and its release count twice.

use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};

/// One CPU's own state.
pub struct PerCpu {
    /// The CPU's number (0 for the boot CPU), which is also its runqueue's (`sched`'s
    /// runqueues are indexed by CPU, as Linux's `cpu_rq(cpu)`).
    pub index: usize,
    /// The running task's id (Linux's `current`), readable without the scheduler's lock:
    /// the switch writes it, under the lock and with interrupts off, as it picks the next
    /// task, and everything that runs afterwards runs as that task — so a read always sees
    /// its own id.
    current: AtomicUsize,
    /// The process the running task is a thread of: its leader's id (its own for a kernel
    /// thread).
    current_process: AtomicUsize,
    /// The running task's address space and open files (null for a kernel thread): what its
    /// `Arc`s point at, so that a system call reaches them without the scheduler's lock, as
    /// Linux's `current->mm` and `current->files`. `sched::current` writes them and turns
    /// them into owners, and is the only module that does.
    space: AtomicPtr<()>,
    files: AtomicPtr<()>,
    /// Linux's `preempt_count`, in one word: the spin locks held (low 16 bits) and the
    /// interrupt handlers entered and not yet left (the hardirq count, from bit 16). Zero
    /// is the one state `schedule()` may run in, checked with one comparison.
    preempt_count: AtomicU32,
    /// The ranks of the locks held, one bit each: the lock-order checker's record.
    ranks_held: AtomicU64,
    /// Scheduler ticks so far, and those of them that found the CPU in ring 3 (for
    /// `/proc/stat`'s user time).
    ticks: AtomicU64,
    user_ticks: AtomicU64,
}

static BOOT_CPU: PerCpu = PerCpu {
    index: 0,
    // The boot task (id 0) runs until the first switch.
    current: AtomicUsize::new(0),
    current_process: AtomicUsize::new(0),
    space: AtomicPtr::new(null_mut()),
    files: AtomicPtr::new(null_mut()),
    preempt_count: AtomicU32::new(0),
    ranks_held: AtomicU64::new(0),
    ticks: AtomicU64::new(0),
    user_ticks: AtomicU64::new(0),
};

/// The running CPU's state.
#[inline(always)]
pub fn this_cpu() -> &'static PerCpu {
    &BOOT_CPU
}

/// One interrupt handler in [`PerCpu::preempt_count`] (Linux's HARDIRQ_OFFSET).
const HARDIRQ_ONE: u32 = 1 << 16;

impl PerCpu {
    /// The running task's id.
    #[inline(always)]
    pub fn current(&self) -> usize {
        self.current.load(Relaxed)
    }

    /// The running task's process: its leader's id.
    pub fn current_process(&self) -> usize {
        self.current_process.load(Relaxed)
    }

    /// The switch chose task `id`, a thread of the process led by `process`.
    #[inline(always)]
    pub fn set_current(&self, id: usize, process: usize) {
        self.current.store(id, Relaxed);
        self.current_process.store(process, Relaxed);
    }

    /// The running task's address space and files, as the pointers of its `Arc`s.
    #[inline(always)]
    pub fn process_parts(&self) -> (*const (), *const ()) {
        (self.space.load(Relaxed), self.files.load(Relaxed))
    }

    /// The running task's address space is now `space` (the switch, `execve`, exit).
    #[inline(always)]
    pub fn set_space(&self, space: *const ()) {
        self.space.store(space.cast_mut(), Relaxed);
    }

    /// The running task's open files are now `files` (the switch, exit).
    #[inline(always)]
    pub fn set_files(&self, files: *const ()) {
        self.files.store(files.cast_mut(), Relaxed);
    }

    /// Whether the CPU is in an interrupt handler.
    pub fn in_interrupt(&self) -> bool {
        self.preempt_count.load(Relaxed) >= HARDIRQ_ONE
    }

    /// An interrupt handler starts (Linux's `irq_enter`).
    pub fn irq_enter(&self) {
        self.preempt_count.fetch_add(HARDIRQ_ONE, Relaxed);
    }

    /// An interrupt handler's own work is done (`irq_exit`); what follows (a preemption)
    /// runs as the interrupted task.
    pub fn irq_exit(&self) {
        let count = self.preempt_count.fetch_sub(HARDIRQ_ONE, Relaxed);
        assert!(count >= HARDIRQ_ONE, "irq_exit without irq_enter");
    }

    /// Scheduler ticks so far.
    pub fn ticks(&self) -> u64 {
        self.ticks.load(Relaxed)
    }

    /// A scheduler tick happens (interrupts are off).
    pub fn count_tick(&self) {
        self.ticks.fetch_add(1, Relaxed);
    }

    /// Ticks that found the CPU in ring 3 so far.
    pub fn user_ticks(&self) -> u64 {
        self.user_ticks.load(Relaxed)
    }

    /// A scheduler tick found the CPU in ring 3.
    pub fn count_user_tick(&self) {
        self.user_ticks.fetch_add(1, Relaxed);
    }

    /// The preempt count: locks held, and interrupt handlers entered (from bit 16).
    #[inline(always)]
    pub fn preempt_count(&self) -> u32 {
        self.preempt_count.load(Relaxed)
    }

    /// How many spin locks this CPU holds.
    pub fn locks_held(&self) -> u32 {
        self.preempt_count.load(Relaxed) % HARDIRQ_ONE
    }

    /// Whether the CPU holds no spin lock and is in no interrupt handler: where a switch may
    /// happen (Linux's `preemptible()`, with interrupts off asked apart).
    #[inline(always)]
    pub fn preemptible(&self) -> bool {
        self.preempt_count.load(Relaxed) == 0
    }

    /// A lock of `rank` was taken (interrupts are off).
    #[inline(always)]
    pub(crate) fn lock_taken(&self, rank: u32) {
        self.preempt_count.fetch_add(1, Relaxed);
        if cfg!(debug_assertions) {
            let held = self.ranks_held.load(Relaxed);
            crate::sync::lock_order::check(held, rank);
            self.ranks_held.store(held | 1 << rank, Relaxed);
        }
    }

    /// A lock of `rank` was released (interrupts are still off).
    #[inline(always)]
    pub(crate) fn lock_released(&self, rank: u32) {
        self.preempt_count.fetch_sub(1, Relaxed);
        if cfg!(debug_assertions) {
            let held = self.ranks_held.load(Relaxed);
            self.ranks_held.store(held & !(1 << rank), Relaxed);
        }
    }
}
