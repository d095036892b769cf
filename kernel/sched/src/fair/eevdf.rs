//! What is EEVDF-specific in the fair class (Linux 6.6, docs/scheduler.md §8): the weighted
//! average virtual runtime V, lag and eligibility, virtual deadlines, lag-preserving
//! placement and the earliest-eligible-deadline pick.

use super::Fair;
use super::entity::EntityId;
use super::runqueue::RqId;
use crate::params::Feature;
use crate::policy::{Nanos, TaskId};
use crate::weights::{before, calc_delta_fair, vdiff};

/// `a.div_euclid(b)` for a positive divisor (a queue's load), in 64 bits when both fit: the
/// sums are 128-bit so that no queue can overflow them, but they almost always fit in 64, and
/// a 128-bit division costs several times a 64-bit one on the pick's hot path. The rounding
/// down is a subtraction rather than the branch `i64::div_euclid` takes on the remainder's
/// sign, which the processor cannot predict (V moves to either side of `min_vruntime`).
fn div_euclid(a: i128, b: i128) -> i128 {
    debug_assert!(b > 0, "divided by a queue's load, which is positive");
    match (i64::try_from(a), i64::try_from(b)) {
        (Ok(a), Ok(b)) => i128::from(a / b - i64::from(a % b < 0)),
        _ => a.div_euclid(b),
    }
}

/// `a / b` (truncating), in 64 bits when both fit (see [`div_euclid`]).
fn div_trunc(a: i128, b: i128) -> i128 {
    match (i64::try_from(a), i64::try_from(b)) {
        (Ok(a), Ok(b)) => i128::from(a / b),
        _ => a / b,
    }
}

impl Fair {
    /// Σ (v − min_vruntime)·w and Σ w over the queue, the running entity included.
    fn weighted_sums(&self, rq: RqId) -> (i128, i128) {
        let q = self.rq(rq);
        let (mut sum, mut load) = (q.avg_vruntime, i128::from(q.avg_load));
        if let Some(c) = q.curr.filter(|&c| self.se(c).on_rq) {
            let se = self.se(c);
            sum += i128::from(vdiff(se.vruntime, q.min_vruntime)) * i128::from(se.weight);
            load += i128::from(se.weight);
        }
        (sum, load)
    }

    /// `avg_vruntime`: V, the weighted average virtual runtime — the zero-lag point.
    pub fn avg_vruntime(&self, rq: RqId) -> u64 {
        let (sum, load) = self.weighted_sums(rq);
        let offset = if load > 0 { div_euclid(sum, load) } else { 0 };
        self.rq(rq).min_vruntime.wrapping_add(offset as i64 as u64)
    }

    /// `entity_eligible`: lag ≥ 0, i.e. v ≤ V, tested without dividing.
    pub fn entity_eligible(&self, rq: RqId, id: EntityId) -> bool {
        let (sum, load) = self.weighted_sums(rq);
        let v = i128::from(vdiff(self.se(id).vruntime, self.rq(rq).min_vruntime));
        v * load <= sum
    }

    /// The latest eligible virtual runtime, as an offset from `min_vruntime`: for integer
    /// v, `v · Σw ≤ Σ(v_i − v0)·w_i` ⇔ `v ≤ ⌊Σ(v_i − v0)·w_i / Σw⌋`. One division per pick
    /// instead of a multiplication per node visited (the same test as `entity_eligible`).
    fn eligible_offset(&self, rq: RqId) -> i64 {
        let (sum, load) = self.weighted_sums(rq);
        if load == 0 {
            return i64::MAX;
        }
        div_euclid(sum, load).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }

    /// `update_deadline`: once the running entity reaches its deadline it gets a new slice
    /// and deadline, and the CPU is offered to others.
    pub(super) fn update_deadline(&mut self, rq: RqId, id: EntityId) {
        let slice = self.params.tunables.base_slice_ns;
        let se = self.se(id);
        if before(se.vruntime, se.deadline) {
            return;
        }
        let deadline = se.vruntime.wrapping_add(calc_delta_fair(slice, se.weight));
        let se = self.se_mut(id);
        se.slice = slice;
        se.deadline = deadline;
        if self.rq(rq).nr_running > 1 {
            self.need_resched = true;
        }
    }

    /// Snapshot of the virtual lag V − v when an entity leaves its queue, clamped to about
    /// two slices (or a tick) so that long sleepers do not hoard credit.
    pub(super) fn save_lag(&mut self, rq: RqId, id: EntityId) {
        let v_avg = self.avg_vruntime(rq);
        let se = self.se(id);
        let limit = calc_delta_fair((2 * se.slice).max(self.params.tick_ns), se.weight) as i64;
        let lag = vdiff(v_avg, se.vruntime).clamp(-limit, limit);
        self.se_mut(id).vlag = lag;
    }

    /// `place_entity`: put the entity at V minus its saved lag (inflated so that the lag
    /// survives its own insertion), with a deadline one slice away (half for a new task
    /// under PLACE_DEADLINE_INITIAL).
    pub(super) fn place_entity_eevdf(&mut self, rq: RqId, id: EntityId, initial: bool) {
        let v_avg = self.avg_vruntime(rq);
        let slice = self.params.tunables.base_slice_ns;
        let se = self.se(id);
        let mut vslice = calc_delta_fair(slice, se.weight);
        let mut lag: i128 = 0;
        if self.params.features.has(Feature::PlaceLag) && self.rq(rq).nr_running > 0 {
            let (_, load) = self.weighted_sums(rq);
            lag = i128::from(se.vlag);
            if load > 0 {
                lag = div_trunc(lag * (load + i128::from(se.weight)), load);
            }
        }
        if initial && self.params.features.has(Feature::PlaceDeadlineInitial) {
            vslice /= 2;
        }
        let vruntime = v_avg.wrapping_sub(lag as i64 as u64);
        let se = self.se_mut(id);
        se.vruntime = vruntime;
        se.slice = slice;
        se.deadline = vruntime.wrapping_add(vslice);
    }

    /// `pick_eevdf`: among eligible entities, the one with the earliest virtual deadline, found
    /// in O(log n) in the augmented timeline (`timeline/`), as Linux 6.6 does.
    pub(super) fn pick_eevdf(&self, rq: RqId) -> Option<EntityId> {
        let q = self.rq(rq);
        let curr = q
            .curr
            .filter(|&c| self.se(c).on_rq && self.entity_eligible(rq, c));
        if let Some(c) = curr
            && self.params.features.has(Feature::RunToParity)
            && self.se(c).deadline_at_pick == self.se(c).deadline
        {
            return Some(c);
        }
        let best = q.earliest_eligible(self.eligible_offset(rq));
        match (curr, best) {
            // On equal deadlines the running entity stays: 6.6's `__pick_eevdf` starts from
            // `best = curr` and only replaces it with a strictly earlier deadline.
            (Some(c), Some(b)) if !before(self.se(b).deadline, self.se(c).deadline) => Some(c),
            (Some(c), None) => Some(c),
            (_, Some(b)) => Some(b),
            (None, None) => q.leftmost(),
        }
    }

    /// Wake-up preemption under EEVDF (`check_preempt_wakeup_fair`, 6.6): nothing to decide
    /// if a reschedule is already pending; otherwise charge the running entity at the level
    /// where the two tasks meet, and preempt iff the wakee is what `pick_eevdf` would run.
    pub(super) fn check_preempt_wakeup_eevdf(
        &mut self,
        curr: TaskId,
        woken: TaskId,
        now: Nanos,
    ) -> bool {
        if self.need_resched || !self.params.features.has(Feature::WakeupPreempt) {
            return false;
        }
        let (se, pse) = self.find_matching_se(self.task_se(curr), self.task_se(woken));
        let rq = self.se(se).rq;
        self.update_curr(rq, now);
        self.pick_eevdf(rq) == Some(pse)
    }
}
