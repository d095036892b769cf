//! The lock order. Every [`SpinLock`](super::SpinLock) has a rank; a CPU may take a lock only
//! if every lock it already holds has a lower rank. Two CPUs that both follow one order can
//! never each hold what the other waits for, so the order rules out deadlock; holding one
//! lock of a rank and taking another of the same rank breaks it too (two pipes, two tables:
//! which first?).
//!
//! Every build checks the rule at every acquisition that may wait — the optimised one too,
//! since the check is one shift of a per-CPU word of held ranks — and panics on a
//! violation, naming both locks by rank and the CPU (Linux's lockdep, reduced to a fixed
//! order). A `try_lock` never waits, so it cannot close a cycle of waits and is exempt.
//!
//! The order, outermost first (docs/architecture.md, "Locks and interrupts"):

/// A lock's place in the order: a lock may be taken while only lower ranks are held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub enum Rank {
    /// Tests: a lock outside every other.
    TestOutermost = 0,
    /// The lab's measurement window (`lab::progress`): its timer is armed under it.
    LabWindow,
    /// Futex waiters (`sched::futex`).
    Futex,
    /// A process's file-descriptor table (`user::files`).
    FdTable,
    /// A process's shared state (`sched::proc::thread_group`).
    ThreadGroup,
    /// An open file's position and flags (`user::fs::open_file`).
    OpenFile,
    /// A pipe's buffer (`user::files`).
    Pipe,
    /// The console's line discipline (`user::tty`).
    Terminal,
    /// A wait queue's list of sleepers (`sched::waitqueue`).
    WaitQueue,
    /// The scheduler's state (`sched`): wake-ups happen under the locks above.
    Sched,
    /// A CPU's runqueue's own lock, keyed by CPU, several taken lowest CPU first
    /// (`sync::KeyedLock`), alone or inside `Sched` (`sched::runqueue::locks`);
    /// `kernel/tests/lock_order_keys.rs` holds the keyed order to it.
    Runqueue,
    /// A CPU's list of wake-ups other CPUs left it (`sched::wakelist`): a waker takes it
    /// holding no runqueue, the CPU itself lets it go before it takes its runqueue's, and
    /// hotplug reopens it under the scheduler's; nothing is taken under it.
    WakeList,
    /// The family tree (`sched::proc::family`): parents, children, zombies. Inside
    /// `Sched` and the runqueues, which a child's end holds; alone for a reap. Nothing
    /// is woken under it.
    Family,
    /// The trace while tracing (`sched::tracing`): an event is published under a runqueue's
    /// lock or the scheduler's.
    Trace,
    /// A process's signal actions and pending signals (`sched::proc::sighand`): a signal
    /// is sent under `Sched`, and an alarm's timer armed under it.
    Signals,
    /// The high-resolution timers (`time::hrtimer`): a sleep arms its timer under `Sched`.
    Timers,
    /// An address space's layout (`user::address_space`): where the next mapping goes.
    Layout,
    /// The kernel-stack slots (`mm::stack`): a new stack is mapped under it.
    Stacks,
    /// Physical frames and the kernel's page tables (`mm`); a process's page tables change
    /// under it and their own lock (`PageTables`).
    Memory,
    /// An address space's page tables (`user::address_space`, Linux's
    /// `mm->page_table_lock`): changed under `Memory` and this; a copy to or from the
    /// program walks them under this alone.
    PageTables,
    /// An address space's list of mapped chunks (`user::page_walk`): page-table walks note
    /// and read them under `Memory`.
    Chunks,
    /// Tests of the checker itself (below the heap, so that a test's panic can allocate).
    TestOuter,
    /// Tests of the checker itself.
    TestInner,
    /// The kernel heap (`mm::heap`): anything may allocate, under any lock above.
    Heap,
    /// A lock under which nothing else is taken, not even the heap (a table of flags).
    Leaf,
}

impl Rank {
    /// Every rank, outermost first.
    pub const ALL: [Rank; Rank::Leaf as usize + 1] = [
        Rank::TestOutermost,
        Rank::LabWindow,
        Rank::Futex,
        Rank::FdTable,
        Rank::ThreadGroup,
        Rank::OpenFile,
        Rank::Pipe,
        Rank::Terminal,
        Rank::WaitQueue,
        Rank::Sched,
        Rank::Runqueue,
        Rank::WakeList,
        Rank::Family,
        Rank::Trace,
        Rank::Signals,
        Rank::Timers,
        Rank::Layout,
        Rank::Stacks,
        Rank::Memory,
        Rank::PageTables,
        Rank::Chunks,
        Rank::TestOuter,
        Rank::TestInner,
        Rank::Heap,
        Rank::Leaf,
    ];
}

// `ALL` lists each rank at its own number.
const _: () = {
    let mut i = 0;
    while i < Rank::ALL.len() {
        assert!(Rank::ALL[i] as usize == i);
        i += 1;
    }
};

/// Whether a lock of `rank` may not be taken while the locks in `held` (one bit per rank)
/// are held: a held rank at `rank` or above is a bit at or above bit `rank`, one shift.
#[inline(always)]
pub fn violated(held: u64, rank: u32) -> bool {
    held >> rank != 0
}

/// The report of a violation on CPU `cpu`: both locks by rank, and the CPU.
#[cold]
#[inline(never)]
pub fn violation(held_ranks: u64, taking: u32, cpu: usize) -> ! {
    // The lowest rank held at or above the one being taken.
    let held = (held_ranks >> taking << taking).trailing_zeros();
    let name = |rank: u32| Rank::ALL[rank as usize];
    panic!(
        "lock order violated on CPU {cpu}: taking {:?} (rank {taking}) while holding {:?} (rank {held})",
        name(taking),
        name(held)
    );
}

/// The report of a violation on CPU `cpu` in taking the lock of `rank` keyed `key`, with
/// the ranks in `held_ranks` and the keys in `held_keys` held: the lock out of order is a
/// rank above `rank`, or a key of `rank` at or above `key`.
#[cold]
#[inline(never)]
pub fn keyed_violation(held_ranks: u64, held_keys: u64, rank: u32, key: u32, cpu: usize) -> ! {
    let name = |rank: u32| Rank::ALL[rank as usize];
    if held_ranks >> rank >> 1 != 0 {
        // A rank above: named as any rank out of order is.
        violation(held_ranks & !(1 << rank), rank, cpu)
    }
    if held_keys == 0 {
        // A lock of the rank taken without a key.
        violation(held_ranks, rank, cpu)
    }
    let held = (held_keys >> key << key).trailing_zeros();
    panic!(
        "lock order violated on CPU {cpu}: taking {:?} {key} (rank {rank}) while holding {:?} {held}",
        name(rank),
        name(rank)
    );
}
