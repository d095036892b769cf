//! A runqueue's first task and its policy's replacement (Linux's `sched_init` and
//! `init_idle` make the boot flow the first task; Linux has no replacement of a class's
//! state, which the lab needs): the boot flow becomes a task without a switch, and between
//! two lab scenarios a new policy takes over from the old
//! with only that task alive (each CPU's idle task and stopper are never the policy's, so
//! they stay as they are).

use super::Rq;
use super::sched_task::State;
use crate::policy::{Nanos, Policy, TaskId, Uid};
use crate::weights::Nice;
use alloc::boxed::Box;

impl<P: ?Sized + Policy> Rq<P> {
    /// The boot flow becomes `task`, which runs at once without a switch (the kernel's
    /// task 0; a new policy's first task, [`Rq::replace_policy`]).
    pub fn run_boot_task(&mut self, task: TaskId, uid: Uid, nice: Nice, now: Nanos) {
        self.add(task, now);
        self.policy.spawn(task, uid, nice, now);
        let picked = self.policy.pick_next(now);
        assert_eq!(picked, Some(task), "the only runnable task is picked");
        self.current = task;
        self.current_in_policy = true;
        let t = self.task_mut(task);
        t.state = State::Running;
        t.stats.runnable_since = None;
        t.stats.switched_in_at = now;
    }

    /// Replaces the policy: only the current task may be alive besides the idle task (the
    /// caller checks); it is registered with `policy` (as `uid`, `nice`) and keeps running.
    pub fn replace_policy(&mut self, policy: Box<P>, uid: Uid, nice: Nice, now: Nanos) {
        let current = self.current;
        assert!(
            self.current_in_policy,
            "a policy's task replaces the policy"
        );
        self.policy = policy;
        self.policy.spawn(current, uid, nice, now);
        let picked = self.policy.pick_next(now);
        assert_eq!(picked, Some(current), "the only runnable task is picked");
    }

    /// Replaces the policy of a runqueue whose CPU runs its idle task and has no other task
    /// (another CPU's, while the boot task's changes policy with [`Rq::replace_policy`]).
    pub fn replace_idle_policy(&mut self, policy: Box<P>) {
        // Its stopper may still be current, asleep but not yet switched away from.
        assert!(!self.current_in_policy, "an idle CPU's policy is replaced");
        assert!(
            self.tasks
                .iter()
                .flatten()
                .all(|t| t.state == State::Exited),
            "a CPU with tasks keeps its policy"
        );
        self.policy = policy;
    }
}
