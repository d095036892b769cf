//! One CPU's runqueue and the scheduling protocol, written once (Linux's `struct rq` and the
//! order in which kernel/sched/core.c calls a `sched_class`: `__schedule`, `try_to_wake_up`,
//! `scheduler_tick`, `wake_up_new_task`, `do_exit`, `sched_yield`).
//!
//! A [`Policy`] decides; an [`Rq`] owns everything around the decision that must be the same
//! wherever the policy runs: which task is current and which is idle, the one
//! `need_resched` flag, each task's [`State`] and [`TaskStats`], and the order of the calls
//! into the policy. The kernel (under its scheduler lock) and the host simulator
//! ([`crate::sim`]) both drive an `Rq`; neither calls the policy's mutating methods itself,
//! so the two cannot take different steps (a test in `tests/protocol.rs` checks that no
//! other file does).
//!
//! What an `Rq` does *not* do: it switches no stacks, reads no clock (every call gets `now`,
//! or for [`Rq::pick`] a way to read it), and knows nothing of processes, files or memory.
//! Each `Rq` has a CPU index: one CPU has one, as Linux has one `struct rq` per CPU.
//!
//! The rules (docs/scheduler.md, "The protocol"):
//! - a wake-up of a task that is not asleep does nothing (Linux's `try_to_wake_up` checks
//!   the task's state first);
//! - a task going to sleep leaves the policy's queue at once (`dequeue_task`), but stays
//!   current until the next [`Rq::pick`] (`put_prev_task`);
//! - the idle task is never given to the policy, and gives way to any runnable task;
//! - the stopper, where there is one, is never given to the policy either, and goes before
//!   every task the policy has (Linux's `stop_sched_class`, see [`stopper`]);
//! - the task [`Rq::pick`] chooses must be runnable: asserted in every build.

mod changes;
mod first_task;
mod migration;
mod resched;
mod sched_task;
mod stopper;

pub use migration::Moving;
pub use resched::ReschedFlag;

pub use sched_task::{PrevState, SchedTask, State, TaskStats, Waited};

use crate::policy::{ForkKind, Nanos, Policy, TaskId, Uid, Wakeup};
use crate::weights::Nice;
use alloc::boxed::Box;
use alloc::vec::Vec;
use sched_task::{switch_in, switch_out};

/// What [`Rq::pick`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick {
    /// The task that was current (it may be `next` again).
    pub prev: TaskId,
    /// The task that runs now.
    pub next: TaskId,
    /// How `prev` left the CPU.
    pub prev_state: PrevState,
    /// The wait `next` ended, if it was waiting.
    pub waited: Option<Waited>,
    /// The time of the pick.
    pub now: Nanos,
}

impl Pick {
    /// Whether the CPU changes task (a context switch follows).
    pub fn switches(&self) -> bool {
        self.prev != self.next
    }
}

/// One CPU's runqueue: the policy, the current and idle tasks, `need_resched`, and the
/// scheduling part of every task on this CPU, indexed by [`TaskId`].
pub struct Rq<P: ?Sized + Policy> {
    cpu: usize,
    current: TaskId,
    idle: TaskId,
    need_resched: ReschedFlag,
    /// The clock the running task read as it yielded: the pick that follows at once uses
    /// it (Linux's `rq_clock_skip_update` in `yield_task_fair`): nothing has run since,
    /// and a second charge of a few nanoseconds would only repeat `update_curr`'s work.
    yielded_at: Option<Nanos>,
    /// Picks that changed the task.
    nr_switches: u64,
    /// Whether the current task is one of the policy's: neither the idle task nor the
    /// stopper. Kept as the pick decides, so that the hot paths test one flag.
    current_in_policy: bool,
    idle_task: SchedTask,
    /// This CPU's stopper, if it has one ([`Rq::install_stopper`]): its id and scheduling
    /// part.
    stopper: Option<(TaskId, SchedTask)>,
    /// Whether the stopper is runnable, from [`Rq::wake_stopper`] to
    /// [`Rq::stopper_sleeps`]: every pick meanwhile chooses it. (Its state says as much —
    /// not asleep — but the pick, on every switch, tests this one flag instead.)
    stopper_queued: bool,
    tasks: Vec<Option<SchedTask>>,
    policy: Box<P>,
}

impl<P: ?Sized + Policy> Rq<P> {
    /// CPU `cpu`'s runqueue under `policy`, running its idle task, whose id is `idle` (the
    /// kernel's idle thread has a slot like any task; the simulator's is a number no task
    /// has).
    pub fn new(cpu: usize, policy: Box<P>, idle: TaskId) -> Self {
        Rq {
            cpu,
            current: idle,
            idle,
            need_resched: ReschedFlag::default(),
            yielded_at: None,
            nr_switches: 0,
            current_in_policy: false,
            // Runnable, not Running: until a first pick switches to it, the boot flow (or
            // nothing, in the simulator) is on the CPU.
            idle_task: SchedTask {
                state: State::Runnable,
                stats: TaskStats::default(),
            },
            stopper: None,
            stopper_queued: false,
            tasks: Vec::new(),
            policy,
        }
    }

    /// The CPU this runqueue belongs to.
    pub fn cpu(&self) -> usize {
        self.cpu
    }

    /// The running task (the idle task if nothing else runs).
    pub fn current(&self) -> TaskId {
        self.current
    }

    /// The idle task's id.
    pub fn idle(&self) -> TaskId {
        self.idle
    }

    /// Whether the current task should give the CPU up at the next opportunity (Linux's
    /// TIF_NEED_RESCHED): the one flag, asked by the kernel's interrupt return and by the
    /// simulator's loop alike.
    pub fn need_resched(&self) -> bool {
        self.need_resched.is_set()
    }

    /// A handle on `need_resched` that reads it without the runqueue: what the kernel's
    /// interrupt return and idle loop look at (see [`ReschedFlag`]).
    pub fn resched_flag(&self) -> ReschedFlag {
        self.need_resched.clone()
    }

    /// Picks that changed the task.
    pub fn nr_switches(&self) -> u64 {
        self.nr_switches
    }

    /// The policy, to read (reports, `/proc`, gdb). Changes go through the `Rq`.
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// The scheduling part of `task`, if the runqueue knows it.
    pub fn get(&self, task: TaskId) -> Option<&SchedTask> {
        if task == self.idle {
            return Some(&self.idle_task);
        }
        match self.tasks.get(task.index()) {
            Some(Some(t)) => Some(t),
            _ => self
                .stopper
                .as_ref()
                .filter(|(s, _)| *s == task)
                .map(|(_, t)| t),
        }
    }

    /// `task`'s state (it must be known).
    pub fn state(&self, task: TaskId) -> State {
        self.sched_task(task).state
    }

    /// `task`'s statistics (it must be known).
    pub fn stats(&self, task: TaskId) -> &TaskStats {
        &self.sched_task(task).stats
    }

    fn sched_task(&self, task: TaskId) -> &SchedTask {
        self.get(task).expect("a task the runqueue knows")
    }

    #[inline(always)]
    fn task_mut(&mut self, task: TaskId) -> &mut SchedTask {
        if task == self.idle {
            return &mut self.idle_task;
        }
        match self.tasks.get_mut(task.index()) {
            Some(Some(t)) => t,
            _ => self.stopper_task_mut(task),
        }
    }

    /// Registers `task` as runnable since `now`; the policy is told by the caller.
    fn add(&mut self, task: TaskId, now: Nanos) {
        assert_ne!(task, self.idle, "the idle task is never added");
        assert!(!self.is_stopper(task), "the stopper is never added");
        if task.index() >= self.tasks.len() {
            self.tasks.resize(task.index() + 1, None);
        }
        assert!(self.tasks[task].is_none(), "task {task} added twice");
        self.tasks[task] = Some(SchedTask {
            state: State::Runnable,
            stats: TaskStats {
                runnable_since: Some(now),
                ..TaskStats::default()
            },
        });
    }

    /// A preemption request from the policy: the current task gives way at the next
    /// opportunity — if it is the policy's (the stopper gives way to nothing); the idle task
    /// gives way to whatever arrives.
    fn resched_if(&mut self, preempt: bool) {
        if preempt && self.current_in_policy || self.current == self.idle {
            self.need_resched.set();
        }
    }

    /// A task that belongs to no parent (one the kernel starts itself) becomes runnable,
    /// placed as a newcomer.
    pub fn spawn(&mut self, task: TaskId, uid: Uid, nice: Nice, now: Nanos) {
        self.add(task, now);
        let preempt = self.policy.spawn(task, uid, nice, now);
        self.resched_if(preempt);
    }

    /// The current task forked `child` (Linux's `sched_fork` + `wake_up_new_task`). After a
    /// vfork the caller puts the parent to sleep ([`Rq::block_current`]) until the child
    /// exec's or exits, and wakes it with [`Wakeup::vfork_parent`] (Linux's
    /// `wait_for_vfork_done`, a step of the process model, not of the scheduler).
    pub fn fork(&mut self, child: TaskId, kind: ForkKind, now: Nanos) {
        let parent = self.current;
        assert!(self.current_in_policy, "only a policy's task forks");
        self.add(child, now);
        let preempt = self.policy.fork(parent, child, kind, now);
        self.resched_if(preempt);
    }

    /// Wakes `task` if it sleeps (`try_to_wake_up`): it is queued, and the current task is
    /// asked to give way if the policy says the woken one should preempt it. A wake-up of a
    /// task that is not asleep does nothing; returns whether the task woke.
    pub fn wake(&mut self, task: TaskId, wakeup: Wakeup, now: Nanos) -> bool {
        let t = match self.tasks.get_mut(task.index()) {
            Some(Some(t)) if t.state == State::Sleeping => t,
            Some(Some(_)) => return false,
            // Not the policy's: the idle task never sleeps, and the stopper is woken by
            // `wake_stopper` alone (it must never reach the policy's queue).
            _ => return self.not_policy_task(task),
        };
        t.state = State::Runnable;
        t.stats.runnable_since = Some(now);
        t.stats.woken = true;
        if let Some(since) = t.stats.asleep_since.take() {
            // On several CPUs a waker's `now` may predate the sleep it ends: a timer read
            // the clock, then another CPU woke the task and it slept again before the
            // timer's wake-up took the lock. That sleep counts from its own start (Linux's
            // deltas of a runqueue's clock are checked the same way, never negative).
            t.stats.sleep_ns += now.saturating_sub(since);
        }
        self.policy.enqueue(task, wakeup, now);
        // While the idle task or the stopper runs, the policy has no current task to
        // weigh the wakee against (the idle task gives way anyway, the stopper never).
        let preempt = self.current_in_policy && self.policy.check_preempt_wakeup(task, now);
        self.resched_if(preempt);
        true
    }

    /// The current task stops being runnable: it leaves the policy's queue now and the CPU
    /// at the next [`Rq::pick`].
    pub fn block_current(&mut self, now: Nanos) {
        let current = self.current;
        assert!(self.current_in_policy, "only a policy's task blocks");
        let t = self.task_mut(current);
        t.state = State::Sleeping;
        t.stats.asleep_since = Some(now);
        self.policy.dequeue(current, now);
        self.need_resched.set();
    }

    /// The current task ends (`do_exit`): it leaves the CPU at the next [`Rq::pick`] for
    /// the last time; then [`Rq::remove`] forgets it.
    pub fn exit_current(&mut self, now: Nanos) {
        let current = self.current;
        assert!(self.current_in_policy, "only a policy's task exits");
        self.task_mut(current).state = State::Exited;
        self.policy.exit(current, now);
        self.need_resched.set();
    }

    /// Forgets an exited task that has left the CPU; returns its last scheduling part.
    pub fn remove(&mut self, task: TaskId) -> SchedTask {
        assert_ne!(task, self.current, "the running task is not removed");
        let t = self.tasks[task].take().expect("a task the runqueue knows");
        assert_eq!(t.state, State::Exited, "only an exited task is removed");
        t
    }

    /// The periodic tick (`scheduler_tick`): charges the tick to user or system time by
    /// `user_mode` (where the tick found the CPU) and lets the policy ask for a preemption.
    pub fn tick(&mut self, now: Nanos, user_mode: bool) {
        let current = self.current;
        if !self.current_in_policy {
            return;
        }
        let stats = &mut self.task_mut(current).stats;
        if user_mode {
            stats.user_ticks += 1;
        } else {
            stats.system_ticks += 1;
        }
        let preempt = self.policy.tick(now);
        self.resched_if(preempt);
    }

    /// The current task yields (`sched_yield`); the pick that follows reuses `now`.
    pub fn yield_current(&mut self, now: Nanos) {
        if self.current_in_policy && self.policy.yield_now(now) {
            self.need_resched.set();
            self.yielded_at = Some(now);
        }
    }

    /// `__schedule`: the current task goes back to the policy, the stopper if it is
    /// runnable — else the policy, else the idle task — is picked, and the statistics of
    /// both are brought up to date. `clock` is read unless the current task has just
    /// yielded (see `yielded_at`).
    #[inline(always)]
    pub fn pick(&mut self, clock: impl FnOnce() -> Nanos) -> Pick {
        let yielded_at = self.yielded_at.take();
        let now = yielded_at.unwrap_or_else(clock);
        self.need_resched.clear();
        let prev = self.current;
        let prev_is_idle = prev == self.idle;
        if self.current_in_policy {
            self.policy.put_prev(prev, now);
        }
        let prev_state = switch_out(self.task_mut(prev), now, yielded_at.is_some(), prev_is_idle);
        let next = if self.stopper_queued {
            self.pick_stopper()
        } else {
            let picked = self.policy.pick_next(now);
            self.current_in_policy = picked.is_some();
            picked.unwrap_or(self.idle)
        };
        self.current = next;
        let n = self.task_mut(next);
        assert!(
            n.state == State::Runnable,
            "picked task {next}, which is not runnable"
        );
        let waited = switch_in(n, now);
        if next != prev {
            n.stats.switches += 1;
            self.nr_switches += 1;
        }
        Pick {
            prev,
            next,
            prev_state,
            waited,
            now,
        }
    }
}

#[cfg(test)]
mod tests;
