//! Where the runqueues live: every CPU's behind a lock of its own (Linux's `rq->lock`),
//! keyed by CPU so that several are taken lowest CPU first, as Linux's `double_rq_lock`
//! takes two (`sync::KeyedLock`; the lock-order checker holds every build to it).
//!
//! Four ways in:
//! - **one CPU's own runqueue, alone** ([`lock`]): the switch, the tick's charge to the
//!   running task, a sleep, a yield, a wake-up of a task allowed this CPU alone — what each
//!   CPU does many times a second touches its own runqueue and nothing else, so CPUs switch
//!   side by side;
//! - **two or three runqueues, lowest CPU first** ([`lock_two`], Linux's
//!   `double_rq_lock`, and [`lock_three`]): a wake-up of a task allowed one CPU, on that
//!   CPU, from another (the waker's own runqueue gets the event); a wake-up of a task
//!   allowed several, which first reads the CPUs its placement looks at, each under its
//!   lock alone, then takes the waker's, the task's and the chosen CPU's together (`ttwu`);
//! - **the runqueues, after the scheduler's lock** ([`Runqueues`], through `with_sched`):
//!   the rest — forks, exits, other moves, the tick's balancing passes, `/proc` — locks the
//!   task table, then the runqueues of CPUs 0 up to the last that holds a task, and any
//!   further one as it reaches it, always in CPU order; it reaches them by index for as
//!   long as it holds them;
//! - **the runqueues a pass works on, a CPU or two at a time** ([`Focused`]): a
//!   newly-idle pass (`balance::balance_newly_idle`), which needs nothing of the task table,
//!   reads each CPU's load under its lock alone (or, if it is taken, goes by what it read
//!   of it within a tick), then holds the busiest CPU's and its own, lowest CPU first, to
//!   pull (Linux's `double_lock_balance`). A holder of a prefix that counts the tasks of
//!   several runqueues holds each from its count to its end, so it counts a task the pass
//!   moves once, before or after the move. (Linux takes only the runqueues an operation
//!   touches everywhere: cfslab's next step.)
//!
//! The index checks, in every build, that this CPU holds the runqueue's lock: that is what
//! makes a reference into the lock's value safe to hand out without a guard.

use super::Runqueue;
use super::inspecting::inspecting;
use crate::percpu::this_cpu;
use crate::sync::{KeyedGuard, KeyedLock, Rank};
use core::cell::Cell;
use core::ops::{Index, IndexMut};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The CPUs whose runqueue holds a task other than its idle task and its stopper (which
/// stay, and would make every CPU count), one bit each: those whose
/// locks `with_sched` takes before it lends the scheduler out (see [`Runqueues`]). Changed
/// under the runqueue's lock as a task comes or goes; a lender that missed a change takes
/// the runqueue as it reaches it.
static HOLDING_TASKS: AtomicU64 = AtomicU64::new(0);

/// CPU `cpu`'s runqueue holds a task now.
pub(super) fn holds_a_task(cpu: usize) {
    HOLDING_TASKS.fetch_or(1 << cpu, Ordering::Relaxed);
}

/// CPU `cpu`'s runqueue holds no task but its idle task and its stopper now.
pub(super) fn holds_no_task(cpu: usize) {
    HOLDING_TASKS.fetch_and(!(1 << cpu), Ordering::Relaxed);
}

const CPUS: usize = bootopts::MAX_CPUS as usize;

/// How many CPUs have a runqueue: those of `0..MADE`, each made once, as its CPU starts,
/// and kept while it is offline. Read with no lock, by a wake-up sizing its view of the
/// machine (`ttwu`).
static MADE: AtomicUsize = AtomicUsize::new(0);

/// How many CPUs have a runqueue (Linux's possible CPUs, as cfslab counts them).
pub(in crate::sched) fn made() -> usize {
    MADE.load(Ordering::Acquire)
}

/// The runqueues, by CPU (`None` past the last CPU that has one).
static RUNQUEUES: [KeyedLock<Option<Runqueue>>; CPUS] = keyed_by_cpu();

const fn keyed_by_cpu() -> [KeyedLock<Option<Runqueue>>; CPUS] {
    let mut locks = [const { KeyedLock::new(Rank::Runqueue, 0, None) }; CPUS];
    let mut cpu = 0;
    while cpu < CPUS {
        locks[cpu].set_key(cpu as u32);
        cpu += 1;
    }
    locks
}

/// CPU `cpu`'s runqueue, locked: its own CPU's way in (see the module's docs).
#[inline(always)]
pub(in crate::sched) fn lock(cpu: usize) -> KeyedGuard<'static, Option<Runqueue>> {
    RUNQUEUES[cpu].lock()
}

/// This CPU's runqueue, locked: the CPU is read once interrupts are off, so that a task
/// cannot be moved between reading it and taking the lock (`KeyedLock::lock_chosen`).
#[inline(always)]
pub(in crate::sched) fn lock_this_cpu() -> KeyedGuard<'static, Option<Runqueue>> {
    KeyedLock::lock_chosen(&RUNQUEUES, || this_cpu().index())
}

/// The runqueues of CPUs `a` and `b` (two CPUs), locked lowest CPU first as Linux's
/// `double_rq_lock` takes them, handed back as `a`'s then `b`'s. Interrupts must already be
/// off: then neither guard turns them back on, whichever is dropped first.
#[inline(always)]
pub(in crate::sched) fn lock_two(a: usize, b: usize) -> [KeyedGuard<'static, Option<Runqueue>>; 2] {
    // Checked in every build, as the lock order is: a read of the flags.
    assert!(
        !crate::arch::irq::enabled(),
        "two runqueues with interrupts on"
    );
    if a < b {
        let first = lock(a);
        [first, lock(b)]
    } else {
        let first = lock(b);
        [lock(a), first]
    }
}

/// The runqueues of up to three CPUs (a CPU named twice is taken once), locked lowest CPU
/// first, as [`lock_two`] takes two: a wake-up that moves its task takes the waker's, the
/// task's and the one it goes to (`ttwu`). Interrupts must already be off.
pub(in crate::sched) fn lock_three(cpus: [usize; 3]) -> Locked {
    assert!(
        !crate::arch::irq::enabled(),
        "three runqueues with interrupts on"
    );
    let mut sorted = cpus;
    sorted.sort_unstable();
    let mut locked = Locked {
        guards: [None, None, None],
    };
    for (i, cpu) in sorted.into_iter().enumerate() {
        if i == 0 || sorted[i - 1] != cpu {
            locked.guards[i] = Some((cpu, lock(cpu)));
        }
    }
    locked
}

/// The runqueues [`lock_three`] took, each reached by its CPU; released together.
pub(in crate::sched) struct Locked {
    guards: [Option<(usize, KeyedGuard<'static, Option<Runqueue>>)>; 3],
}

impl Locked {
    /// CPU `cpu`'s runqueue, which must be among those taken.
    pub(in crate::sched) fn rq(&mut self, cpu: usize) -> &mut Runqueue {
        let guard = self.guards.iter_mut().flatten().find(|(c, _)| *c == cpu);
        let rq = guard.and_then(|(_, g)| g.as_mut());
        rq.expect("a runqueue among those locked")
    }
}

/// Every runqueue, as its lender reaches them: the holder of the scheduler's lock (see the
/// module's docs). While lent, this CPU holds the locks of a prefix
/// of the runqueues, CPUs `0..held`: taken at the start up to the last CPU whose runqueue
/// holds a task ([`HOLDING_TASKS`]), and further, in CPU order, as the lender reaches a
/// runqueue past them (an empty CPU a task is placed on, a walk over every CPU). A prefix,
/// so that every runqueue lock is taken in key order, here as everywhere, and the lender
/// takes no lock of a CPU it does not touch: a uniprocessor run costs the same on a
/// machine of one CPU as beside parked ones.
pub(in crate::sched) struct Runqueues {
    /// The lender lends the runqueues out: reaching one takes its lock if need be.
    lending: Cell<bool>,
    /// How many runqueues' locks the lender holds: CPUs `0..held`.
    held: Cell<usize>,
}

impl Runqueues {
    /// No runqueue yet.
    pub(in crate::sched) const fn new() -> Runqueues {
        Runqueues {
            lending: Cell::new(false),
            held: Cell::new(0),
        }
    }

    /// The next CPU's runqueue is `rq` (the scheduler starting: CPU 0's, then the APs').
    pub(in crate::sched) fn push(&mut self, rq: Runqueue) {
        let cpu = made();
        assert_eq!(rq.cpu(), cpu, "runqueues come in CPU order");
        *lock(cpu) = Some(rq);
        MADE.store(cpu + 1, Ordering::Release);
    }

    /// How many CPUs have a runqueue.
    pub(in crate::sched) fn len(&self) -> usize {
        made()
    }

    /// Each runqueue, by CPU.
    pub(in crate::sched) fn iter(&self) -> impl Iterator<Item = &Runqueue> {
        (0..self.len()).map(|cpu| &self[cpu])
    }

    /// Each runqueue, by CPU, to change.
    pub(in crate::sched) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Runqueue> {
        self.hold_through(self.len().saturating_sub(1));
        (0..self.len()).map(|cpu| {
            check_held(cpu);
            // SAFETY: this CPU holds the runqueue's lock (checked), and the references the
            // iterator hands out are to different runqueues, each borrowed from `self`,
            // which the caller holds mutably (see `Index`).
            unsafe { (*RUNQUEUES[cpu].as_mut_ptr()).as_mut() }.expect("a CPU's runqueue")
        })
    }

    /// The lender starts (`with_sched` with the scheduler's lock held, interrupts off): it takes the locks of CPUs 0 up to the last whose runqueue holds a
    /// task.
    pub(in crate::sched) fn start_lending(&self) {
        debug_assert!(!self.lending.get(), "runqueues lent twice");
        self.lending.set(true);
        let holding = HOLDING_TASKS.load(Ordering::Relaxed);
        if holding != 0 {
            self.hold_through(63 - holding.leading_zeros() as usize);
        }
    }

    /// `with_sched` is done: every runqueue lock it took is given back, highest CPU first.
    pub(in crate::sched) fn stop_lending(&self) {
        let held = &RUNQUEUES[..self.held.get()];
        held.iter().rev().for_each(KeyedLock::release_held);
        self.held.set(0);
        self.lending.set(false);
    }

    /// While lending, holds runqueue `cpu`'s lock from here on (with those of the CPUs
    /// before it: see [`Runqueues`]); not lending, does nothing.
    #[inline(always)]
    pub(in crate::sched) fn hold(&self, cpu: usize) {
        self.hold_through(cpu);
    }

    /// While lending, holds CPUs `0..=cpu`'s runqueue locks, taking those not held yet in
    /// CPU order (never while gdb looks: it reads with every CPU stopped). Not lending
    /// (`with_tasks`), nothing is taken, and reaching a runqueue panics (`check_held`).
    #[inline(always)]
    fn hold_through(&self, cpu: usize) {
        let held = self.held.get();
        if cpu < held || !self.lending.get() || inspecting() {
            return;
        }
        RUNQUEUES[held..=cpu]
            .iter()
            .for_each(KeyedLock::acquire_held);
        self.held.set(cpu + 1);
    }
}

/// This CPU holds runqueue `cpu`'s lock (or gdb is looking, [`Inspecting`](super::Inspecting)): checked in every
/// build, a read and a bit test.
#[inline(always)]
fn check_held(cpu: usize) {
    let held = this_cpu().holds_key(Rank::Runqueue as u32, cpu as u32);
    assert!(
        held || inspecting(),
        "runqueue {cpu} reached without its lock"
    );
}

impl Index<usize> for Runqueues {
    type Output = Runqueue;

    #[inline(always)]
    fn index(&self, cpu: usize) -> &Runqueue {
        self.hold_through(cpu);
        check_held(cpu);
        // SAFETY: this CPU holds the runqueue's lock (checked), so no other CPU touches the
        // value; on this CPU, no guard of it exists beside this (taking its lock again
        // would break the key order, which panics), and one lender at a time lends it on this
        // CPU — the scheduler's inside `with_sched` (a newly-idle pass's `Focused`, which
        // runs with interrupts off outside it, would have to take the lock again) — whose
        // borrow this reference keeps. (gdb's reads happen
        // with every CPU stopped.)
        unsafe { (*RUNQUEUES[cpu].as_mut_ptr()).as_ref() }.expect("a CPU's runqueue")
    }
}

impl IndexMut<usize> for Runqueues {
    #[inline(always)]
    fn index_mut(&mut self, cpu: usize) -> &mut Runqueue {
        self.hold_through(cpu);
        check_held(cpu);
        // SAFETY: as for `index`, and `self` is borrowed mutably for as long as this lives.
        unsafe { (*RUNQUEUES[cpu].as_mut_ptr()).as_mut() }.expect("a CPU's runqueue")
    }
}

/// The runqueues as a newly-idle pass holds them: only those it works on at the moment, the
/// two a pull touches (Linux's `double_lock_balance`; from 3.18 `load_balance` detaches under
/// the busiest runqueue's lock and attaches under its own), or the one whose figures it
/// reads — each CPU's read whole, one at a time, as Linux reads them without their locks.
///
/// Beside a holder of a prefix of the runqueues ([`Runqueues`]) this is safe for the reason
/// a wake-up's [`lock_three`] is: it takes its locks in CPU order too. A holder of the
/// prefix that reaches a runqueue this pass holds waits for the pass to let go of both; a pass that wants one the holder has reached waits for the
/// holder's end. So none sees the other half-way, and a holder that counts the tasks of
/// several runqueues counts each before or after a move, never both.
///
/// What the pass may find changed between two looks is the price of not holding
/// everything, as in Linux: a CPU's load read up to a tick ago, or this CPU's domains
/// rebuilt while it let go of them (`sched::smp::runqueues`' `with_domains` then drops the
/// pass's states), or the CPUs online (re-read as the pass takes this CPU's runqueue with
/// another's to pull: see `balance::Lent`).
pub(in crate::sched) struct Focused {
    /// The CPUs whose runqueue locks are held, one bit each.
    held: u64,
}

impl Focused {
    /// None held yet. Interrupts must be off, and stay off until this is dropped.
    pub(in crate::sched) fn new() -> Focused {
        assert!(
            !crate::arch::irq::enabled(),
            "runqueues focused on with interrupts on"
        );
        Focused { held: 0 }
    }

    /// How many CPUs have a runqueue.
    pub(in crate::sched) fn len(&self) -> usize {
        made()
    }

    /// Holds the runqueues of `cpus` (one bit each) and no other: those held and not
    /// wanted are let go of, highest CPU first, and the wanted ones taken lowest first —
    /// all let go of first if one wanted comes before one held, so that the order holds.
    /// Returns whether any lock was taken.
    pub(in crate::sched) fn focus(&mut self, cpus: u64) -> bool {
        let keep = self.held & cpus;
        let take = cpus & !keep;
        if take == 0 {
            self.let_go(self.held & !cpus);
            return false;
        }
        // A lock is taken only above every one held (`double_rq_lock`'s order).
        let lowest_taken = take.trailing_zeros();
        let keep = keep & ((1u64 << lowest_taken) - 1);
        self.let_go(self.held & !keep);
        let mut rest = cpus & !keep;
        while rest != 0 {
            let cpu = rest.trailing_zeros() as usize;
            RUNQUEUES[cpu].acquire_held();
            self.held |= 1 << cpu;
            rest &= rest - 1;
        }
        true
    }

    /// Holds CPU `cpu`'s runqueue alone if its lock is free now (or held already); returns
    /// whether it does. Whatever else was held is let go of either way.
    pub(in crate::sched) fn try_focus_one(&mut self, cpu: usize) -> bool {
        if self.holds(cpu) {
            self.let_go(self.held & !(1 << cpu));
            return true;
        }
        self.let_go(self.held);
        let took = RUNQUEUES[cpu].try_acquire_held();
        if took {
            self.held = 1 << cpu;
        }
        took
    }

    /// Lets go of the runqueues of `cpus` (held ones), highest CPU first.
    fn let_go(&mut self, cpus: u64) {
        let mut rest = cpus & self.held;
        while rest != 0 {
            let cpu = 63 - rest.leading_zeros() as usize;
            RUNQUEUES[cpu].release_held();
            self.held &= !(1 << cpu);
            rest &= !(1 << cpu);
        }
    }

    /// Whether CPU `cpu`'s runqueue is held.
    pub(in crate::sched) fn holds(&self, cpu: usize) -> bool {
        self.held & 1 << cpu != 0
    }
}

impl Drop for Focused {
    fn drop(&mut self) {
        self.let_go(self.held);
    }
}

impl Index<usize> for Focused {
    type Output = Runqueue;

    #[inline(always)]
    fn index(&self, cpu: usize) -> &Runqueue {
        check_held(cpu);
        // SAFETY: this CPU holds the runqueue's lock (checked), so no other CPU touches the
        // value; on this CPU nothing else reaches it while this pass runs (interrupts are
        // off, and taking its lock again would break the key order, which panics). A lock
        // is let go of only through `&mut self`, which no reference handed out outlives.
        unsafe { (*RUNQUEUES[cpu].as_mut_ptr()).as_ref() }.expect("a CPU's runqueue")
    }
}

impl IndexMut<usize> for Focused {
    #[inline(always)]
    fn index_mut(&mut self, cpu: usize) -> &mut Runqueue {
        check_held(cpu);
        // SAFETY: as for `index`, and `self` is borrowed mutably for as long as this lives.
        unsafe { (*RUNQUEUES[cpu].as_mut_ptr()).as_mut() }.expect("a CPU's runqueue")
    }
}
