//! The interface every scheduling policy offers the kernel, shaped like Linux's
//! `struct sched_class`: the kernel reports what happens to tasks (spawned, forked, woken,
//! sleeping, exiting, ticking) and asks the policy which task runs next and whether the
//! running one should be preempted. The policy never sees hardware or reads a clock: every
//! call that depends on time receives `now` in nanoseconds.
//!
//! The calling protocol is Linux's `schedule()`: while a task runs it is the policy's
//! *current* task; to switch, the kernel calls [`Policy::dequeue`] first if the current task
//! is going to sleep (or [`Policy::exit`] if it ends), then [`Policy::put_prev`], then
//! [`Policy::pick_next`], which makes the picked task current.
//!
//! Each CPU has its own instance of the policy (Linux's per-CPU `struct rq`). A task that
//! moves between CPUs leaves one instance with [`Policy::migrate_out`] and joins another with
//! [`Policy::migrate_in`], carrying a [`Migrant`]: what the policy knew of it, expressed so
//! that the other CPU's instance can place it as the era did.

use crate::debug_layout::TaskRow;
use crate::knobs::{KnobError, Tunable};
use crate::params::{FairParams, Feature};
use crate::weights::Nice;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// Nanoseconds of the kernel's monotonic clock.
pub type Nanos = u64;

pub use crate::task_id::TaskId;

/// A user id: with per-uid group scheduling, the group a task belongs to.
pub type Uid = u32;

/// How a child was created (Linux's `clone` flags, reduced to what scheduling sees).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForkKind {
    /// An ordinary fork: the parent keeps running.
    Fork,
    /// vfork: the parent sleeps until the child execs or exits (the kernel dequeues it right
    /// after the fork), and is then woken with [`Wakeup::vfork_parent`] set.
    Vfork,
}

/// Details of a wake-up ([`Policy::enqueue`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wakeup {
    /// The woken task is a vfork parent whose child has just exec'd or exited (cfslab's
    /// VFORK_SLEEPER_CREDIT decides whether such a wake-up earns sleeper credit).
    pub vfork_parent: bool,
    /// The wake-up comes from an interrupt (a timer), not from the running task: the running
    /// task is then not the waker (2.6.32's ADAPTIVE_GRAN learns only from task wake-ups).
    pub from_interrupt: bool,
    /// Whether the waker is about to give its CPU up (Linux's WF_SYNC).
    pub sync: SyncWake,
}

/// Whether a waker is about to give its CPU up (Linux's WF_SYNC): the wake-up placement may
/// then count its CPU without it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SyncWake {
    /// It runs on.
    #[default]
    No,
    /// It is about to sleep: a pipe's writer waking the reader, or the reader the writer
    /// (`wake_up_interruptible_sync`).
    WakerSleeps,
    /// It is ending: a child's exit waking its parent (`__wake_up_parent`). 6.6 ignores
    /// the hint then (an exiting waker's `PF_EXITING`).
    WakerExits,
}

/// A task on its way from one CPU's policy to another's (Linux moves the whole
/// `task_struct`; `set_task_cpu` and the enqueue that follows fit its scheduling entity to
/// the new CPU's runqueue).
#[derive(Debug)]
pub struct Migrant {
    /// The task's uid and nice level, which place it in the new CPU's groups and give its
    /// weight there.
    pub uid: Uid,
    /// See `uid`.
    pub nice: Nice,
    /// The policy's own record of the task.
    pub carried: Carried,
}

/// A moving task's record, in whatever type its policy keeps (the fair class's
/// `FairMigrant`, O(1)'s `O1Migrant`): opaque to the runqueue, which only hands it from
/// one CPU's instance of the policy to another's of the same kind. So this interface names
/// no policy, and a new policy carries a record of its own without changing it.
pub struct Carried(alloc::boxed::Box<dyn core::any::Any + Send>);

impl Carried {
    /// Wraps a policy's record.
    pub fn new<R: core::any::Any + Send>(record: R) -> Self {
        Carried(alloc::boxed::Box::new(record))
    }

    /// The record, if it is an `R` (a policy takes back what its own kind carried).
    pub fn into_record<R: core::any::Any>(self) -> Option<R> {
        self.0.downcast::<R>().ok().map(|record| *record)
    }

    /// The record, to read, if it is an `R`.
    pub fn record<R: core::any::Any>(&self) -> Option<&R> {
        self.0.downcast_ref::<R>()
    }

    /// The record, to change on the way, if it is an `R`.
    pub fn record_mut<R: core::any::Any>(&mut self) -> Option<&mut R> {
        self.0.downcast_mut::<R>()
    }
}

impl fmt::Debug for Carried {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Carried(..)")
    }
}

/// What the policy says about one task, for reports and debugging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskInfo {
    /// Virtual runtime (CFS, EEVDF); for O(1), 0.
    pub vruntime: u64,
    /// Load weight (CFS, EEVDF) or static priority (O(1)).
    pub weight: u64,
    /// The slice the task would get now, in wall-clock nanoseconds.
    pub slice_ns: u64,
    /// EEVDF's virtual deadline.
    pub deadline: Option<u64>,
    /// Runnable (queued or running)?
    pub on_rq: bool,
    /// Total CPU time the policy has accounted to the task.
    pub sum_exec_runtime: u64,
    /// When the policy last accounted the task's running (`se.exec_start`); for O(1), when
    /// it was last picked.
    pub exec_start: u64,
    /// 6.6: its load as its CPU's root sees it (`task_h_load`); its weight in eras that do
    /// not track load.
    pub h_load: u64,
    /// 6.6: its utilisation (`util_avg`); 0 in eras that do not track load.
    pub util: u64,
}

/// One queue of tasks a balancer may pull from (2.6.24's leaf `cfs_rq`: a group's
/// runqueue on this CPU, or the root's without groups).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalanceQueue {
    /// The group's uid (`None`: no groups).
    pub uid: Option<Uid>,
    /// The weight of its tasks, the running one included.
    pub load: u64,
    /// Its waiting tasks in the order a balancer looks at them (the timeline's: the most
    /// owed first).
    pub waiting: Vec<QueuedTask>,
    /// The best priority among its tasks (100–139 from nice; 140 if it has none).
    pub best_prio: u32,
    /// The weight of the group's entity on this CPU (`None`: no groups).
    pub entity_weight: Option<u64>,
}

/// A waiting task as a balancer sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueuedTask {
    /// Its id.
    pub task: TaskId,
    /// Its load weight.
    pub weight: u64,
    /// Its priority (100–139 from nice; O(1): its dynamic priority).
    pub prio: u32,
    /// 6.6: its load as its CPU's root runqueue sees it (`task_h_load`); its weight in
    /// eras that do not track load.
    pub h_load: u64,
    /// 6.6: its utilisation (`util_avg`, 0–1024); 0 in eras that do not track load.
    pub util: u64,
}

/// 6.6: a CPU's root runqueue's load-tracking averages, what its balancer reads
/// (`cpu_load`, `cpu_runnable`, `cpu_util_cfs` without `util_est`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadAvg {
    /// `load_avg`: weight × time runnable, blocked tasks' decaying part included.
    pub load: u64,
    /// `runnable_avg`: 1024 × tasks runnable, on average.
    pub runnable: u64,
    /// `util_avg`: 1024 × the part of the time something ran.
    pub util: u64,
}

/// What the policy says about one runqueue (the root, or a group's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunqueueInfo {
    /// "/" for the root, "/uids/1" for uid 1's group; for O(1), "active" and "expired".
    pub name: String,
    /// The runqueue's monotonic floor of virtual time.
    pub min_vruntime: u64,
    /// Sum of the weights of its queued entities (the running one included).
    pub load: u64,
    /// Number of its queued entities (the running one included).
    pub nr_running: u32,
}

/// A scheduling policy (Linux's `sched_class`).
pub trait Policy {
    /// Short name: "cfs", "eevdf", "o1".
    fn name(&self) -> &'static str;

    /// A new task with no parent (one the kernel starts itself) becomes runnable, placed as
    /// a newcomer. Returns whether the current task should be preempted.
    fn spawn(&mut self, task: TaskId, uid: Uid, nice: Nice, now: Nanos) -> bool;

    /// `parent` (the current task) forked `child`, which inherits its uid and nice and becomes
    /// runnable (Linux's `sched_fork` + `wake_up_new_task`). Returns whether the parent
    /// should be preempted.
    fn fork(&mut self, parent: TaskId, child: TaskId, kind: ForkKind, now: Nanos) -> bool;

    /// A sleeping task wakes up and becomes runnable (`enqueue_task` with a wake-up).
    /// Follow with [`Policy::check_preempt_wakeup`].
    fn enqueue(&mut self, task: TaskId, wakeup: Wakeup, now: Nanos);

    /// A runnable task goes to sleep (`dequeue_task` with a sleep).
    fn dequeue(&mut self, task: TaskId, now: Nanos);

    /// A task ends. If it is current, it stays so until [`Policy::put_prev`].
    fn exit(&mut self, task: TaskId, now: Nanos);

    /// `task`, which is not current, leaves this CPU for another (Linux's `deactivate_task`
    /// without a sleep, then `set_task_cpu`): taken off the queue if it is queued, and
    /// forgotten here. What it carries goes to the other CPU's [`Policy::migrate_in`].
    fn migrate_out(&mut self, task: TaskId, now: Nanos) -> Migrant;

    /// `task` arrives from another CPU with `migrant` and is queued here, placed as the era
    /// placed a migrated task: woken by the move if `woken` (`try_to_wake_up` onto another
    /// CPU), else still runnable (the balancer's `pull_task`, a forced move). Returns
    /// whether the current task should be preempted (`check_preempt_curr`).
    fn migrate_in(
        &mut self,
        task: TaskId,
        migrant: Migrant,
        woken: Option<Wakeup>,
        now: Nanos,
    ) -> bool;

    /// `parent` (the current task) forked `child`, which is to start on another CPU (the
    /// fork's CPU choice, `select_task_rq` with SD_BALANCE_FORK): the child is set up as
    /// this CPU's fork sets it up, but not queued here; it joins the other CPU with
    /// [`Policy::migrate_in`]. Also returns whether the parent should be preempted (a
    /// child-runs-first swap of the two tasks' places).
    fn fork_away(&mut self, parent: TaskId, child: TaskId, now: Nanos) -> (Migrant, bool);

    /// Should the current task give way to `woken`, which just woke up?
    fn check_preempt_wakeup(&mut self, woken: TaskId, now: Nanos) -> bool;

    /// The current task stops running (it is switched out, or it slept or exited).
    fn put_prev(&mut self, task: TaskId, now: Nanos);

    /// Which runnable task runs next; it becomes current. `None` if nothing is runnable.
    fn pick_next(&mut self, now: Nanos) -> Option<TaskId>;

    /// The periodic scheduler tick, while the current task runs. Returns whether it should
    /// be preempted.
    fn tick(&mut self, now: Nanos) -> bool;

    /// The current task yields the CPU. Returns whether it should be switched out.
    fn yield_now(&mut self, now: Nanos) -> bool;

    /// Changes a task's nice value.
    fn set_nice(&mut self, task: TaskId, nice: Nice, now: Nanos);

    /// Changes a task's uid (and so, with per-uid groups, its group).
    fn set_uid(&mut self, task: TaskId, uid: Uid, now: Nanos);

    /// The running task, if any.
    fn current(&self) -> Option<TaskId>;

    /// What the policy knows about `task`.
    fn task_info(&self, task: TaskId) -> Option<TaskInfo>;

    /// Every runqueue, the root first.
    fn runqueues(&self) -> Vec<RunqueueInfo>;

    /// The queues a load balancer pulls from (`load_balance_fair`'s walk of the leaf
    /// runqueues, the newest group first).
    fn balance_queues(&self) -> Vec<BalanceQueue>;

    /// The weight queued at the root now, the running task's included (Linux's
    /// `rq->cfs.load.weight`): the first of [`Policy::runqueues`]' loads, read without
    /// making them — a wake-up's placement reads it of every CPU.
    fn root_load(&self) -> u64 {
        self.runqueues().first().map_or(0, |q| q.load)
    }

    /// How many tasks wait in [`Policy::balance_queues`] (the running one aside), counted
    /// without making the queues.
    fn waiting_tasks(&self) -> u32 {
        let queues = self.balance_queues();
        queues.iter().map(|q| q.waiting.len() as u32).sum()
    }

    /// [`Policy::balance_queues`]' loads summed, without making the queues.
    fn queued_load(&self) -> u64 {
        self.balance_queues().iter().map(|q| q.load).sum()
    }

    /// Whether nothing is queued, the running task included while it is (the class's
    /// `nr_running` is 0): what makes a CPU about to schedule balance first. Asked at every
    /// switch of a balancing CPU, so without building the queues.
    fn nothing_queued(&self) -> bool {
        self.balance_queues().iter().all(|q| q.load == 0)
    }

    /// `/proc/sched_debug`'s sections for the policy's runqueues on CPU `cpu` (Linux's
    /// `print_cfs_rq`), each in the layout of the Linux the policy mirrors
    /// ([`crate::debug_layout`]).
    fn write_debug_runqueues(&self, cpu: usize, out: &mut dyn fmt::Write) -> fmt::Result;

    /// The header of `/proc/sched_debug`'s table of tasks, rule included.
    fn write_debug_task_header(&self, out: &mut dyn fmt::Write) -> fmt::Result;

    /// One task's row of that table (Linux's `print_task`): the kernel's part (`row`), then
    /// the policy's values for `task` in the policy's columns.
    fn write_debug_task(
        &self,
        task: TaskId,
        row: &TaskRow<'_>,
        out: &mut dyn fmt::Write,
    ) -> fmt::Result;

    // --- run-time knobs (`knobs`): the fair class has them; O(1) has none ---------------

    /// The fair class's parameters as they are now; `None` for a policy without them.
    fn fair_params(&self) -> Option<&FairParams> {
        None
    }

    /// Writes a tunable (a sysctl) while tasks run; it applies from the next decision.
    fn set_tunable(&mut self, _tunable: Tunable, _value: u64) -> Result<(), KnobError> {
        Err(KnobError::NotThisPolicy)
    }

    /// Turns a feature on or off (a write to `sched_features`).
    fn set_feature(&mut self, _feature: Feature, _on: bool) -> Result<(), KnobError> {
        Err(KnobError::NotThisPolicy)
    }

    /// The weight of each uid's group, for the uids that have one (per-uid grouping).
    fn group_shares(&self) -> Vec<(Uid, u64)> {
        Vec::new()
    }

    /// Gives uid `uid`'s group weight `shares` (clamped to Linux's bounds); returns the
    /// weight given.
    fn set_group_shares(&mut self, _uid: Uid, _shares: u64, _now: Nanos) -> Result<u64, KnobError> {
        Err(KnobError::NotThisPolicy)
    }

    /// Gives uid `uid`'s group entity on this CPU `weight`, its part of the group's shares
    /// split across CPUs (2.6.27–2.6.37, `crate::smp::shares`); the shares as set stay.
    fn set_group_weight_here(&mut self, _uid: Uid, _weight: u64, _now: Nanos) {}

    /// 6.6: this CPU's load-tracking averages (`None` in an era that does not track load).
    fn load_avg(&self) -> Option<LoadAvg> {
        None
    }

    /// 6.6's `update_blocked_averages`: every queue's averages brought to `now`, so that the
    /// load of tasks asleep decays.
    fn update_blocked_averages(&mut self, _now: Nanos) {}

    /// 6.6: each group's load on this CPU as last published (`tg_load_avg_contrib`).
    fn group_load_contribs(&self) -> Vec<(Uid, u64)> {
        Vec::new()
    }

    /// 6.6: group `uid`'s published load on all other CPUs, which its shares here are
    /// split against (`calc_group_shares`).
    fn set_group_load_elsewhere(&mut self, _uid: Uid, _load: u64) {}
}
