//! One CPU's runqueue as the kernel keeps it (Linux's `struct rq`): the policy crate's
//! [`Rq`] — which task runs, which wait and in which order, their scheduling state — and
//! the [`Context`]s of the tasks on it, which the switch loads and saves.
//!
//! A task's context is where the task is: it comes onto a runqueue with the task (spawn,
//! fork, a move's attach) and leaves with it (a move's detach, the reaping of an exited
//! task), boxed, so that it never moves in memory while the task lives: a switch keeps
//! pointers to the previous task's saved stack pointer and `on_cpu` flag after it lets go
//! of the runqueue's lock, while another CPU may attach a task here and grow the table of
//! contexts. So a switch needs its own CPU's runqueue and nothing else — the step that lets
//! each runqueue have a lock of its own. The methods that move a task in or out of the
//! policy crate's `Rq` are redefined here to take or give its context with it, so the two
//! cannot get out of step; everything else is the `Rq`'s, reached through `Deref`.
//!
//! Where the runqueues live, and the ways to take their locks: [`locks`].

use super::balance::state::{CpuBalancing, TickRest, idle_pass_may_be_due};
use super::trace::Trace;
use super::tracing::RECENT_EVENTS;
use crate::percpu::this_cpu;
use crate::task::{Context, Slot};
use crate::time::clock;
use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::ops::{Deref, DerefMut};
use sched::smp::runqueues;
use sched::weights::Nice;
use sched::{ForkKind, Moving, Policy, Rq, SchedTask, Uid, Wakeup};

mod inspecting;
mod locks;
mod runs_idle;
mod stop_work;
pub(super) use inspecting::Inspecting;
pub(super) use locks::{
    Focused, Locked, Runqueues, lock, lock_this_cpu, lock_three, lock_two, made,
};
pub(super) use runs_idle::runs_idle;
pub(super) use stop_work::StopWork;

/// The kernel's runqueue of one CPU (see the module's docs).
pub(in crate::sched) struct Runqueue {
    rq: Rq<dyn Policy + Send>,
    /// The contexts of the tasks on this runqueue, by slot, each in the box it was made in
    /// (see the module's docs: the table may grow while a switch holds pointers into one).
    contexts: Vec<Option<Box<Context>>>,
    /// Its idle task's (whose slot may be one no other task has: `table::idle_slot_of`),
    /// which never leaves: it stays where the runqueue is, in its lock, for good.
    idle: Context,
    /// This CPU's last few events, always kept: its flight recorder (`tracing`), what gdb's
    /// `cfslab-trace` shows without `trace=on`.
    pub(in crate::sched) recent: Trace,
    /// This CPU's part of the balancer, while there is one (`balance::build_balancer`).
    pub(in crate::sched) balance: Option<CpuBalancing>,
    /// How many tasks' contexts are here (its idle task's and its stopper's aside): see
    /// `locks::HOLDING_TASKS`.
    tasks: usize,
    /// What this CPU's stopper is asked to do, in the order asked ([`stop_work`]).
    stop_work: VecDeque<StopWork>,
}

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
        runs_idle::say(rq.cpu(), rq.current() == rq.idle());
        Runqueue {
            rq,
            contexts: Vec::new(),
            idle,
            recent: Trace::new(RECENT_EVENTS, 1),
            balance: None,
            tasks: 0,
            stop_work: VecDeque::new(),
        }
    }

    /// The context of task `slot`, which is on this runqueue.
    #[inline(always)]
    pub(in crate::sched) fn try_context(&self, slot: Slot) -> Option<&Context> {
        if slot == self.rq.idle() {
            return Some(&self.idle);
        }
        self.contexts.get(slot.index()).and_then(Option::as_deref)
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
        let context = self.contexts.get(slot.index()).and_then(Option::as_deref);
        context.expect("the task's context is on its runqueue")
    }

    /// The context of task `slot`, which is on this runqueue, to change.
    #[inline(always)]
    pub(in crate::sched) fn context_mut(&mut self, slot: Slot) -> &mut Context {
        if slot == self.rq.idle() {
            return &mut self.idle;
        }
        let context = self
            .contexts
            .get_mut(slot.index())
            .and_then(Option::as_deref_mut);
        context.expect("the task's context is on its runqueue")
    }

    /// This CPU now runs its idle task (`idle`) or another: said for wakers elsewhere
    /// ([`runs_idle`]), by its switch, under this runqueue's lock.
    #[inline(always)]
    pub(in crate::sched) fn say_runs_idle(&self, idle: bool) {
        runs_idle::say(self.rq.cpu(), idle);
    }

    /// What a switch from task `prev` to task `next` (two tasks on this runqueue) writes
    /// at once: this CPU's recorder, where the switch's event goes, and both contexts.
    #[inline(always)]
    pub(in crate::sched) fn switch_parts(
        &mut self,
        prev: Slot,
        next: Slot,
    ) -> (&mut Trace, &mut Context, &mut Context) {
        fn on_queue(c: Option<&mut Option<Box<Context>>>) -> &mut Context {
            let context = c.and_then(Option::as_deref_mut);
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
    fn put(&mut self, slot: Slot, context: Box<Context>) {
        self.put_context(slot, context);
        self.tasks += 1;
        locks::holds_a_task(self.rq.cpu());
    }

    fn put_context(&mut self, slot: Slot, context: Box<Context>) {
        if self.contexts.len() <= slot.index() {
            self.contexts.resize_with(slot.index() + 1, || None);
        }
        let before = self.contexts[slot].replace(context);
        assert!(before.is_none(), "task {slot} put on a runqueue twice");
    }

    /// Task `slot` becomes this CPU's stopper ([`Rq::install_stopper`]). It stays here for
    /// good, asleep but for its turns, and is not counted among the tasks that make
    /// `with_sched` take this runqueue: a CPU that holds only its idle task and its stopper
    /// costs the lender no lock (a parked CPU costs a uniprocessor run nothing).
    pub(in crate::sched) fn install_stopper(
        &mut self,
        slot: Slot,
        context: Box<Context>,
        now: u64,
    ) {
        self.put_context(slot, context);
        self.rq.install_stopper(slot, now);
    }

    /// Queues `work` for this CPU's stopper (once: the same work asked twice is done once);
    /// the caller wakes the stopper.
    pub(in crate::sched) fn queue_stop_work(&mut self, work: StopWork) {
        if !self.stop_work.contains(&work) {
            self.stop_work.push_back(work);
        }
    }

    /// The stopper's next work, if any.
    pub(in crate::sched) fn take_stop_work(&mut self) -> Option<StopWork> {
        self.stop_work.pop_front()
    }

    /// Task `slot`'s context leaves this runqueue.
    fn take(&mut self, slot: Slot) -> Box<Context> {
        let context = self.contexts.get_mut(slot.index()).and_then(Option::take);
        let context = context.expect("the task's context is on its runqueue");
        self.tasks -= 1;
        if self.tasks == 0 {
            locks::holds_no_task(self.rq.cpu());
        }
        context
    }

    /// The boot flow becomes task `slot` ([`Rq::run_boot_task`]).
    pub(in crate::sched) fn run_boot_task(
        &mut self,
        slot: Slot,
        context: Box<Context>,
        (uid, nice): (Uid, Nice),
        now: u64,
    ) {
        self.put(slot, context);
        self.rq.run_boot_task(slot, uid, nice, now);
        self.say_runs_idle(false);
    }

    /// A kernel-started task becomes runnable here ([`Rq::spawn`]).
    pub(in crate::sched) fn spawn(
        &mut self,
        slot: Slot,
        context: Box<Context>,
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
        context: Box<Context>,
        kind: ForkKind,
        now: u64,
    ) {
        self.put(slot, context);
        self.rq.fork(slot, kind, now);
    }

    /// Task `slot` leaves this runqueue for another ([`Rq::detach`]), its context with it.
    pub(in crate::sched) fn detach(&mut self, slot: Slot, now: u64) -> (Moving, Box<Context>) {
        let moving = self.rq.detach(slot, now);
        (moving, self.take(slot))
    }

    /// Task `slot` joins this runqueue ([`Rq::attach`]), its context with it.
    pub(in crate::sched) fn attach(
        &mut self,
        slot: Slot,
        (moving, context): (Moving, Box<Context>),
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
        // stopper moves only a queued one: a task that sleeps before its stopper runs keeps
        // its CPU. (A move its affinity asks for — its CPU no longer allowed — stays marked,
        // and is made as it wakes.)
        let (current, here) = (self.rq.current(), self.rq.cpu());
        let context = self.context_mut(current);
        if context.move_to.is_some() && context.affinity & 1 << here != 0 {
            context.move_to = None;
        }
        self.rq.block_current(now);
    }

    /// Task `slot`, asleep on this runqueue, wakes here (the end of Linux's
    /// `ttwu_do_activate`): this CPU's idle spell ends if it was idle, the policy queues
    /// the task, and the CPU is kicked if the wakee should preempt what it runs. The
    /// wake-up's one ending, whether its waker holds this runqueue (and its own) alone
    /// (`sleep::wake_on_its_cpu`), the runqueues its placement touches (`ttwu::wake_on`)
    /// or the whole scheduler (`Scheduler::wake`).
    #[inline(always)]
    pub(in crate::sched) fn wake_here(&mut self, slot: Slot, wakeup: Wakeup, now: u64) {
        self.woken_onto();
        let asked_before = self.rq.need_resched();
        self.rq.wake(slot, wakeup, now);
        self.kick_if_asked(asked_before);
    }

    /// Task `slot` runs on this CPU, which is not the waker's, and may be about to sleep:
    /// it has put itself on a wait queue and not yet blocked, a window another CPU's
    /// wake-up can fall in. Its next sleep, which takes this runqueue's lock, returns at
    /// once (Linux: the waker sets the task's state back to TASK_RUNNING). Perhaps in ring 3
    /// there: the reschedule IPI makes it pass its way back to ring 3 now, where a kill or
    /// a signal that came with this wake-up is taken (Linux's `kick_process`).
    pub(in crate::sched) fn wake_while_running(&mut self, slot: Slot) {
        debug_assert_ne!(self.rq.cpu(), this_cpu().index(), "a waker runs elsewhere");
        self.context_mut(slot).wake_pending = true;
        crate::cpus::ipi::send_reschedule(self.rq.cpu());
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
    /// the others' as published (`balance::state::idle_pass_may_be_due`, among the `online`
    /// CPUs), with no other lock.
    pub(in crate::sched) fn balance_tick_here(&mut self, jiffies: u64, online: u64) -> TickRest {
        let idle = self.rq.current() == self.rq.idle();
        let Some(b) = &mut self.balance else {
            return TickRest::Nothing;
        };
        if !runqueues::tick_starts_on_its_cpu(b.split) {
            return TickRest::Whole;
        }
        runqueues::update_cpu_load_of(self.rq.policy(), &mut b.state, b.split);
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
    pub(in crate::sched) fn remove(&mut self, slot: Slot) -> (SchedTask, Box<Context>) {
        let last = self.rq.remove(slot);
        (last, self.take(slot))
    }
}
