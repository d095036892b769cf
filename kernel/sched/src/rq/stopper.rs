//! A CPU's stopper (Linux's `stop_sched_class` and its one task, `migration/N`): a task
//! that the policy never sees and that goes before every task the policy has. Linux gives
//! each CPU one so that a running task can be moved: the stopper preempts it at once, and
//! once it is off the CPU — its registers saved, queued like any waiting task — the stopper
//! takes it off this runqueue and puts it on another's (`stop_one_cpu` with
//! `migration_cpu_stop` for a change of affinity, `active_load_balance_cpu_stop` for the
//! balancer's push, `sched_exec`'s move, CPU hotplug's drain).
//!
//! What the stopper does is the caller's (the kernel's migration thread, the simulator's
//! inline step); the runqueue only schedules it: [`Rq::wake_stopper`] makes it runnable
//! and asks for a reschedule, whatever the policy would say, the next [`Rq::pick`]
//! chooses it — again and again, should it be switched away from — until
//! [`Rq::stopper_sleeps`] ends its turn. While it runs the policy has no current task: the
//! tick charges nothing, and nothing the policy says preempts it (Linux's `wakeup_preempt`
//! never preempts a task of a higher class).

use super::Rq;
use super::sched_task::{SchedTask, State, TaskStats};
use crate::policy::{Nanos, Policy, TaskId};

impl<P: ?Sized + Policy> Rq<P> {
    /// Gives this CPU its stopper, task `task`, asleep until [`Rq::wake_stopper`].
    pub fn install_stopper(&mut self, task: TaskId, now: Nanos) {
        assert!(self.stopper.is_none(), "a CPU has one stopper");
        assert_ne!(task, self.idle, "the idle task is not the stopper");
        let sched = SchedTask {
            state: State::Sleeping,
            stats: TaskStats {
                asleep_since: Some(now),
                ..TaskStats::default()
            },
        };
        self.stopper = Some((task, sched));
    }

    /// This CPU's stopper's id, if it has one.
    pub fn stopper(&self) -> Option<TaskId> {
        self.stopper.as_ref().map(|&(task, _)| task)
    }

    /// Whether `task` is this CPU's stopper.
    pub fn is_stopper(&self, task: TaskId) -> bool {
        self.stopper() == Some(task)
    }

    /// Whether the running task is one of the policy's (neither the idle task nor the
    /// stopper).
    pub fn runs_policy_task(&self) -> bool {
        self.current_in_policy
    }

    /// The stopper has work: it becomes runnable, and the running task gives the CPU up at
    /// the next opportunity (Linux's `wakeup_preempt` always preempts for a higher class).
    /// Returns false if it was runnable already (or running: it looks for more work
    /// before it sleeps).
    pub fn wake_stopper(&mut self, now: Nanos) -> bool {
        let (_, sched) = self.stopper.as_mut().expect("a CPU with a stopper");
        if sched.state != State::Sleeping {
            return false;
        }
        sched.state = State::Runnable;
        sched.stats.runnable_since = Some(now);
        sched.stats.woken = true;
        if let Some(since) = sched.stats.asleep_since.take() {
            sched.stats.sleep_ns += now.saturating_sub(since);
        }
        self.stopper_queued = true;
        self.need_resched.set();
        true
    }

    /// The running stopper has no work left: it sleeps, and the pick that follows goes
    /// back to the policy.
    pub fn stopper_sleeps(&mut self, now: Nanos) {
        let current = self.current;
        assert!(
            self.is_stopper(current),
            "only the stopper calls stopper_sleeps"
        );
        let sched = self.stopper_task_mut(current);
        sched.state = State::Sleeping;
        sched.stats.asleep_since = Some(now);
        self.stopper_queued = false;
        self.need_resched.set();
    }

    /// Whether the stopper is runnable (then the next pick chooses it): from its wake-up
    /// to its sleep, as Linux counts a queued task in `nr_running`.
    pub fn stopper_runnable(&self) -> bool {
        self.stopper_queued
    }

    /// Whether the next [`Rq::pick`] would choose the idle task: no stopper to run and
    /// nothing queued in the policy. Only then does a CPU balance newly-idle before its pick:
    /// Linux's `pick_next_task_fair` balances where it finds nothing to run, which a
    /// runnable stopper, of a higher class, keeps it from reaching. The kernel's switch and
    /// the simulator's `schedule` both ask this, so they order the three alike.
    pub fn about_to_idle(&self) -> bool {
        !self.stopper_queued && self.policy.nothing_queued()
    }

    /// [`Rq::pick`]'s choice while the stopper is runnable. It stays runnable until it
    /// sleeps: if anything switches away from it before then (an interrupt's reschedule),
    /// the next pick chooses it again at once.
    #[cold]
    pub(super) fn pick_stopper(&mut self) -> TaskId {
        self.current_in_policy = false;
        self.stopper().expect("a queued stopper")
    }

    /// [`Rq::wake`] of a task this runqueue holds outside the policy: nothing to do (the
    /// idle task never sleeps; the stopper is woken by [`Rq::wake_stopper`] alone). Any
    /// other task is one it does not know.
    #[cold]
    pub(super) fn not_policy_task(&self, task: TaskId) -> bool {
        assert!(
            task == self.idle || self.is_stopper(task),
            "task {task}, which the runqueue does not know"
        );
        false
    }

    /// The stopper's scheduling part (`task` must be the stopper: any other task this
    /// runqueue does not know).
    #[cold]
    pub(super) fn stopper_task_mut(&mut self, task: TaskId) -> &mut SchedTask {
        match &mut self.stopper {
            Some((stopper, sched)) if *stopper == task => sched,
            _ => panic!("task {task}, which the runqueue does not know"),
        }
    }
}

#[cfg(test)]
mod tests;
