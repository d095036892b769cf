//! What each CPU keeps for itself (Linux's per-CPU variables): its index, which names its
//! runqueue, the task it runs and that task's address space and open files, how deep in
//! interrupt handlers it is, the spin locks it holds, and its tick count.
//!
//! Each CPU has one [`PerCpu`] (the boot CPU's is a static, the others' are made as they
//! start), and its GS base points at it (`arch::cpu_local`). [`this_cpu`] names the running
//! CPU's without knowing which CPU that is: each of its operations is one instruction on
//! `gs:[offset]`, as Linux's `this_cpu_read` and `this_cpu_inc` are. [`cpu`] reads another
//! CPU's (for `/proc/stat`).
//!
//! A low module: the locks (`sync`) and the clock read it, so it names no module above them.
//! What the scheduler keeps here it keeps untyped (a runqueue by its index, the running
//! task's address space and files as bare pointers), and `sched` reads them as what they
//! are. The pointers are here, not in a typed table by CPU up in `sched`, because a
//! GS-relative word is read in one instruction: a task may be preempted between any two,
//! and moved to another CPU by its stopper, so one that first found its CPU's entry and
//! then read it could read another CPU's running task's (a typed table was tried, and a
//! system call on four CPUs found no address space).
//!
//! Every field is changed only by its own CPU, with interrupts off or in one instruction, so
//! no write needs a `lock` prefix; the fields are atomics so that other CPUs may read them.
//! Under `-icount` time is instructions, and a lock and its release count twice: a
//! GS-relative operation costs what an operation on a static did.

pub mod handoff;
mod locks;

use crate::arch::cpu_local::{self, ArchSlots};
use crate::task::{Slot, TaskId};
use core::mem::offset_of;
use core::ptr::null_mut;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering::Relaxed};

/// One CPU's own state. `repr(C)`: the entry code reaches the arch's slots, first, at fixed
/// offsets, and [`ThisCpu`] each field at its offset.
/// A hand-off word that names no slot (the words hold a slot's index: a slot is a type, a
/// word is what one GS-relative instruction moves; `handoff` reads them).
const NO_SLOT: usize = usize::MAX;

#[repr(C)]
pub struct PerCpu {
    /// The words the entry code keeps here (the user's and the kernel's stack pointers at a
    /// system call, the TSS).
    arch: ArchSlots,
    /// The CPU's number (0 for the boot CPU), which is also its runqueue's (`sched`'s
    /// runqueues are indexed by CPU, as Linux's `cpu_rq(cpu)`).
    index: usize,
    /// The running task's id (Linux's `current`), readable without the scheduler's lock:
    /// the switch writes it, under the lock and with interrupts off, as it picks the next
    /// task, and everything that runs afterwards runs as that task — so a read always sees
    /// its own id.
    current: AtomicUsize,
    /// The process the running task is a thread of: its leader's id (its own for a kernel
    /// thread).
    current_process: AtomicUsize,
    /// The running task's slot, by its index (a [`Slot`] is a type; a word is what one
    /// GS-relative instruction reads): a copy of its runqueue's `current` that the switch
    /// keeps, as Linux keeps `current` per CPU beside `rq->curr`, so that the scheduler
    /// finds the running task with one instruction at every system call.
    current_slot: AtomicUsize,
    /// The running task's address space and open files (null for a kernel thread): what its
    /// `Arc`s point at, so that a system call reaches them without the scheduler's lock, as
    /// Linux's `current->mm` and `current->files`. `sched::current` writes them and turns
    /// them into owners, and is the only module that does.
    space: AtomicPtr<()>,
    files: AtomicPtr<()>,
    /// Linux's `preempt_count`'s hardirq part: the interrupt handlers entered and not yet
    /// left (from bit 16). The locks held are `ranks_held`'s bits: together, zero in both
    /// is the one state `schedule()` may run in.
    preempt_count: AtomicU64,
    /// The ranks of the locks held, one bit each: the lock-order checker's record, and the
    /// count of locks held (two locks of one rank are never held together).
    ranks_held: AtomicU64,
    /// The keys of the keyed locks held (the runqueues', by CPU number), one bit each: see
    /// `locks`.
    keys_held: AtomicU64,
    /// Locks taken so far on this CPU, per rank (`/proc/lock_stat`'s acquisitions): one
    /// increment of this CPU's word as each is taken, with interrupts off. A word for each
    /// bit of `ranks_held`, which holds every rank there can be.
    acquisitions: [AtomicU64; RANK_BITS],
    /// Scheduler ticks so far, and those of them that found the CPU in ring 3 (for
    /// `/proc/stat`'s user time).
    ticks: AtomicU64,
    user_ticks: AtomicU64,
    /// What the next task to run here finishes for the task it replaced: a
    /// [`handoff::Handoff`], kept as its two words so that each is one GS-relative instruction.
    handoff_leaving: AtomicPtr<AtomicBool>,
    handoff_exited: AtomicUsize,
    /// How many kernel-stack unmaps this CPU's TLB has caught up with (`mm::stack`).
    seen_stack_unmaps: AtomicU64,
    /// Whether the periodic tick runs on this CPU (1) or is stopped (0): an AP stops it
    /// while it idles (Linux's NO_HZ_IDLE), so an idle CPU costs no instructions.
    tick_on: AtomicU64,
}

impl PerCpu {
    /// CPU `index`'s state before it runs anything: the boot task (id 0) until the first
    /// switch, on the boot CPU; an AP's idle loop until then.
    pub const fn new(index: usize) -> Self {
        Self {
            arch: ArchSlots::new(),
            index,
            current: AtomicUsize::new(0),
            current_process: AtomicUsize::new(0),
            current_slot: AtomicUsize::new(0),
            space: AtomicPtr::new(null_mut()),
            files: AtomicPtr::new(null_mut()),
            preempt_count: AtomicU64::new(0),
            ranks_held: AtomicU64::new(0),
            keys_held: AtomicU64::new(0),
            acquisitions: [const { AtomicU64::new(0) }; RANK_BITS],
            ticks: AtomicU64::new(0),
            user_ticks: AtomicU64::new(0),
            handoff_leaving: AtomicPtr::new(null_mut()),
            handoff_exited: AtomicUsize::new(NO_SLOT),
            tick_on: AtomicU64::new(0),
            seen_stack_unmaps: AtomicU64::new(0),
        }
    }

    /// The CPU's number.
    pub fn index(&self) -> usize {
        self.index
    }

    /// An AP's running task before it schedules: its idle task, known by `slot`.
    pub fn set_idle_slot(&self, slot: Slot) {
        self.current_slot.store(slot.index(), Relaxed);
    }

    /// The slot of the task this CPU runs, as another CPU sees it (a moment's truth: a
    /// waker's hint that the CPU is idle, `sched::wakelist`).
    pub fn current_slot(&self) -> Slot {
        Slot::new(self.current_slot.load(Relaxed))
    }

    /// Scheduler ticks so far on this CPU.
    pub fn ticks(&self) -> u64 {
        self.ticks.load(Relaxed)
    }

    /// Locks of rank `rank` taken on this CPU so far (0 for a rank there cannot be).
    pub fn acquisitions(&self, rank: usize) -> u64 {
        self.acquisitions.get(rank).map_or(0, |n| n.load(Relaxed))
    }

    /// Ticks that found this CPU in ring 3 so far.
    pub fn user_ticks(&self) -> u64 {
        self.user_ticks.load(Relaxed)
    }

    /// Whether this CPU's periodic tick runs (an idle AP stops it).
    pub fn tick_on(&self) -> bool {
        self.tick_on.load(Relaxed) != 0
    }
}

static BOOT_CPU: PerCpu = PerCpu::new(0);

/// Every CPU's state, by index: set as each starts.
static CPUS: [AtomicPtr<PerCpu>; bootopts::MAX_CPUS as usize] =
    [const { AtomicPtr::new(null_mut()) }; bootopts::MAX_CPUS as usize];

/// Makes `area` the running CPU's state (its GS base) and lists it as CPU `area.index`.
///
/// # Safety
/// Interrupts off; `area` is no other CPU's.
unsafe fn install(area: &'static PerCpu) {
    CPUS[area.index].store(core::ptr::from_ref(area).cast_mut(), Relaxed);
    // SAFETY: `area` starts with its ArchSlots (repr(C)); the caller's promises are
    // `cpu_local::install`'s.
    unsafe { cpu_local::install(&area.arch) };
}

/// The boot CPU's state becomes its own: the first thing the kernel does, since the locks
/// (and so the console) count themselves in it.
pub fn init_boot_cpu() {
    // SAFETY: at boot, one CPU, interrupts off.
    unsafe { install(&BOOT_CPU) }
}

/// A new state for CPU `index`, an AP about to start: made by the boot CPU, since an AP
/// cannot allocate (the allocator's lock counts itself in the running CPU's state) before
/// it has one.
pub fn new_area(index: usize) -> &'static PerCpu {
    alloc::boxed::Box::leak(alloc::boxed::Box::new(PerCpu::new(index)))
}

/// The AP that runs this takes `area` ([`new_area`]) as its state: its first act in the
/// kernel.
///
/// # Safety
/// Interrupts off; `area` was made for this AP and no other CPU has taken it.
pub unsafe fn init_ap(area: &'static PerCpu) {
    // SAFETY: the caller's promises are `install`'s.
    unsafe { install(area) }
}

/// CPU `index`'s state, if it has started.
pub fn cpu(index: usize) -> Option<&'static PerCpu> {
    let area = CPUS.get(index)?.load(Relaxed);
    // SAFETY: only `install` stores here, a `&'static PerCpu`.
    (!area.is_null()).then(|| unsafe { &*area })
}

/// Ticks taken so far by every started CPU but the boot CPU: what the APs cost a run that
/// leaves them idle (halted with the tick stopped, they take none).
pub fn ap_ticks() -> u64 {
    (1..CPUS.len()).filter_map(cpu).map(PerCpu::ticks).sum()
}

/// The running CPU's state: a handle whose every operation is one GS-relative instruction.
#[inline(always)]
pub fn this_cpu() -> ThisCpu {
    ThisCpu(())
}

/// The running CPU, whichever it is (see the module's docs).
pub struct ThisCpu(());

/// One interrupt handler in [`PerCpu::preempt_count`] (Linux's HARDIRQ_OFFSET).
const HARDIRQ_ONE: u64 = 1 << 16;

/// The offsets of [`PerCpu`]'s fields, for the GS-relative operations.
const INDEX: usize = offset_of!(PerCpu, index);
const CURRENT: usize = offset_of!(PerCpu, current);
const CURRENT_PROCESS: usize = offset_of!(PerCpu, current_process);
const CURRENT_SLOT: usize = offset_of!(PerCpu, current_slot);
const SPACE: usize = offset_of!(PerCpu, space);
const FILES: usize = offset_of!(PerCpu, files);
const PREEMPT_COUNT: usize = offset_of!(PerCpu, preempt_count);
const RANKS_HELD: usize = offset_of!(PerCpu, ranks_held);
const KEYS_HELD: usize = offset_of!(PerCpu, keys_held);
const ACQUISITIONS: usize = offset_of!(PerCpu, acquisitions);
/// How many ranks `ranks_held` can hold, one bit each.
const RANK_BITS: usize = u64::BITS as usize;
const TICKS: usize = offset_of!(PerCpu, ticks);
const USER_TICKS: usize = offset_of!(PerCpu, user_ticks);
const HANDOFF_LEAVING: usize = offset_of!(PerCpu, handoff_leaving);
const HANDOFF_EXITED: usize = offset_of!(PerCpu, handoff_exited);
const TICK_ON: usize = offset_of!(PerCpu, tick_on);
const SEEN_STACK_UNMAPS: usize = offset_of!(PerCpu, seen_stack_unmaps);

impl ThisCpu {
    /// The running CPU's state, as a reference (for reading several fields at leisure).
    pub fn area(&self) -> &'static PerCpu {
        // SAFETY: `gs:[0]` is the address of this CPU's installed, 'static PerCpu.
        unsafe { &*(cpu_local::this() as *const PerCpu) }
    }

    /// The CPU's number.
    #[inline(always)]
    pub fn index(&self) -> usize {
        cpu_local::read_stable::<INDEX>() as usize
    }

    /// The running task's id.
    #[inline(always)]
    pub fn current(&self) -> TaskId {
        TaskId::from_number(cpu_local::read::<CURRENT>() as usize)
    }

    /// The running task's slot.
    #[inline(always)]
    pub fn current_slot(&self) -> Slot {
        Slot::new(cpu_local::read::<CURRENT_SLOT>() as usize)
    }

    /// The switch chose the task in `slot`.
    #[inline(always)]
    pub fn set_current_slot(&self, slot: Slot) {
        cpu_local::write::<CURRENT_SLOT>(slot.index() as u64);
    }

    /// The running task's process: its leader's id.
    pub fn current_process(&self) -> TaskId {
        TaskId::from_number(cpu_local::read::<CURRENT_PROCESS>() as usize)
    }

    /// The switch chose task `id`, a thread of the process led by `process`.
    #[inline(always)]
    pub fn set_current(&self, id: TaskId, process: TaskId) {
        cpu_local::write::<CURRENT>(id.number() as u64);
        cpu_local::write::<CURRENT_PROCESS>(process.number() as u64);
    }

    /// The running task's address space, as the pointer of its `Arc`.
    #[inline(always)]
    pub fn space(&self) -> *const () {
        cpu_local::read::<SPACE>() as *const ()
    }

    /// The running task's open files, as the pointer of its `Arc`.
    #[inline(always)]
    pub fn files(&self) -> *const () {
        cpu_local::read::<FILES>() as *const ()
    }

    /// The running task's address space is now `space` (the switch, `execve`, exit).
    #[inline(always)]
    pub fn set_space(&self, space: *const ()) {
        cpu_local::write::<SPACE>(space as u64);
    }

    /// The running task's open files are now `files` (the switch, exit).
    #[inline(always)]
    pub fn set_files(&self, files: *const ()) {
        cpu_local::write::<FILES>(files as u64);
    }

    /// Whether the CPU is in an interrupt handler.
    pub fn in_interrupt(&self) -> bool {
        cpu_local::read::<PREEMPT_COUNT>() >= HARDIRQ_ONE
    }

    /// An interrupt handler starts (Linux's `irq_enter`).
    pub fn irq_enter(&self) {
        cpu_local::add::<PREEMPT_COUNT>(HARDIRQ_ONE);
    }

    /// An interrupt handler's own work is done (`irq_exit`); what follows (a preemption)
    /// runs as the interrupted task.
    pub fn irq_exit(&self) {
        assert!(self.in_interrupt(), "irq_exit without irq_enter");
        cpu_local::add::<PREEMPT_COUNT>(HARDIRQ_ONE.wrapping_neg());
    }

    /// Scheduler ticks so far.
    pub fn ticks(&self) -> u64 {
        cpu_local::read::<TICKS>()
    }

    /// A scheduler tick happens (interrupts are off).
    pub fn count_tick(&self) {
        cpu_local::increment::<TICKS>();
    }

    /// A scheduler tick found the CPU in ring 3.
    pub fn count_user_tick(&self) {
        cpu_local::increment::<USER_TICKS>();
    }

    /// How many kernel-stack unmaps this CPU's TLB has caught up with.
    #[inline(always)]
    pub fn seen_stack_unmaps(&self) -> u64 {
        cpu_local::read::<SEEN_STACK_UNMAPS>()
    }

    /// This CPU's TLB has caught up with `unmaps` kernel-stack unmaps.
    pub fn set_seen_stack_unmaps(&self, unmaps: u64) {
        cpu_local::write::<SEEN_STACK_UNMAPS>(unmaps);
    }

    /// Whether the periodic tick runs on this CPU.
    #[inline(always)]
    pub fn tick_on(&self) -> bool {
        cpu_local::read::<TICK_ON>() != 0
    }

    /// The periodic tick starts (`true`) or stops on this CPU.
    pub fn set_tick_on(&self, on: bool) {
        cpu_local::write::<TICK_ON>(u64::from(on));
    }
}
