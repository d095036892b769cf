//! The fair class's knobs turned while tasks run (`crate::knobs`): tunables and features
//! take effect at the next decision; a group's new weight needs the group entity taken off
//! its runqueue's sums and put back, as 2.6.24's `set_se_shares` does.

use super::{Fair, ROOT};
use crate::knobs::{KnobError, Tunable};
use crate::params::{Feature, Grouping};
use crate::policy::{Nanos, Uid};

impl Fair {
    pub(super) fn write_tunable(&mut self, tunable: Tunable, value: u64) -> Result<(), KnobError> {
        self.params.set_tunable(tunable, value)
    }

    /// Only the features of this policy (`Feature::applies_to`), as `sched_features` lists.
    pub(super) fn write_feature(&mut self, feature: Feature, on: bool) -> Result<(), KnobError> {
        if !feature.applies_to(self.eevdf()) {
            return Err(KnobError::NotThisPolicy);
        }
        self.params.features.set(feature, on);
        Ok(())
    }

    pub(super) fn shares_by_uid(&self) -> alloc::vec::Vec<(Uid, u64)> {
        self.groups
            .iter()
            .map(|(&uid, &group)| (uid, self.se(group).weight))
            .collect()
    }

    /// `sched_group_set_shares` → `set_se_shares` (2.6.24): a queued group entity leaves
    /// the root runqueue's load (and timeline, unless it is running), takes the new weight
    /// and comes back with its vruntime unchanged. From then on it earns vruntime at the new
    /// rate, so the uids' split follows the weights. (6.6's `reweight_entity` also rescales
    /// an EEVDF entity's lag; cfslab keeps its vruntime under EEVDF too.) A uid without a
    /// group yet gets the weight when its group is made.
    pub(super) fn reweight_group(
        &mut self,
        uid: Uid,
        shares: u64,
        now: Nanos,
    ) -> Result<u64, KnobError> {
        if self.params.grouping != Grouping::Uid {
            return Err(KnobError::NotThisPolicy);
        }
        let shares = self.params.set_shares(uid, shares);
        if let Some(&group) = self.groups.get(&uid) {
            self.reweight_group_entity(group, shares, now);
        }
        Ok(shares)
    }

    /// `update_group_shares_cpu` → `__set_se_shares` (2.6.27–2.6.37): uid `uid`'s group
    /// entity on this CPU takes `weight`, its part of the group's shares (`smp::shares`);
    /// the shares as set stay. Nothing if the uid has no group here.
    pub(super) fn set_group_weight_here(&mut self, uid: Uid, weight: u64, now: Nanos) {
        if let Some(&group) = self.groups.get(&uid) {
            self.reweight_group_entity(group, weight, now);
        }
    }

    /// A group entity takes `weight` (`reweight_entity`): a queued one leaves the root
    /// runqueue's load (and timeline, unless it is running) and comes back with its
    /// vruntime unchanged. 6.6 (as v6.6 released it) also keeps the entity's deadline the
    /// same *weighted* distance away — a slice of `weight` is longer or shorter in virtual
    /// time — and scales a sleeping entity's lag, and its load average follows the weight.
    pub(super) fn reweight_group_entity(&mut self, group: usize, weight: u64, now: Nanos) {
        let on_rq = self.se(group).on_rq;
        let running = self.rq(ROOT).curr == Some(group);
        if on_rq {
            self.update_curr(ROOT, now);
            if !running {
                self.timeline_remove(ROOT, group);
            }
            let old = self.se(group).weight;
            self.rq_mut(ROOT).load -= old;
        }
        if self.tracks_load() {
            self.reweight_load_avg(ROOT, group, weight);
        }
        if self.eevdf() {
            let se = self.se_mut(group);
            let old = i128::from(se.weight);
            if on_rq {
                let rel = i128::from(se.deadline.wrapping_sub(se.vruntime) as i64);
                se.deadline = se
                    .vruntime
                    .wrapping_add((rel * old / i128::from(weight)) as i64 as u64);
            } else {
                se.vlag = (i128::from(se.vlag) * old / i128::from(weight)) as i64;
            }
        }
        self.se_mut(group).weight = weight;
        if on_rq {
            self.rq_mut(ROOT).load += weight;
            if !running {
                self.timeline_insert(ROOT, group);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::params::{Era, FairParams, Feature};
    use crate::policy::{Policy, TaskId};
    use crate::{Fair, KnobError, Tunable};

    const MS: u64 = 1_000_000;

    /// Two always-runnable tasks, uid 1 and uid 2, one group each; runs them for `ms`
    /// milliseconds of 1 ms ticks and returns each one's CPU time.
    fn split(fair: &mut Fair, from: u64, ms: u64) -> (u64, u64) {
        let before = (
            fair.task_info(TaskId::new(0)).unwrap().sum_exec_runtime,
            fair.task_info(TaskId::new(1)).unwrap().sum_exec_runtime,
        );
        let mut now = from;
        for _ in 0..ms {
            now += MS;
            if fair.tick(now) {
                let prev = fair.current().unwrap();
                fair.put_prev(prev, now);
                fair.pick_next(now);
            }
        }
        (
            fair.task_info(TaskId::new(0)).unwrap().sum_exec_runtime - before.0,
            fair.task_info(TaskId::new(1)).unwrap().sum_exec_runtime - before.1,
        )
    }

    #[test]
    fn a_group_weight_written_at_run_time_sets_the_split() {
        // 2.6.24's per-uid groups, equal weights: 50/50. After uid 1's cpu_share becomes
        // 3072 (three times uid 2's 1024), its tasks get 3/4 of the CPU.
        let mut fair = Fair::new(FairParams::preset(Era::V2_6_24));
        fair.spawn(TaskId::new(0), 1, 0, 0);
        fair.spawn(TaskId::new(1), 2, 0, 0);
        fair.pick_next(0);
        let (a, b) = split(&mut fair, 0, 2000);
        assert!(a.abs_diff(b) <= 40 * MS, "equal weights: {a} vs {b}");
        assert_eq!(fair.set_group_shares(1, 3072, 2000 * MS), Ok(3072));
        assert!(fair.group_shares().contains(&(1, 3072)));
        let (a, b) = split(&mut fair, 2000 * MS, 4000);
        let share = a as f64 / (a + b) as f64;
        assert!((0.73..=0.77).contains(&share), "uid 1's share {share}");
        // Linux's clamp, and no groups without per-uid grouping.
        assert_eq!(fair.set_group_shares(2, 1, 6000 * MS), Ok(2));
        let mut flat = Fair::new(FairParams::preset(Era::V2_6_36));
        assert_eq!(
            flat.set_group_shares(1, 512, 0),
            Err(KnobError::NotThisPolicy)
        );
    }

    #[test]
    fn features_and_tunables_are_this_policys_only() {
        let mut cfs = Fair::new(FairParams::preset(Era::V2_6_36));
        assert_eq!(cfs.set_feature(Feature::StartDebit, false), Ok(()));
        assert!(!cfs.fair_params().unwrap().features.has(Feature::StartDebit));
        assert_eq!(
            cfs.set_feature(Feature::PlaceLag, true),
            Err(KnobError::NotThisPolicy)
        );
        assert_eq!(cfs.set_tunable(Tunable::Latency, 12 * MS), Ok(()));
        assert_eq!(cfs.fair_params().unwrap().tunables.latency_ns, 12 * MS);
        let mut o1 = crate::O1::new(MS);
        assert_eq!(
            o1.set_tunable(Tunable::Latency, 12 * MS),
            Err(KnobError::NotThisPolicy)
        );
        assert!(o1.fair_params().is_none());
    }
}
