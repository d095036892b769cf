//! 6.6's per-entity load tracking driven through the fair class (kernel/sched/fair.c:
//! `update_load_avg`, `attach_entity_load_avg`, `detach_entity_load_avg`,
//! `propagate_entity_load_avg`, `update_tg_load_avg`, `calc_group_shares`,
//! `update_cfs_group`, `__update_blocked_fair`, `task_h_load`). The arithmetic of one
//! average is [`crate::pelt`]'s; this module says *when* each entity's and each
//! runqueue's averages move, and what reads them:
//!
//! - every enqueue, dequeue, tick and switch brings the entity and its runqueue up to now,
//!   the entity counted as queued, runnable and running as it was since its last update;
//! - a task arriving on a runqueue is *attached* (its averages added to the runqueue's),
//!   one leaving for another CPU or group *detached*; a group's entity one level up takes
//!   the change at once (propagation), so that a migration moves a CPU's load immediately
//!   and not over the ~100 ms of a decay;
//! - a group's entity weighs `calc_group_shares`: the group's shares times this CPU's part
//!   of the group's load (`tg->load_avg`, summed over every CPU by the caller, which holds
//!   them all: [`crate::smp::runqueues`]);
//! - the balancer reads a CPU's load as its root runqueue's `load_avg` and a task's as
//!   `task_h_load`: its own average scaled by its group's part of the root.
//!
//! Only 6.6 tracks load: the CFS eras balanced on instantaneous weights (`cpu_load[]`),
//! and computing averages nobody reads would cost their switches.
//!
//! Two simplifications, both because cfslab's mover holds both runqueues (the simulator
//! holds every one; the kernel's movers take the two a move touches): a waking task that
//! moves is detached from its old runqueue at once, where Linux queues it as `removed` for
//! that CPU to subtract at its next update; and a task's `h_load` is computed when asked,
//! where Linux caches it per jiffy.

use super::entity::EntityId;
use super::runqueue::RqId;
use super::{Fair, ROOT};
use crate::pelt::{Activity, Avg, PELT_MIN_DIVIDER};
use crate::policy::Nanos;

/// `MIN_SHARES` in 6.6, unscaled (2): the least weight a group's entity gets on a CPU,
/// small enough that a group may be split over many CPUs.
pub const MIN_SHARES: u64 = *crate::knobs::SHARES.start();

/// What an update does besides bringing the averages up to now (`update_load_avg`'s
/// `DO_ATTACH` and `DO_DETACH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Track {
    /// Only the averages.
    Update,
    /// The entity arrives: attach it if it is not attached yet (`DO_ATTACH`).
    Attach,
    /// The entity leaves for another CPU (`DO_DETACH`).
    Detach,
}

/// `sub_positive`: `a − b`, not below 0.
fn sub_positive(a: &mut u64, b: u64) {
    *a = a.saturating_sub(b);
}

/// `add_positive`: `a + delta`, not below 0.
pub(super) fn add_positive(a: &mut u64, delta: i64) {
    *a = a.saturating_add_signed(delta);
}

impl Fair {
    /// Whether this era tracks load (6.6, see the module's header).
    pub(super) fn tracks_load(&self) -> bool {
        self.eevdf()
    }

    /// `__update_load_avg_se`: entity `id` of `rq` brought up to `now`. Its weight is its
    /// load; a group's entity is runnable as many times as its queue has tasks.
    fn update_entity_avg(&mut self, rq: RqId, id: EntityId, now: Nanos) {
        let se = self.se(id);
        if !se.avg_attached {
            return;
        }
        let what = Activity {
            load: u64::from(se.on_rq),
            runnable: if se.on_rq {
                u64::from(se.runnable_weight)
            } else {
                0
            },
            running: se.on_rq && self.rq(rq).curr == Some(id),
        };
        let weight = se.weight;
        self.se_mut(id).avg.update(now, what, weight);
    }

    /// `update_cfs_rq_load_avg`: runqueue `rq` brought up to `now`, its load the weight it
    /// holds; whether its averages changed.
    fn update_rq_avg(&mut self, rq: RqId, now: Nanos) -> bool {
        let q = self.rq(rq);
        let what = Activity {
            load: q.load,
            runnable: u64::from(q.h_nr_running),
            running: q.curr.is_some(),
        };
        self.rq_mut(rq).avg.update(now, what, 1)
    }

    /// `update_load_avg(cfs_rq, se, flags)`: the entity, its runqueue, and what a child
    /// queue passed up, brought to `now`; then `how`.
    pub(super) fn update_load_avg(&mut self, rq: RqId, id: EntityId, now: Nanos, how: Track) {
        self.update_entity_avg(rq, id, now);
        let mut decayed = self.update_rq_avg(rq, now);
        decayed |= self.propagate_entity_load_avg(id);
        if how == Track::Attach && !self.se(id).avg_attached {
            self.attach_entity_load_avg(rq, id);
            self.update_tg_load_avg(rq);
        } else if how == Track::Detach {
            self.detach_entity_load_avg(rq, id);
            self.update_tg_load_avg(rq);
        } else if decayed {
            self.update_tg_load_avg(rq);
        }
    }

    /// `se_update_runnable`: a group's entity counts its queue's tasks as they are now.
    pub(super) fn update_runnable_weight(&mut self, id: EntityId) {
        if let Some(q) = self.se(id).my_q {
            self.se_mut(id).runnable_weight = self.rq(q).h_nr_running;
        }
    }

    /// `attach_entity_load_avg`: the entity's averages join `rq`'s, its window aligned on
    /// the runqueue's so that the runqueue's sums always hold exactly its decayed share.
    fn attach_entity_load_avg(&mut self, rq: RqId, id: EntityId) {
        let q = self.rq(rq).avg;
        let divider = q.divider();
        let weight = self.se(id).weight;
        let se = self.se_mut(id);
        se.avg_attached = true;
        let a = &mut se.avg;
        a.last_update_time = q.last_update_time;
        a.period_contrib = q.period_contrib;
        a.util_sum = a.util_avg * divider;
        a.runnable_sum = a.runnable_avg * divider;
        a.load_sum = a.load_avg * divider;
        a.load_sum = if weight < a.load_sum {
            a.load_sum / weight
        } else {
            1
        };
        let a = *a;
        let q = &mut self.rq_mut(rq).avg;
        q.load_avg += a.load_avg;
        q.load_sum += weight * a.load_sum;
        q.util_avg += a.util_avg;
        q.util_sum += a.util_sum;
        q.runnable_avg += a.runnable_avg;
        q.runnable_sum += a.runnable_sum;
        self.add_tg_cfs_propagate(rq, a.load_sum as i64);
    }

    /// `detach_entity_load_avg`: the entity's averages leave `rq`'s (none below 0, and a
    /// sum never below what its average implies, which repairs rounding).
    fn detach_entity_load_avg(&mut self, rq: RqId, id: EntityId) {
        let weight = self.se(id).weight;
        let se = self.se_mut(id);
        se.avg_attached = false;
        let a = se.avg;
        let q = &mut self.rq_mut(rq).avg;
        sub_positive(&mut q.load_avg, a.load_avg);
        sub_positive(&mut q.load_sum, weight * a.load_sum);
        q.load_sum = q.load_sum.max(q.load_avg * PELT_MIN_DIVIDER);
        sub_positive(&mut q.util_avg, a.util_avg);
        sub_positive(&mut q.util_sum, a.util_sum);
        q.util_sum = q.util_sum.max(q.util_avg * PELT_MIN_DIVIDER);
        sub_positive(&mut q.runnable_avg, a.runnable_avg);
        sub_positive(&mut q.runnable_sum, a.runnable_sum);
        q.runnable_sum = q.runnable_sum.max(q.runnable_avg * PELT_MIN_DIVIDER);
        self.add_tg_cfs_propagate(rq, -(a.load_sum as i64));
    }

    /// `add_tg_cfs_propagate`: a change of `runnable_sum` at `rq` for its group's entity to
    /// take at its next update.
    fn add_tg_cfs_propagate(&mut self, rq: RqId, runnable_sum: i64) {
        let q = self.rq_mut(rq);
        q.propagate = true;
        q.prop_runnable_sum += runnable_sum;
    }

    /// `reweight_entity`'s part in load tracking: the entity's load average is its load
    /// time at `weight` (the runqueue's sum takes the difference).
    pub(super) fn reweight_load_avg(&mut self, rq: RqId, id: EntityId, weight: u64) {
        let se = self.se(id);
        if !se.avg_attached {
            return;
        }
        let (old_weight, a) = (se.weight, se.avg);
        let new_avg = weight * a.load_sum / a.divider();
        let q = &mut self.rq_mut(rq).avg;
        sub_positive(&mut q.load_avg, a.load_avg);
        sub_positive(&mut q.load_sum, old_weight * a.load_sum);
        q.load_avg += new_avg;
        q.load_sum += weight * a.load_sum;
        self.se_mut(id).avg.load_avg = new_avg;
    }

    /// `detach_entity_cfs_rq` and `propagate_entity_cfs_rq`: the (dequeued) entity leaves
    /// `rq` for good — another CPU, another group, or its end — and the levels above see it.
    pub(super) fn detach_from(&mut self, rq: RqId, id: EntityId, now: Nanos) {
        if !self.se(id).avg_attached {
            return;
        }
        self.update_load_avg(rq, id, now, Track::Detach);
        self.propagate_up(rq, now);
    }

    /// `attach_entity_cfs_rq`: the (dequeued) entity joins `rq`'s averages now.
    pub(super) fn attach_to(&mut self, rq: RqId, id: EntityId, now: Nanos) {
        self.update_load_avg(rq, id, now, Track::Attach);
        self.propagate_up(rq, now);
    }

    /// `propagate_entity_cfs_rq`: the group entity owning `rq`, if any, takes its queue's
    /// change.
    fn propagate_up(&mut self, rq: RqId, now: Nanos) {
        if let Some(group) = self.rq(rq).owner {
            self.update_load_avg(ROOT, group, now, Track::Update);
        }
    }

    /// `init_entity_runnable_average` and `post_init_entity_util_avg`: a new task starts
    /// as heavy as its weight, and with half the utilisation its queue has left — its
    /// queue's utilisation per unit of load if it has any (a newcomer is guessed to be like
    /// the tasks beside it).
    pub(super) fn init_task_load(&mut self, id: EntityId) {
        let rq = self.se(id).rq;
        let q = self.rq(rq).avg;
        let weight = self.se(id).weight;
        let a = &mut self.se_mut(id).avg;
        *a = Avg {
            load_avg: weight,
            ..Avg::default()
        };
        let cap = (1024i64 - q.util_avg as i64) / 2;
        if cap > 0 {
            a.util_avg = if q.util_avg != 0 {
                (q.util_avg * weight / (q.load_avg + 1)).min(cap as u64)
            } else {
                cap as u64
            };
            a.runnable_avg = a.util_avg;
        }
    }

    /// `__update_blocked_fair`: every queue's averages decay to `now` — each group's queue,
    /// then its entity in the root, then the root — so that a CPU whose tasks sleep is seen
    /// to lighten (Linux does it before balancing, and for idle CPUs on behalf of them).
    pub(super) fn update_blocked_fair(&mut self, now: Nanos) {
        for gq in ROOT + 1..self.runqueues.len() {
            if self.update_rq_avg(gq, now) {
                self.update_tg_load_avg(gq);
            }
            let group = self.rq(gq).owner.expect("a group's queue has its entity");
            let idle = {
                let a = self.se(group).avg;
                a.load_avg == 0 && a.util_avg == 0 && !self.rq(gq).propagate
            };
            if !idle {
                self.update_load_avg(ROOT, group, now, Track::Update);
            }
        }
        self.update_rq_avg(ROOT, now);
    }
}

mod group;
#[cfg(test)]
mod tests;
