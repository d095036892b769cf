//! A task moving from one CPU's runqueue to another's (Linux's `deactivate_task`,
//! `set_task_cpu`, `activate_task`, and the migration stopper that takes a running task
//! off its CPU): [`Rq::detach`] on the CPU it leaves, [`Rq::attach`] on the one it joins,
//! and in between a [`Moving`] that holds its scheduling part and what the policy carries
//! ([`crate::policy::Migrant`]). The caller holds both runqueues (the kernel, its one
//! scheduler lock) and attaches only once the task's registers are saved on the CPU it
//! left.
//!
//! Two ways in: a task waiting or asleep is detached as it is — a running one is first
//! preempted by its CPU's stopper ([`super::stopper`]), and then waits like any other; a
//! child that starts on another CPU is set up by its parent's ([`Rq::fork_away`]).

use super::Rq;
use super::sched_task::{SchedTask, State, TaskStats};
use crate::policy::{Migrant, Nanos, Policy, TaskId, Wakeup};

/// A task between two runqueues ([`Rq::detach`] to [`Rq::attach`]): its scheduling part,
/// and what the policy of the CPU it left gives the policy of the CPU it joins.
#[derive(Debug)]
pub struct Moving {
    sched: SchedTask,
    migrant: Migrant,
}

impl<P: ?Sized + Policy> Rq<P> {
    /// Takes `task` off this runqueue to move it to another CPU's (the first half of a
    /// migration, Linux's `deactivate_task` + `set_task_cpu`): a task waiting for this CPU,
    /// or one asleep (which the move will wake). Its scheduling part and what the policy
    /// knew of it go to [`Rq::attach`].
    pub fn detach(&mut self, task: TaskId, now: Nanos) -> Moving {
        assert_ne!(task, self.current, "a task leaves its CPU before it moves");
        assert_ne!(task, self.idle, "the idle task never moves");
        assert!(!self.is_stopper(task), "the stopper never moves");
        let sched = self.tasks[task].take().expect("a task the runqueue knows");
        assert!(
            matches!(sched.state, State::Runnable | State::Sleeping),
            "task {task} moves while {:?}",
            sched.state
        );
        let migrant = self.policy.migrate_out(task, now);
        Moving { sched, migrant }
    }

    /// The parent (the current task) forks `child`, which starts on another CPU (Linux's
    /// `sched_fork` and `select_task_rq` with SD_BALANCE_FORK): set up by this CPU's policy,
    /// queued by the other's [`Rq::attach`].
    pub fn fork_away(&mut self, child: TaskId, now: Nanos) -> Moving {
        let parent = self.current;
        assert!(self.current_in_policy, "only a policy's task forks");
        let (migrant, preempt) = self.policy.fork_away(parent, child, now);
        self.resched_if(preempt);
        let sched = SchedTask {
            state: State::Runnable,
            stats: TaskStats {
                runnable_since: Some(now),
                ..TaskStats::default()
            },
        };
        Moving { sched, migrant }
    }

    /// The second half of a migration (`activate_task` on the new CPU): `task` joins this
    /// runqueue, placed by the policy as its era placed a migrated task — woken by the
    /// move (with `wakeup`) if it slept, still waiting otherwise. The current task is asked
    /// to give way if the policy says the arrival should preempt it.
    pub fn attach(&mut self, task: TaskId, moving: Moving, wakeup: Wakeup, now: Nanos) {
        assert_ne!(task, self.idle, "the idle task never moves");
        if task.index() >= self.tasks.len() {
            self.tasks.resize(task.index() + 1, None);
        }
        assert!(self.tasks[task].is_none(), "task {task} attached twice");
        let Moving { mut sched, migrant } = moving;
        let woken = (sched.state == State::Sleeping).then_some(wakeup);
        if let Some(since) = sched.stats.asleep_since.take() {
            // As in `Rq::wake`: `now` may predate the sleep on several CPUs.
            sched.stats.sleep_ns += now.saturating_sub(since);
        }
        if woken.is_some() {
            sched.stats.woken = true;
            sched.stats.runnable_since = Some(now);
        }
        sched.state = State::Runnable;
        self.tasks[task] = Some(sched);
        let preempt = self.policy.migrate_in(task, migrant, woken, now);
        self.resched_if(preempt);
    }
}
