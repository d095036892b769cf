//! What is CFS-specific in the fair class, era by era (docs/scheduler.md §3–§5): the period and
//! the slices, tick preemption, wake-up preemption with its granularity, and where new and
//! waking entities are placed on the timeline.

use super::entity::EntityId;
use super::runqueue::RqId;
use super::{Enqueue, Fair};
use crate::params::{Era, Feature};
use crate::policy::{Nanos, TaskId};
use crate::weights::{
    NICE_0_LOAD, before, calc_delta_fair, max_vruntime, min_vruntime, scale, vdiff,
};

/// The floor cfslab's DYN_GRANULARITY puts under the shrunken granularities.
pub const DYN_GRANULARITY_FLOOR_NS: u64 = 100_000;

impl Fair {
    pub(super) fn feature(&self, feature: Feature) -> bool {
        self.params.features.has(feature)
    }

    /// A granularity as DYN_GRANULARITY adapts it to `nr` runnable entities.
    ///
    /// Mathieu Desnoyers' RFC "sched: dynamically adapt granularity with nr_running" (Sep
    /// 2010) is not public in full; cfslab defines the feature as its title says: once more
    /// than `nr_latency` entities are runnable, the minimum and wakeup granularities shrink
    /// to `latency / nr_running` (never below 100 µs), so that the period stays at
    /// `sched_latency` instead of stretching to `nr × min_granularity`.
    pub(super) fn effective_granularity(&self, granularity: u64, nr: u64) -> u64 {
        let t = &self.params.tunables;
        if self.feature(Feature::DynGranularity) && nr > t.nr_latency {
            granularity.min((t.latency_ns / nr).max(DYN_GRANULARITY_FLOOR_NS))
        } else {
            granularity
        }
    }

    /// `__sched_period(nr)`: the time in which each of `nr` runnable entities should run once.
    pub fn sched_period(&self, nr: u64) -> u64 {
        let t = &self.params.tunables;
        if nr <= t.nr_latency {
            return t.latency_ns;
        }
        if self.params.era == Era::V2_6_24 {
            // 2.6.24 stretched the latency proportionally.
            return t.latency_ns * nr / t.nr_latency;
        }
        self.effective_granularity(t.min_granularity_ns, nr) * nr
    }

    /// `sched_slice`: the entity's wall-clock share of the period. Flat in 2.6.24/25 (its
    /// share of its own queue only); from 2.6.26 multiplied down the hierarchy, so that a
    /// task in a group gets its share of its group's share of the period.
    pub fn sched_slice(&self, rq: RqId, id: EntityId) -> u64 {
        let se = self.se(id);
        let joining = u64::from(!se.on_rq);
        let mut slice = self.sched_period(u64::from(self.rq(rq).nr_running) + joining);
        let levels = if self.params.era.flat_slices() {
            super::entity::Hierarchy::of(id)
        } else {
            self.hierarchy(id)
        };
        for level in levels {
            let e = self.se(level);
            let load = self.rq(e.rq).load + if e.on_rq { 0 } else { e.weight };
            slice = scale(slice, e.weight, load);
        }
        slice
    }

    /// The virtual time a newcomer is placed behind `min_vruntime` with START_DEBIT: one
    /// virtual slice as it will get once queued.
    fn start_debit(&self, rq: RqId, id: EntityId) -> u64 {
        let se = self.se(id);
        if self.params.era.flat_slices() {
            // 2.6.24/25 `sched_vslice_add`: period(nr + 1) × 1024 / (W + w).
            let q = self.rq(rq);
            let period = self.sched_period(u64::from(q.nr_running) + 1);
            scale(period, NICE_0_LOAD, q.load + se.weight)
        } else {
            calc_delta_fair(self.sched_slice(rq, id), se.weight)
        }
    }

    /// `place_entity`: where a new (`initial`) or waking entity goes on the timeline.
    pub(super) fn place_entity_cfs(
        &mut self,
        rq: RqId,
        id: EntityId,
        initial: bool,
        vfork_parent: bool,
    ) {
        let era = self.params.era;
        let q = self.rq(rq);
        let mut v = q.min_vruntime;
        if era == Era::V2_6_25
            && let Some(left) = q.leftmost()
        {
            v = min_vruntime(v, self.se(left).vruntime);
        }
        if initial && self.feature(Feature::StartDebit) {
            v = v.wrapping_add(self.start_debit(rq, id));
        }
        if !initial && self.earns_sleeper_credit(id, vfork_parent) {
            let mut thresh = self.params.tunables.latency_ns;
            if self.feature(Feature::GentleFairSleepers) {
                thresh /= 2;
            }
            v = v.wrapping_sub(thresh);
        }
        // Never gain time by being placed: before 2.6.32 only wake-ups kept their old
        // vruntime if it was later; since then new tasks too (a child can't gain on its parent).
        if !initial || era >= Era::V2_6_32 {
            v = max_vruntime(self.se(id).vruntime, v);
        }
        if initial
            && self.feature(Feature::ClampChildRightmost)
            && let Some(rightmost) = self.rightmost_vruntime(rq)
        {
            v = min_vruntime(v, rightmost);
        }
        self.se_mut(id).vruntime = v;
    }

    /// Does a waking entity get sleeper credit? Tasks do when the sleeper feature is on;
    /// group entities only with GROUP_SLEEPER_CREDIT (2.6.24 gave them none: the cause of
    /// seed 000's latencies); a waking vfork parent only with VFORK_SLEEPER_CREDIT.
    fn earns_sleeper_credit(&self, id: EntityId, vfork_parent: bool) -> bool {
        let sleepers =
            self.feature(Feature::FairSleepers) || self.feature(Feature::NewFairSleepers);
        let entity_ok = self.se(id).is_task() || self.feature(Feature::GroupSleeperCredit);
        let vfork_ok = !vfork_parent || self.feature(Feature::VforkSleeperCredit);
        sleepers && entity_ok && vfork_ok
    }

    /// The largest virtual runtime among the queue's entities, the running one included.
    fn rightmost_vruntime(&self, rq: RqId) -> Option<u64> {
        let q = self.rq(rq);
        let waiting = q.rightmost().map(|id| self.se(id).vruntime);
        let running = q
            .curr
            .filter(|&c| self.se(c).on_rq)
            .map(|c| self.se(c).vruntime);
        match (waiting, running) {
            (Some(a), Some(b)) => Some(max_vruntime(a, b)),
            (a, b) => a.or(b),
        }
    }

    /// Fork placement (`task_new_fair` in 2.6.24, `task_fork_fair` from 2.6.32) and the
    /// child-runs-first swap, then the child queued. Returns whether the parent must be
    /// rescheduled now.
    pub(super) fn fork_cfs(&mut self, child: EntityId, now: Nanos) -> bool {
        let mut resched = self.place_child_cfs(child, now);
        // 2.6.24 rescheduled the parent after every fork.
        resched |= self.params.era <= Era::V2_6_25;
        self.enqueue_task(self.se(child).task.unwrap(), Enqueue::Initial, now);
        resched
    }

    /// The child's place on its parent's runqueue: from the parent's vruntime since 2.6.32,
    /// with START_DEBIT, and swapped with the parent's under child-runs-first. Returns
    /// whether the swap asks the parent to give way.
    pub(super) fn place_child_cfs(&mut self, child: EntityId, now: Nanos) -> bool {
        let era = self.params.era;
        let rq = self.se(child).rq;
        self.update_curr(rq, now);
        let curr = self.rq(rq).curr;
        if era >= Era::V2_6_32
            && let Some(parent) = curr
        {
            self.se_mut(child).vruntime = self.se(parent).vruntime;
        }
        self.place_entity_cfs(rq, child, true, false);
        let mut resched = false;
        if self.params.tunables.child_runs_first
            && let Some(parent) = curr
            && before(self.se(parent).vruntime, self.se(child).vruntime)
        {
            let (p, c) = (self.se(parent).vruntime, self.se(child).vruntime);
            self.se_mut(parent).vruntime = c;
            self.se_mut(child).vruntime = p;
            resched = true;
        }
        resched
    }

    /// `entity_tick` → `check_preempt_tick` at one level of the running task's hierarchy.
    pub(super) fn entity_tick_cfs(&mut self, rq: RqId, id: EntityId) {
        let nr = self.rq(rq).nr_running;
        if nr <= 1 && self.feature(Feature::WakeupPreempt) {
            return;
        }
        let ideal = self.sched_slice(rq, id);
        let ran = self.se(id).ran_since_pick();
        if ran > ideal {
            self.need_resched = true;
            self.clear_buddies(rq, id);
            return;
        }
        // 2.6.32+ (Mike Galbraith, Oct 2009): also preempt once the entity has run its
        // minimum granularity and is more than a slice ahead of the leftmost — comparing a
        // virtual distance with a wall-clock slice, as Linux did.
        let min_gran =
            self.effective_granularity(self.params.tunables.min_granularity_ns, u64::from(nr));
        if self.params.era >= Era::V2_6_32
            && self.feature(Feature::WakeupPreempt)
            && ran >= min_gran
            && let Some(left) = self.rq(rq).leftmost()
            && vdiff(self.se(id).vruntime, self.se(left).vruntime) > ideal as i64
        {
            self.need_resched = true;
        }
    }

    /// The wakeup granularity in virtual time for `curr` (the running entity) against
    /// `wakee`, at their common level. Which weight converts it changed with the eras.
    pub(super) fn wakeup_gran(&self, curr: EntityId, wakee: EntityId) -> u64 {
        let nr = u64::from(self.rq(self.se(curr).rq).nr_running);
        let mut gran = self.effective_granularity(self.params.tunables.wakeup_granularity_ns, nr);
        if let Some(adapted) = self.adaptive_gran(curr, wakee, gran) {
            gran = adapted;
        }
        let (w_curr, w_wakee) = (self.se(curr).weight, self.se(wakee).weight);
        match self.params.era {
            // The current entity's weight, whenever it is not nice 0.
            Era::V2_6_24 => calc_delta_fair(gran, w_curr),
            // Only if the current entity is heavier ("preempt -nice tasks more easily").
            Era::V2_6_25 if w_curr > NICE_0_LOAD => calc_delta_fair(gran, w_curr),
            Era::V2_6_25 => gran,
            // ASYM_GRAN: the wakee's weight ("penalize light tasks").
            Era::V2_6_32 if self.feature(Feature::AsymGran) => calc_delta_fair(gran, w_wakee),
            Era::V2_6_32 => calc_delta_fair(gran, w_curr),
            _ => calc_delta_fair(gran, w_wakee),
        }
    }

    /// `check_preempt_wakeup`: preempt iff, at the level where the two tasks meet, the wakee
    /// is more than one wakeup granularity behind the running entity in virtual time. `fork`:
    /// the wakee is a new child (Linux's WF_FORK), which never becomes the next buddy.
    pub(super) fn check_preempt_wakeup_cfs(
        &mut self,
        curr: TaskId,
        woken: TaskId,
        now: Nanos,
        fork: bool,
    ) -> bool {
        let (se, pse) = (self.task_se(curr), self.task_se(woken));
        let scale =
            u64::from(self.rq(self.se(se).rq).nr_running) >= self.params.tunables.nr_latency;
        if !self.feature(Feature::WakeupPreempt) {
            return false;
        }
        let buddies = self.params.era >= Era::V2_6_32;
        if buddies {
            self.note_next_buddy(pse, scale, fork);
            // "We can come here with TIF_NEED_RESCHED already set from new task wake up
            // path": then there is nothing to decide, and no last buddy is set.
            if self.need_resched {
                return false;
            }
            self.update_curr(self.se(se).rq, now);
        }
        let (se, pse) = self.find_matching_se(se, pse);
        let gran = self.wakeup_gran(se, pse);
        let preempt = vdiff(self.se(se).vruntime, self.se(pse).vruntime) > gran as i64;
        if preempt && buddies {
            self.note_last_buddy(se, scale);
        }
        preempt
    }
}
