//! ADAPTIVE_GRAN (Linux 2.6.30–2.6.34, on by default; docs/scheduler.md §4.2): the wakeup
//! granularity adapts to how often the wakee wakes others.
//!
//! Each task keeps `avg_wakeup`, a running average (1/8 weight per sample, Linux's
//! `update_avg`) of how much CPU it uses between waking other tasks; a task that goes to
//! sleep without having woken anyone counts as one wakeup granularity. A wake-up preempts
//! more easily once the running entity has run longer than twice the wakee's `avg_wakeup`
//! per queued entity: the granularity shrinks by what the running entity ran past that,
//! down to 0. Group entities never learn an `avg_wakeup` (Linux updated only tasks'), so
//! at a group level the granularity is 0 once the group entity has run at all.

use super::Fair;
use super::entity::EntityId;
use crate::params::Feature;
use crate::policy::{TaskId, Wakeup};

/// `update_avg`: move `avg` 1/8 of the way to `sample`.
fn update_avg(avg: &mut u64, sample: u64) {
    let diff = sample as i64 - *avg as i64;
    *avg = (*avg as i64 + (diff >> 3)) as u64;
}

impl Fair {
    fn adaptive(&self) -> bool {
        self.feature(Feature::AdaptiveGran)
    }

    /// A new task starts with `avg_wakeup` = the wakeup granularity (`sched_fork`).
    pub(super) fn init_avg_wakeup(&mut self, id: EntityId) {
        let gran = self.params.tunables.wakeup_granularity_ns;
        self.se_mut(id).avg_wakeup = gran;
    }

    /// `try_to_wake_up`'s bookkeeping after `wakee` was queued: from task context the
    /// running task is the waker, and its run since its last wake-up of someone (or since it
    /// woke itself) is a sample of its `avg_wakeup`; the wakee's run starts counting now.
    pub(super) fn note_wakeup(&mut self, wakee: TaskId, wakeup: Wakeup) {
        if !self.adaptive() {
            return;
        }
        let id = self.task_se(wakee);
        let se = self.se_mut(id);
        se.start_runtime = se.sum_exec_runtime;
        if wakeup.from_interrupt {
            return;
        }
        let Some(waker) = self.current.filter(|&c| c != wakee) else {
            return;
        };
        let id = self.task_se(waker);
        let se = self.se_mut(id);
        let since = if se.last_wakeup != 0 {
            se.last_wakeup
        } else {
            se.start_runtime
        };
        let sample = se.sum_exec_runtime.saturating_sub(since);
        update_avg(&mut se.avg_wakeup, sample);
        se.last_wakeup = se.sum_exec_runtime;
    }

    /// `dequeue_task` of a sleeping task: one that woke nobody since it last woke counts a
    /// wakeup granularity in its `avg_wakeup`.
    pub(super) fn note_sleep(&mut self, task: TaskId) {
        if !self.adaptive() {
            return;
        }
        let gran = self.params.tunables.wakeup_granularity_ns;
        let id = self.task_se(task);
        let se = self.se_mut(id);
        if se.last_wakeup != 0 {
            se.last_wakeup = 0;
        } else {
            update_avg(&mut se.avg_wakeup, gran);
        }
    }

    /// `adaptive_gran(curr, se)`: the wall-clock granularity once `curr` has run
    /// `ran_since_pick`: what is left of `2 × avg_wakeup(wakee) × nr_running`, capped at the
    /// wakeup granularity. `None` when ADAPTIVE_GRAN is off.
    pub(super) fn adaptive_gran(&self, curr: EntityId, wakee: EntityId, gran: u64) -> Option<u64> {
        if !self.adaptive() || self.rq(self.se(curr).rq).curr.is_none() {
            return None;
        }
        let nr = u64::from(self.rq(self.se(wakee).rq).nr_running);
        let expected = 2 * self.se(wakee).avg_wakeup * nr;
        let this_run = self.se(curr).ran_since_pick();
        Some(expected.saturating_sub(this_run).min(gran))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Era, FairParams, Grouping};
    use crate::policy::Policy;
    use crate::task_id::t;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_average_moves_an_eighth_of_the_way() {
        let mut avg = 1_000;
        update_avg(&mut avg, 9_000);
        assert_eq!(avg, 2_000);
        update_avg(&mut avg, 0);
        assert_eq!(avg, 1_750);
    }

    /// 2.6.32, two nice-0 tasks, no groups; task 1 asleep, task 0 running since 0.
    fn task_0_running_task_1_asleep() -> Fair {
        let mut p = FairParams::preset(Era::V2_6_32);
        p.grouping = Grouping::None;
        let mut f = Fair::new(p);
        f.spawn(t(0), 1, 0, 0);
        f.spawn(t(1), 1, 0, 0);
        f.dequeue(t(1), 0);
        assert_eq!(f.pick_next(0), Some(t(0)));
        f
    }

    /// Task 0 runs `ran` and then task 1 wakes (from a timer). Returns the wakeup granularity
    /// task 1 faces.
    fn granularity_after(ran: u64) -> u64 {
        let mut f = task_0_running_task_1_asleep();
        f.tick(ran);
        let timer = Wakeup {
            from_interrupt: true,
            ..Wakeup::default()
        };
        f.enqueue(t(1), timer, ran);
        let (curr, wakee) = (f.task_se(t(0)), f.task_se(t(1)));
        f.wakeup_gran(curr, wakee)
    }

    #[test]
    fn the_granularity_shrinks_as_the_running_task_outlasts_the_wakee_average() {
        // Task 1 slept once without waking anyone: avg_wakeup = 1 ms (it started at the
        // 1 ms granularity and the sample was 1 ms). With 2 queued: expected 2 × 1 × 2 =
        // 4 ms. After 1 ms of running, 3 ms are left, capped at the 1 ms granularity; after
        // 3.5 ms, 0.5 ms; after 5 ms, nothing: any lead preempts.
        assert_eq!(granularity_after(MS), MS);
        assert_eq!(granularity_after(3 * MS + MS / 2), MS / 2);
        assert_eq!(granularity_after(5 * MS), 0);
    }

    #[test]
    fn a_waker_learns_its_run_between_wakeups() {
        let mut f = task_0_running_task_1_asleep();
        // Task 0 runs 9 ms, then wakes task 1 itself: a sample of 9 ms against its 1 ms
        // start: 1 + (9 − 1) / 8 = 2 ms.
        f.tick(9 * MS);
        f.enqueue(t(1), Wakeup::default(), 9 * MS);
        assert_eq!(f.se(f.task_se(t(0))).avg_wakeup, 2 * MS);
        assert_eq!(f.se(f.task_se(t(0))).last_wakeup, 9 * MS);
    }
}
