//! The scheduler's state beside the runqueues — the task table, the balancer's state, the
//! online CPUs — behind `SCHED`, with every runqueue reached through it while `with_sched`
//! holds their locks too (see `sched`'s module docs for the rules); and the accessors every
//! part of the scheduler shares: the running CPU's runqueue, a task's runqueue, state and
//! context, the counts of runnable tasks, and the events' recorder.

use super::runqueue::Runqueue;
use super::runqueue::Runqueues;
use super::{balance, trace};
use crate::percpu::this_cpu;
use crate::sync::{Rank, SpinLock};
use crate::task::{Slot, State, Task, TaskId};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

pub(super) struct Scheduler {
    /// The runqueues, one per CPU up to the last online, indexed by its number (Linux's per-CPU
    /// `runqueues`): each has its own policy instance, its current and idle tasks, its
    /// `need_resched`, and the scheduling state, statistics and context of the tasks on it
    /// (`runqueue`). A task is on one runqueue at a time, the one its [`Task::cpu`] names.
    pub(super) rqs: Runqueues,
    /// Each AP's idle task, by CPU number (`None` for CPU 0, whose idle task has a slot,
    /// and for CPUs that did not come up): its boot flow, known by a slot no task has
    /// (`table::idle_slot_of`), so that the APs move no task's slot.
    pub(super) ap_idle: Vec<Option<Box<Task>>>,
    /// The machine's shape, the load balancer and the invariant's checker (`balance`).
    pub(super) balancing: balance::BalanceState,
    /// The CPUs online, by number, in order: those `/proc/sched_debug` and
    /// `/proc/schedstat` list, and the only ones tasks are placed on (`hotplug` takes a
    /// CPU out and puts it back).
    pub(super) online: Vec<usize>,
    /// The same CPUs, one bit each.
    pub(super) online_mask: u64,
    /// The CPUs that came up at boot, one bit each (Linux's `cpu_present_mask`): those
    /// that can be online.
    pub(super) present_mask: u64,
    /// Every task by slot (see [`crate::task`]): the policy knows tasks by slot.
    pub(super) slots: Vec<Option<Box<Task>>>,
    pub(super) free_slots: Vec<Slot>,
    /// Task id → slot, for the live tasks (and exited ones until their stack is freed).
    pub(super) by_id: BTreeMap<TaskId, Slot>,
    /// The id the next task gets: ids are never reused.
    pub(super) next_id: TaskId,
}

/// The CPUs online, one bit each: a copy of [`Scheduler::online_mask`] that a wake-up and
/// the tick read without the scheduler's lock (`sleep::wake_on_its_cpu`), written with it.
/// A CPU's bit is cleared with its runqueue held: a newly-idle pass reads it each time it
/// takes its CPU's runqueue lock (`balance::Lent`, `hotplug::take_offline`).
pub(super) static ONLINE: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(1);

/// The scheduler's state beside the runqueues — the task table, the balancer, the online
/// CPUs — behind one IRQ-safe lock (interrupts are off while it is held: a timer interrupt
/// arriving while a task held it would spin forever in the handler). [`with_sched`] takes
/// runqueue locks after it, in CPU order, for as long as it lends the scheduler out
/// (`runqueue::Runqueues`). gdb's helpers read its data while it is held (see
/// [`debugger`]).
pub(super) static SCHED: SpinLock<Option<Scheduler>> = SpinLock::new(Rank::Sched, None);

/// The one way to the scheduler's whole state: its lock, then the runqueues' — those of the
/// CPUs up to the last that holds a task at once, any further one as it is reached, in CPU
/// order (`runqueue::Runqueues`).
pub(super) fn with_sched<R>(f: impl FnOnce(&mut Scheduler) -> R) -> R {
    let mut sched = SCHED.lock();
    let s = sched.as_mut().expect("scheduler not started");
    s.rqs.start_lending();
    let result = f(s);
    s.rqs.stop_lending();
    result
}

/// The task table alone, without any runqueue: for what reads or changes tasks' process
/// data (signal masks, uids, names, robust lists, their thread group) and nothing a
/// runqueue holds. A runqueue reached under it panics, in every build (`runqueue`'s index
/// checks that its lock is held). Its cost does not grow with the number of CPUs, where
/// [`with_sched`]'s does: a uniprocessor run's figures do not move with `smp=`.
pub(super) fn with_tasks<R>(f: impl FnOnce(&mut Scheduler) -> R) -> R {
    f(SCHED.lock().as_mut().expect("scheduler not started"))
}

/// The running task's context, under this CPU's runqueue's lock alone (the context is on
/// that runqueue): its files, its address space, as the task itself changes them.
pub(super) fn with_current_context<R>(f: impl FnOnce(&mut crate::task::Context) -> R) -> R {
    let mut rq = super::runqueue::lock_this_cpu();
    let rq = rq.as_mut().expect("a runqueue");
    let current = rq.current();
    f(rq.context_mut(current))
}

impl Scheduler {
    /// The running CPU's runqueue (Linux's `this_rq()`).
    pub(super) fn this_rq(&self) -> &Runqueue {
        &self.rqs[this_cpu().index()]
    }

    /// The running CPU's runqueue, to change.
    pub(super) fn this_rq_mut(&mut self) -> &mut Runqueue {
        &mut self.rqs[this_cpu().index()]
    }

    /// The CPU whose runqueue holds the task in `slot` (Linux's `task_cpu()`), that
    /// runqueue held from here on while the scheduler is lent out. A waker holding only
    /// runqueue locks may move a sleeping task meanwhile (`ttwu`), and a newly-idle pass a
    /// queued one (holding the two runqueues it moves between): the number is sure once
    /// the runqueue it names is held and it has not changed (Linux's `task_rq_lock` loop;
    /// the runqueues held only grow, so this ends). Not lent out (`with_tasks`), it is the
    /// number as last written, a hint: such a caller reaches no runqueue (`check_held`).
    pub(super) fn cpu_of(&self, slot: Slot) -> usize {
        let cpu = &self.task_ref(slot).cpu;
        loop {
            let on = cpu.get();
            self.rqs.hold(on);
            if cpu.get() == on {
                return on;
            }
        }
    }

    /// The runqueue that holds the task in `slot` (Linux's `task_rq()`).
    pub(super) fn task_rq(&self, slot: Slot) -> &Runqueue {
        &self.rqs[self.cpu_of(slot)]
    }

    /// The runqueue that holds the task in `slot`, to change.
    pub(super) fn task_rq_mut(&mut self, slot: Slot) -> &mut Runqueue {
        let cpu = self.cpu_of(slot);
        &mut self.rqs[cpu]
    }

    /// Whether `slot` holds an idle task (CPU 0's: an AP's has no slot yet, see
    /// `table::idle_slot_of`). One lookup whatever the number of CPUs, so that a walk over
    /// every task costs the same on one CPU as on several.
    pub(super) fn is_idle(&self, slot: Slot) -> bool {
        self.task_rq(slot).idle() == slot
    }

    pub(super) fn current_id(&self) -> TaskId {
        self.task_ref(self.current_slot()).id
    }

    /// The running task's slot (on the running CPU): the per-CPU copy the switch keeps of
    /// its runqueue's `current`, read with one instruction on every system call's way.
    pub(super) fn current_slot(&self) -> Slot {
        let slot = this_cpu().current_slot();
        // (Checked where the runqueue is held: `with_tasks` holds none.)
        let cpu = this_cpu().index();
        debug_assert!(
            !this_cpu().holds_key(crate::sync::Rank::Runqueue as u32, cpu as u32)
                || slot == self.this_rq().current(),
            "the per-CPU current slot"
        );
        slot
    }

    /// Where `slot`'s task is in its life.
    pub(super) fn state(&self, slot: Slot) -> State {
        self.task_rq(slot).state(slot)
    }

    /// `slot`'s task has not exited.
    pub(super) fn alive(&self, slot: Slot) -> bool {
        self.state(slot) != State::Exited
    }

    /// Tasks running or waiting for a CPU, the idle tasks aside (Linux's `nr_running()`,
    /// summed over the CPUs: what the load average, `/proc/stat` and `/proc/loadavg` count).
    pub(super) fn runnable_tasks(&self) -> u64 {
        let tasks = self.slots.iter().flatten();
        tasks.filter(|t| self.is_runnable(t)).count() as u64
    }

    /// CPU `cpu`'s tasks running or waiting for it, its idle task aside (its runqueue's
    /// `nr_running`, as `/proc/sched_debug` shows it).
    pub(super) fn runnable_on(&self, cpu: usize) -> u64 {
        let tasks = self.slots.iter().flatten();
        tasks
            .filter(|t| self.cpu_of(t.slot) == cpu && self.is_runnable(t))
            .count() as u64
    }

    /// `t` runs or waits for its CPU, and is not an idle task.
    pub(super) fn is_runnable(&self, t: &Task) -> bool {
        !self.is_idle(t.slot) && matches!(self.state(t.slot), State::Running | State::Runnable)
    }

    /// A user process (or thread) that has not exited: what the process limit counts and
    /// what `kill(-1)` and PRIO_USER reach.
    pub(super) fn is_live_process(&self, t: &Task) -> bool {
        self.context(t.slot).address_space.is_some() && self.alive(t.slot)
    }

    /// The running task stops being runnable: it sleeps at the `schedule()` this asks for.
    pub(super) fn block_current(&mut self, now: u64) {
        self.this_rq_mut().block_current(now);
    }
}

impl Scheduler {
    /// How the task in `slot` appears in trace events.
    pub(super) fn comm(&mut self, slot: Slot) -> trace::Comm {
        self.context(slot).comm
    }

    /// Records `kind` of event, about the task in `about`, at `now`, on this CPU
    /// (`hardirq`: in the timer interrupt's handler): into its recent-events ring always,
    /// then on (`trace::publish`).
    pub(super) fn record(&mut self, now: u64, hardirq: bool, kind: trace::Kind, about: Slot) {
        let (task, target_cpu) = (self.comm(about), self.cpu_of(about));
        self.record_about(now, hardirq, kind, task, target_cpu);
    }

    /// [`Scheduler::record`] of an event about a task shown as `task`, on `target_cpu`: a
    /// task between two runqueues (a move) has its context in hand, on neither.
    pub(super) fn record_about(
        &mut self,
        now: u64,
        hardirq: bool,
        kind: trace::Kind,
        task: trace::Comm,
        target_cpu: usize,
    ) {
        let rq = self.this_rq_mut();
        rq.record_event(now, hardirq, kind, task, target_cpu);
    }
}
