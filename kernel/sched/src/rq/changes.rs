//! What changes a task or the policy while tasks run — a nice level, a uid, a tunable, a
//! feature, a group's shares — through the runqueue, which owns the policy. Each applies
//! from the policy's next decision. The stopper is not the policy's: a nice level or a uid
//! given to it changes nothing.

use super::Rq;
use crate::policy::{Nanos, Policy, TaskId, Uid};
use crate::weights::Nice;

impl<P: ?Sized + Policy> Rq<P> {
    /// Changes a task's nice value.
    pub fn set_nice(&mut self, task: TaskId, nice: Nice, now: Nanos) {
        if !self.is_stopper(task) {
            self.policy.set_nice(task, nice, now);
        }
    }

    /// Changes a task's uid (and so, with per-uid groups, its group).
    pub fn set_uid(&mut self, task: TaskId, uid: Uid, now: Nanos) {
        if !self.is_stopper(task) {
            self.policy.set_uid(task, uid, now);
        }
    }

    /// Writes a tunable (a sysctl); it applies from the next decision.
    pub fn set_tunable(
        &mut self,
        tunable: crate::Tunable,
        value: u64,
    ) -> Result<(), crate::KnobError> {
        self.policy.set_tunable(tunable, value)
    }

    /// Turns a feature on or off (a write to `sched_features`).
    pub fn set_feature(
        &mut self,
        feature: crate::Feature,
        on: bool,
    ) -> Result<(), crate::KnobError> {
        self.policy.set_feature(feature, on)
    }

    /// Gives uid `uid`'s group weight `shares`; returns the weight given.
    pub fn set_group_shares(
        &mut self,
        uid: Uid,
        shares: u64,
        now: Nanos,
    ) -> Result<u64, crate::KnobError> {
        self.policy.set_group_shares(uid, shares, now)
    }

    /// Gives uid `uid`'s group entity on this CPU `weight`, its part of the group's shares
    /// (`crate::smp::shares`).
    pub fn set_group_weight_here(&mut self, uid: Uid, weight: u64, now: Nanos) {
        self.policy.set_group_weight_here(uid, weight, now);
    }

    /// 6.6: every queue's load averages decay to `now` (`update_blocked_averages`).
    pub fn update_blocked_averages(&mut self, now: Nanos) {
        self.policy.update_blocked_averages(now);
    }

    /// 6.6: group `uid`'s load on every other CPU, which its shares here are split against.
    pub fn set_group_load_elsewhere(&mut self, uid: Uid, load: u64) {
        self.policy.set_group_load_elsewhere(uid, load);
    }
}
