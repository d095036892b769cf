//! One CPU's runqueue as the kernel keeps it (Linux's `struct rq`): the policy crate's
//! [`Rq`] — which task runs, which wait and in which order, their scheduling state — and
//! the [`Context`]s of the tasks on it, which the switch loads and saves.
//!
//! A task's context is where the task is: it comes onto a runqueue with the task (spawn,
//! fork, a move's attach) and leaves with it (a move's detach, the reaping of an exited
//! task), so a switch needs its own CPU's runqueue and nothing else — the step that lets
//! each runqueue have a lock of its own. The methods that move a task in or out of the
//! policy crate's `Rq` are redefined here to take or give its context with it, so the two
//! cannot get out of step; everything else is the `Rq`'s, reached through `Deref`.
//!
//! Where the runqueues live: every CPU's behind a lock of its own (Linux's `rq->lock`),
//! keyed by CPU so that several are taken lowest CPU first, as Linux's `double_rq_lock`
//! takes two (`sync::KeyedLock`; the lock-order checker holds every build to it).
//!
//! Three ways in:
//! - **one CPU's own runqueue, alone** ([`lock`]): the switch, the tick's charge to the
//!   running task, a sleep, a yield, a wake-up of a task allowed this CPU alone — what each
//!   CPU does many times a second touches its own runqueue and nothing else, so CPUs switch
//!   side by side;
//! - **two runqueues, lowest CPU first** ([`lock_two`], Linux's `double_rq_lock`): a
//!   wake-up of a task allowed one CPU, on that CPU, from another (the waker's own runqueue
//!   gets the event);
//! - **the runqueues, after the scheduler's lock** ([`Runqueues`], through `with_sched`):
//!   the rest — other wake-ups, forks, exits, moves, the balancer's passes, `/proc` — locks
//!   the task table, then the runqueues of CPUs 0 up to the last that holds a task, and any
//!   further one as it reaches it, always in CPU order; it reaches them by index for as
//!   long as it holds them. (Linux takes only the runqueues an operation touches: a wake-up
//!   its task's, a move the two. cfslab's next step for the rest.)
//!
//! The index checks, in every build, that this CPU holds the runqueue's lock: that is what
//! makes a reference into the lock's value safe to hand out without a guard.

use super::balance::state::{CpuBalancing, TickRest, idle_pass_may_be_due};
use super::trace::Trace;
use super::tracing::RECENT_EVENTS;
use crate::percpu::this_cpu;
use crate::sync::{KeyedGuard, KeyedLock, Rank};
use crate::task::{Context, Slot};
use crate::time::clock;
use alloc::vec::Vec;
use core::cell::Cell;
use core::ops::{Deref, DerefMut};
use core::ops::{Index, IndexMut};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use sched::smp::runqueues;
use sched::weights::Nice;
use sched::{ForkKind, Moving, Policy, Rq, SchedTask, Uid, Wakeup};
/// The kernel's runqueue of one CPU (see the module's docs).
pub(in crate::sched) struct Runqueue {
    rq: Rq<dyn Policy + Send>,
    /// The contexts of the tasks on this runqueue, by slot.
    contexts: Vec<Option<Context>>,
    /// Its idle task's (whose slot may be one no other task has: `setup::idle_slot_of`).
    idle: Context,
    /// This CPU's last few events, always kept: its flight recorder (`tracing`), what gdb's
    /// `cfslab-trace` shows without `trace=on`.
    pub(in crate::sched) recent: Trace,
    /// This CPU's part of the balancer, while there is one (`balance::build_balancer`).
    pub(in crate::sched) balance: Option<CpuBalancing>,
    /// How many tasks' contexts are here (its idle task's aside): see [`HOLDING_TASKS`].
    tasks: usize,
}

/// The CPUs whose runqueue holds a task other than its idle task, one bit each: those whose
/// locks `with_sched` takes before it lends the scheduler out (see [`Runqueues`]). Changed
/// only under the scheduler's lock (a task comes onto a runqueue or leaves it only so).
static HOLDING_TASKS: AtomicU64 = AtomicU64::new(0);

impl Deref for Runqueue {
    type Target = Rq<dyn Policy + Send>;

    fn deref(&self) -> &Self::Target {
        &self.rq
    }
}

impl DerefMut for Runqueue {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.rq
    }
}

impl Runqueue {
    /// A runqueue around `rq`, its idle task's context `idle`.
    pub(in crate::sched) fn new(rq: Rq<dyn Policy + Send>, idle: Context) -> Runqueue {
        Runqueue {
            rq,
            contexts: Vec::new(),
            idle,
            recent: Trace::new(RECENT_EVENTS, 1),
            balance: None,
            tasks: 0,
        }
    }

    /// The context of task `slot`, which is on this runqueue.
    #[inline(always)]
    pub(in crate::sched) fn try_context(&self, slot: Slot) -> Option<&Context> {
        if slot == self.rq.idle() {
            return Some(&self.idle);
        }
        self.contexts.get(slot.index()).and_then(Option::as_ref)
    }

    /// Records `kind` of event about a task shown as `task`, on CPU `target_cpu`, in this
    /// runqueue's flight recorder: this must be this CPU's runqueue (`hardirq`: in an
    /// interrupt handler).
    pub(in crate::sched) fn record_event(
        &mut self,
        now: u64,
        hardirq: bool,
        kind: super::trace::Kind,
        task: super::trace::Comm,
        target_cpu: usize,
    ) {
        let current = self.context(self.rq.current()).comm;
        let cpu = self.rq.cpu() as u16;
        debug_assert_eq!(usize::from(cpu), this_cpu().index(), "this CPU's recorder");
        let flags = super::trace::Flags {
            need_resched: self.rq.need_resched(),
            hardirq,
        };
        let event = self.recent.next_slot();
        *event = super::trace::Event {
            at: now,
            cpu,
            target_cpu: target_cpu as u16,
            flags,
            current,
            kind,
            task,
        };
        super::tracing::publish(event);
    }

    /// This runqueue was just changed, and `asked_before` says whether it already asked for
    /// a reschedule: if it asks now and is another CPU's, that CPU is sent the reschedule
    /// IPI, whose interrupt's end switches (Linux's `resched_curr`). Once per request: a
    /// CPU already asked has its IPI on the way.
    pub(in crate::sched) fn kick_if_asked(&self, asked_before: bool) {
        let cpu = self.rq.cpu();
        if !asked_before && self.rq.need_resched() && cpu != this_cpu().index() {
            crate::cpus::ipi::send_reschedule(cpu);
        }
    }

    pub(in crate::sched) fn context(&self, slot: Slot) -> &Context {
        if slot == self.rq.idle() {
            return &self.idle;
        }
        let context = self.contexts.get(slot.index()).and_then(Option::as_ref);
        context.expect("the task's context is on its runqueue")
    }

    /// The context of task `slot`, which is on this runqueue, to change.
    #[inline(always)]
    pub(in crate::sched) fn context_mut(&mut self, slot: Slot) -> &mut Context {
        if slot == self.rq.idle() {
            return &mut self.idle;
        }
        let context = self.contexts.get_mut(slot.index()).and_then(Option::as_mut);
        context.expect("the task's context is on its runqueue")
    }

    /// What a switch from task `prev` to task `next` (two tasks on this runqueue) writes
    /// at once: this CPU's recorder, where the switch's event goes, and both contexts.
    #[inline(always)]
    pub(in crate::sched) fn switch_parts(
        &mut self,
        prev: Slot,
        next: Slot,
    ) -> (&mut Trace, &mut Context, &mut Context) {
        fn on_queue(c: Option<&mut Option<Context>>) -> &mut Context {
            let context = c.and_then(Option::as_mut);
            context.expect("the task's context is on its runqueue")
        }
        let idle = self.rq.idle();
        let (prev, next) = if prev == idle {
            (
                &mut self.idle,
                on_queue(self.contexts.get_mut(next.index())),
            )
        } else if next == idle {
            (
                on_queue(self.contexts.get_mut(prev.index())),
                &mut self.idle,
            )
        } else {
            let [p, n] = self
                .contexts
                .get_disjoint_mut([prev.index(), next.index()])
                .expect("a switch is between two tasks on the runqueue");
            (on_queue(Some(p)), on_queue(Some(n)))
        };
        (&mut self.recent, prev, next)
    }

    /// Task `slot`'s context comes onto this runqueue.
    fn put(&mut self, slot: Slot, context: Context) {
        if self.contexts.len() <= slot.index() {
            self.contexts.resize_with(slot.index() + 1, || None);
        }
        let before = self.contexts[slot].replace(context);
        assert!(before.is_none(), "task {slot} put on a runqueue twice");
        self.tasks += 1;
        HOLDING_TASKS.fetch_or(1 << self.rq.cpu(), Ordering::Relaxed);
    }

    /// Task `slot`'s context leaves this runqueue.
    fn take(&mut self, slot: Slot) -> Context {
        let context = self.contexts.get_mut(slot.index()).and_then(Option::take);
        let context = context.expect("the task's context is on its runqueue");
        self.tasks -= 1;
        if self.tasks == 0 {
            HOLDING_TASKS.fetch_and(!(1 << self.rq.cpu()), Ordering::Relaxed);
        }
        context
    }

    /// The boot flow becomes task `slot` ([`Rq::run_boot_task`]).
    pub(in crate::sched) fn run_boot_task(
        &mut self,
        slot: Slot,
        context: Context,
        (uid, nice): (Uid, Nice),
        now: u64,
    ) {
        self.put(slot, context);
        self.rq.run_boot_task(slot, uid, nice, now);
    }

    /// A kernel-started task becomes runnable here ([`Rq::spawn`]).
    pub(in crate::sched) fn spawn(
        &mut self,
        slot: Slot,
        context: Context,
        (uid, nice): (Uid, Nice),
        now: u64,
    ) {
        self.put(slot, context);
        self.rq.spawn(slot, uid, nice, now);
    }

    /// The running task's child starts here ([`Rq::fork`]).
    pub(in crate::sched) fn fork(
        &mut self,
        slot: Slot,
        context: Context,
        kind: ForkKind,
        now: u64,
    ) {
        self.put(slot, context);
        self.rq.fork(slot, kind, now);
    }

    /// Task `slot` leaves this runqueue for another ([`Rq::detach`]), its context with it.
    pub(in crate::sched) fn detach(&mut self, slot: Slot, now: u64) -> (Moving, Context) {
        let moving = self.rq.detach(slot, now);
        (moving, self.take(slot))
    }

    /// Task `slot` joins this runqueue ([`Rq::attach`]), its context with it.
    pub(in crate::sched) fn attach(
        &mut self,
        slot: Slot,
        (moving, context): (Moving, Context),
        wakeup: Wakeup,
        now: u64,
    ) {
        self.put(slot, context);
        self.rq.attach(slot, moving, wakeup, now);
    }

    /// The running task stops being runnable ([`Rq::block_current`]): it sleeps at the
    /// `schedule()` that follows.
    pub(in crate::sched) fn block_current(&mut self, now: u64) {
        // A push (active or exec balancing) is for a task that stays runnable, as Linux's
        // stopper moves only a queued one: a task that sleeps first keeps its CPU. (A move
        // its affinity asks for — its CPU no longer allowed — stays marked.)
        let (current, here) = (self.rq.current(), self.rq.cpu());
        let context = self.context_mut(current);
        if context.move_to.is_some() && context.affinity & 1 << here != 0 {
            context.move_to = None;
        }
        self.rq.block_current(now);
    }

    /// A task was just woken onto this CPU: if the CPU was idle, its idle spell ends
    /// (`CpuBalance::woken`; the newly-idle check reads its average).
    pub(in crate::sched) fn woken_onto(&mut self) {
        if let Some(b) = &mut self.balance {
            b.state.woken(b.rules, clock::now);
        }
    }

    /// The tick's balancing share that is this CPU's alone, at tick `jiffies` — its load
    /// history takes in its load now (`update_cpu_load`), unless the era's tick reads every
    /// CPU first — and what is left (`TickRest`), told from this CPU's `next_balance` and
    /// the others' as published (`balance::state::idle_pass_may_be_due`), with no other lock.
    pub(in crate::sched) fn balance_tick_here(&mut self, jiffies: u64) -> TickRest {
        let idle = self.rq.current() == self.rq.idle();
        let Some(b) = &mut self.balance else {
            return TickRest::Nothing;
        };
        if !runqueues::tick_starts_on_its_cpu(b.split) {
            return TickRest::Whole;
        }
        runqueues::update_cpu_load_of(self.rq.policy(), &mut b.state, b.split);
        let online = super::state::ONLINE.load(Ordering::Relaxed);
        let idle_due = || idle_pass_may_be_due(self.rq.cpu(), jiffies, online);
        match jiffies >= b.state.next_balance || !idle && idle_due() {
            true => TickRest::Passes,
            false => TickRest::Nothing,
        }
    }

    /// Whether this CPU, about to idle, skips its newly-idle pass by its own idle spells
    /// (`CpuBalance::skips_newly_idle`); true without a balancer.
    pub(in crate::sched) fn skips_newly_idle(&mut self) -> bool {
        let Some(b) = &mut self.balance else {
            return true;
        };
        b.state.skips_newly_idle(b.rules, clock::now())
    }

    /// Whether a wake-up came while the running task ran, forgetting it (see
    /// `Context::wake_pending`).
    pub(in crate::sched) fn take_wake_pending(&mut self) -> bool {
        let current = self.rq.current();
        core::mem::take(&mut self.context_mut(current).wake_pending)
    }

    /// Forgets exited task `slot` ([`Rq::remove`]); returns its last scheduling part and
    /// its context.
    pub(in crate::sched) fn remove(&mut self, slot: Slot) -> (SchedTask, Context) {
        let last = self.rq.remove(slot);
        (last, self.take(slot))
    }
}

const CPUS: usize = bootopts::MAX_CPUS as usize;

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
pub(super) fn lock(cpu: usize) -> KeyedGuard<'static, Option<Runqueue>> {
    RUNQUEUES[cpu].lock()
}

/// This CPU's runqueue, locked: the CPU is read once interrupts are off, so that a task
/// cannot be moved between reading it and taking the lock (`KeyedLock::lock_chosen`).
#[inline(always)]
pub(super) fn lock_this_cpu() -> KeyedGuard<'static, Option<Runqueue>> {
    KeyedLock::lock_chosen(&RUNQUEUES, || this_cpu().index())
}

/// The runqueues of CPUs `a` and `b` (two CPUs), locked lowest CPU first as Linux's
/// `double_rq_lock` takes them, handed back as `a`'s then `b`'s. Interrupts must already be
/// off: then neither guard turns them back on, whichever is dropped first.
#[inline(always)]
pub(super) fn lock_two(a: usize, b: usize) -> [KeyedGuard<'static, Option<Runqueue>>; 2] {
    debug_assert!(
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

/// gdb reads the runqueues with the machine stopped, holding no lock ([`Inspecting`]).
static INSPECTING: AtomicBool = AtomicBool::new(false);

/// While this lives, the runqueues may be read without their locks: only for gdb's helpers,
/// called with every CPU stopped (`debugger`), where taking a lock could wait for ever. (A
/// guard, not a function taking a closure: gdb's Rust parser takes a function that holds a
/// closure for a namespace, and then cannot call it.)
pub(super) struct Inspecting(());

impl Inspecting {
    pub(super) fn start() -> Inspecting {
        INSPECTING.store(true, Ordering::Relaxed);
        Inspecting(())
    }
}

impl Drop for Inspecting {
    fn drop(&mut self) {
        INSPECTING.store(false, Ordering::Relaxed);
    }
}

/// Every runqueue, as the holder of the scheduler's lock reaches them (see the module's
/// docs). While `with_sched` lends the scheduler out, this CPU holds the locks of a prefix
/// of the runqueues, CPUs `0..held`: taken at the start up to the last CPU whose runqueue
/// holds a task ([`HOLDING_TASKS`]), and further, in CPU order, as the lender reaches a
/// runqueue past them (an empty CPU a task is placed on, a walk over every CPU). A prefix,
/// so that every runqueue lock is taken in key order, here as everywhere, and the lender
/// takes no lock of a CPU it does not touch: a uniprocessor run costs the same on a
/// machine of one CPU as beside parked ones.
pub(in crate::sched) struct Runqueues {
    /// How many CPUs have a runqueue (the first `len`).
    len: usize,
    /// `with_sched` lends the runqueues out: reaching one takes its lock if need be.
    lending: Cell<bool>,
    /// How many runqueues' locks the lender holds: CPUs `0..held`.
    held: Cell<usize>,
}

impl Runqueues {
    /// No runqueue yet.
    pub(super) const fn new() -> Runqueues {
        Runqueues {
            len: 0,
            lending: Cell::new(false),
            held: Cell::new(0),
        }
    }

    /// The next CPU's runqueue is `rq` (the scheduler starting: CPU 0's, then the APs').
    pub(super) fn push(&mut self, rq: Runqueue) {
        assert_eq!(rq.cpu(), self.len, "runqueues come in CPU order");
        *lock(self.len) = Some(rq);
        self.len += 1;
    }

    /// How many CPUs have a runqueue.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Each runqueue, by CPU.
    pub(super) fn iter(&self) -> impl Iterator<Item = &Runqueue> {
        (0..self.len).map(|cpu| &self[cpu])
    }

    /// Each runqueue, by CPU, to change.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Runqueue> {
        self.hold_through(self.len.saturating_sub(1));
        (0..self.len).map(|cpu| {
            check_held(cpu);
            // SAFETY: this CPU holds the runqueue's lock (checked), and the references the
            // iterator hands out are to different runqueues, each borrowed from `self`,
            // which the caller holds mutably (see `Index`).
            unsafe { (*RUNQUEUES[cpu].as_mut_ptr()).as_mut() }.expect("a CPU's runqueue")
        })
    }

    /// `with_sched` starts lending the runqueues out (the scheduler's lock held, interrupts
    /// off): it takes the locks of CPUs 0 up to the last whose runqueue holds a task.
    pub(super) fn start_lending(&self) {
        debug_assert!(!self.lending.get(), "runqueues lent twice");
        self.lending.set(true);
        let holding = HOLDING_TASKS.load(Ordering::Relaxed);
        if holding != 0 {
            self.hold_through(63 - holding.leading_zeros() as usize);
        }
    }

    /// `with_sched` is done: every runqueue lock it took is given back, highest CPU first.
    pub(super) fn stop_lending(&self) {
        let held = &RUNQUEUES[..self.held.get()];
        held.iter().rev().for_each(KeyedLock::release_held);
        self.held.set(0);
        self.lending.set(false);
    }

    /// While lending, holds CPUs `0..=cpu`'s runqueue locks, taking those not held yet in
    /// CPU order (never while gdb looks: it reads with every CPU stopped). Not lending
    /// (`with_tasks`), nothing is taken, and reaching a runqueue panics (`check_held`).
    #[inline(always)]
    fn hold_through(&self, cpu: usize) {
        let held = self.held.get();
        if cpu < held || !self.lending.get() || INSPECTING.load(Ordering::Relaxed) {
            return;
        }
        RUNQUEUES[held..=cpu]
            .iter()
            .for_each(KeyedLock::acquire_held);
        self.held.set(cpu + 1);
    }
}

/// This CPU holds runqueue `cpu`'s lock (or gdb is looking, [`Inspecting`]): checked in every
/// build, a read and a bit test.
#[inline(always)]
fn check_held(cpu: usize) {
    let held = this_cpu().holds_key(Rank::Runqueue as u32, cpu as u32);
    assert!(
        held || INSPECTING.load(Ordering::Relaxed),
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
        // would break the key order, which panics), and the only `Runqueues` is the
        // scheduler's, whose borrow this reference keeps. (gdb's reads happen with every
        // CPU stopped.)
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
