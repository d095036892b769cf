//! A group's entity under 6.6's load tracking (kernel/sched/fair.c:
//! `propagate_entity_load_avg`, `update_tg_load_avg`, `calc_group_shares`,
//! `update_cfs_group`, `task_h_load`): what a change in a group's queue does to its entity
//! one level up, the group's load summed over CPUs, the weight the entity takes from it,
//! and a task's load as the root sees it through its group.

use super::super::entity::EntityId;
use super::super::runqueue::RqId;
use super::super::{Fair, ROOT};
use super::{MIN_SHARES, add_positive};
use crate::pelt::PELT_MIN_DIVIDER;
use crate::policy::{Nanos, TaskId, Uid};

/// `calc_group_shares` (6.6): the weight of a group of `tg_shares` on a CPU where its
/// runqueue has `weight` queued now and a PELT average `load_avg`; `tg_load_avg` is the
/// group's total over the CPUs as last published (`tg->load_avg`), which holds this CPU's
/// `contrib` (its `tg_load_avg_contrib`) — replaced here by the fresher figure.
pub fn calc_group_shares(
    tg_shares: u64,
    weight: u64,
    load_avg: u64,
    tg_load_avg: u64,
    contrib: u64,
) -> u64 {
    let load = weight.max(load_avg) as i64;
    let tg_weight = tg_load_avg as i64 - contrib as i64 + load;
    // Linux skips a division by nothing, leaving the shares × load.
    let shares = (tg_shares as i64 * load)
        .checked_div(tg_weight)
        .unwrap_or(tg_shares as i64 * load);
    (shares.max(0) as u64).clamp(MIN_SHARES, tg_shares)
}

/// `update_tg_load_avg` (6.6): a CPU publishes its runqueue's new `load_avg` into the
/// group's total only when it moved by more than 1/64 of what it published last (the
/// total is shared by every CPU, and written rarely). Returns the change to add to the
/// total, if any.
pub fn tg_load_avg_change(load_avg: u64, contrib: u64) -> Option<i64> {
    let delta = load_avg as i64 - contrib as i64;
    (delta.unsigned_abs() > contrib / 64).then_some(delta)
}

/// One signal of `update_tg_cfs_util`/`_runnable`/`_load`: a group's entity takes the
/// average and sum `new` (the sum counted at `weight` in its runqueue), and its runqueue
/// the difference — nothing if the average is unchanged.
fn take_over(parent: (&mut u64, &mut u64), se: (&mut u64, &mut u64), new: (u64, u64), weight: u64) {
    let delta_avg = new.0 as i64 - *se.0 as i64;
    if delta_avg == 0 {
        return;
    }
    let delta_sum = (weight * new.1) as i64 - (weight * *se.1) as i64;
    (*se.0, *se.1) = new;
    add_positive(parent.0, delta_avg);
    add_positive(parent.1, delta_sum);
    *parent.1 = (*parent.1).max(*parent.0 * PELT_MIN_DIVIDER);
}

impl Fair {
    /// A new group's entity joins the root's averages, with nothing to add.
    pub(in crate::fair) fn attach_group_entity(&mut self, group: EntityId) {
        self.attach_entity_load_avg(ROOT, group);
    }

    /// `propagate_entity_load_avg`: a group's entity takes what was attached to or
    /// detached from its queue — utilisation and runnable as the queue's own, load from the
    /// runnable time passed up (`update_tg_cfs_util`, `_runnable`, `_load`); its runqueue
    /// takes the difference. Whether anything was passed up.
    pub(in crate::fair) fn propagate_entity_load_avg(&mut self, id: EntityId) -> bool {
        let Some(gq) = self.se(id).my_q else {
            return false;
        };
        if !self.rq(gq).propagate {
            return false;
        }
        let rq = self.se(id).rq;
        let runnable_sum = core::mem::take(&mut self.rq_mut(gq).prop_runnable_sum);
        self.rq_mut(gq).propagate = false;
        self.add_tg_cfs_propagate(rq, runnable_sum);
        let (group, load_weight) = (self.rq(gq).avg, self.rq(gq).load);
        let weight = self.se(id).weight;
        let divider = self.rq(rq).avg.divider();
        let mut se = self.se(id).avg;
        let mut parent = self.rq(rq).avg;
        // Utilisation and runnable: the queue's own averages.
        take_over(
            (&mut parent.util_avg, &mut parent.util_sum),
            (&mut se.util_avg, &mut se.util_sum),
            (group.util_avg, group.util_avg * divider),
            1,
        );
        take_over(
            (&mut parent.runnable_avg, &mut parent.runnable_sum),
            (&mut se.runnable_avg, &mut se.runnable_sum),
            (group.runnable_avg, group.runnable_avg * divider),
            1,
        );
        // Load: the runnable time added (as if it overlapped nothing, up to a full
        // window), or the queue's per-task share of what is left after a removal — never
        // less than the time it ran.
        if runnable_sum != 0 {
            let runnable = if runnable_sum > 0 {
                (runnable_sum as u64 + se.load_sum).min(divider)
            } else {
                let per_task = group.load_sum.checked_div(load_weight).unwrap_or(0);
                se.load_sum.min(per_task)
            };
            let runnable = runnable.max(se.util_sum >> 10);
            take_over(
                (&mut parent.load_avg, &mut parent.load_sum),
                (&mut se.load_avg, &mut se.load_sum),
                (weight * runnable / divider, runnable),
                weight,
            );
        }
        self.se_mut(id).avg = se;
        self.rq_mut(rq).avg = parent;
        true
    }

    /// `update_tg_load_avg`: a group's queue publishes its load to the group's sum over
    /// CPUs ([`tg_load_avg_change`]; the root has no group).
    pub(in crate::fair) fn update_tg_load_avg(&mut self, rq: RqId) {
        if rq == ROOT {
            return;
        }
        let q = self.rq_mut(rq);
        if tg_load_avg_change(q.avg.load_avg, q.tg_load_avg_contrib).is_some() {
            q.tg_load_avg_contrib = q.avg.load_avg;
        }
    }

    /// [`calc_group_shares`] for the group's queue `gq`: the group's shares times this
    /// queue's part of the group's load over every CPU.
    fn group_shares_here(&self, gq: RqId, uid: Uid) -> u64 {
        let q = self.rq(gq);
        let contrib = q.tg_load_avg_contrib;
        let tg_load_avg = q.tg_load_avg_elsewhere + contrib;
        calc_group_shares(
            self.params.shares_of(uid),
            q.load,
            q.avg.load_avg,
            tg_load_avg,
            contrib,
        )
    }

    /// `update_cfs_group`: a group's entity takes its shares as they are now.
    pub(in crate::fair) fn update_cfs_group(&mut self, id: EntityId, now: Nanos) {
        let Some(gq) = self.se(id).my_q else { return };
        let shares = self.group_shares_here(gq, self.se(id).uid);
        if shares != self.se(id).weight {
            self.reweight_group_entity(id, shares, now);
        }
    }

    /// A task entity's load as the balancer reads it: `task_h_load` in 6.6, its weight in
    /// the eras that do not track load.
    pub(in crate::fair) fn h_load_of(&self, id: EntityId) -> u64 {
        let se = self.se(id);
        match se.task {
            Some(task) if self.tracks_load() => self.task_h_load(task),
            _ => se.weight,
        }
    }

    /// `task_h_load`: `task`'s load as its CPU's root sees it — its average times its
    /// queue's part of the root's (`h_load`), over its queue's average.
    pub(in crate::fair) fn task_h_load(&self, task: TaskId) -> u64 {
        let se = self.se(self.task_se(task));
        let Some(group) = self.rq(se.rq).owner else {
            return se.avg.load_avg;
        };
        let root = self.rq(ROOT).avg.load_avg;
        let h_load = root * self.se(group).avg.load_avg / (root + 1);
        se.avg.load_avg * h_load / (self.rq(se.rq).avg.load_avg + 1)
    }

    /// The load each group's queue here has published (`tg_load_avg_contrib`).
    pub(in crate::fair) fn group_load_contribs(&self) -> alloc::vec::Vec<(Uid, u64)> {
        self.groups
            .iter()
            .map(|(&uid, &group)| {
                let q = self.se(group).my_q.expect("a group owns a queue");
                (uid, self.rq(q).tg_load_avg_contrib)
            })
            .collect()
    }

    /// Group `uid`'s load on every other CPU (`tg->load_avg` less this queue's part).
    pub(in crate::fair) fn set_group_load_elsewhere(&mut self, uid: Uid, load: u64) {
        if let Some(&group) = self.groups.get(&uid) {
            let q = self.se(group).my_q.expect("a group owns a queue");
            self.rq_mut(q).tg_load_avg_elsewhere = load;
        }
    }
}
