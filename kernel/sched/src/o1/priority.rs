//! 2.6.11's dynamic priority (kernel/sched.c): `sleep_avg` and its bonus, the effective
//! priority, what counts as interactive, and the time slices that follow from the static
//! priority (docs/scheduler.md §9). The arrays that use them are in `mod.rs`.

use super::{
    DEF_TIMESLICE_MS, GRANULARITY_MS, MAX_BONUS, MAX_SLEEP_AVG_NS, MIN_TIMESLICE_MS, NS_PER_MS, O1,
    Task,
};
use crate::policy::{Nanos, TaskId};

impl O1 {
    /// `task_timeslice`: 800 ms at nice −20, 100 ms at nice 0, 5 ms at nice +19.
    pub fn task_timeslice(&self, static_prio: u64) -> u64 {
        let ms = if static_prio < 120 {
            4 * DEF_TIMESLICE_MS * (140 - static_prio) / 20
        } else {
            DEF_TIMESLICE_MS * (140 - static_prio) / 20
        };
        self.ticks(ms.max(MIN_TIMESLICE_MS))
    }

    /// `CURRENT_BONUS`: 0..=10 from sleep_avg.
    pub(super) fn bonus(task: &Task) -> u64 {
        task.sleep_avg * MAX_BONUS / MAX_SLEEP_AVG_NS
    }

    /// `effective_prio`: the static priority moved by the bonus, −5..=+5 levels.
    pub(super) fn effective_prio(task: &Task) -> u64 {
        (task.static_prio + 5)
            .saturating_sub(Self::bonus(task))
            .clamp(100, 139)
    }

    /// `DELTA(p)`: how many bonus levels above neutral make a task interactive.
    pub(super) fn delta(task: &Task) -> i64 {
        let nice = task.static_prio as i64 - 120;
        nice * MAX_BONUS as i64 / 40 + 2
    }

    /// `TASK_INTERACTIVE`.
    pub(super) fn interactive(task: &Task) -> bool {
        task.prio as i64 <= task.static_prio as i64 - Self::delta(task)
    }

    /// `INTERACTIVE_SLEEP`: a sleep longer than this makes a task interactive at once.
    pub(super) fn interactive_sleep_ns(task: &Task) -> u64 {
        let levels = (MAX_BONUS as i64 / 2 + Self::delta(task) + 1).max(0) as u64;
        (MAX_SLEEP_AVG_NS * levels / MAX_BONUS).saturating_sub(NS_PER_MS)
    }

    /// `recalc_task_prio`: credit the time slept up to `now` to sleep_avg.
    pub(super) fn recalc_task_prio(&mut self, id: TaskId, now: Nanos) {
        let task = self.t_mut(id);
        let slept = now.saturating_sub(task.timestamp).min(MAX_SLEEP_AVG_NS);
        if slept > 0 {
            if slept > Self::interactive_sleep_ns(task) {
                // 2.6.11 *assigns* the ceiling: a task whose sleep_avg was above it (it was
                // interactive and ran little) comes back from a long sleep a little lower.
                task.sleep_avg = MAX_SLEEP_AVG_NS - DEF_TIMESLICE_MS * NS_PER_MS;
            } else {
                let multiplier = (MAX_BONUS - Self::bonus(task)).max(1);
                task.sleep_avg = (task.sleep_avg + slept * multiplier).min(MAX_SLEEP_AVG_NS);
            }
        }
        task.prio = Self::effective_prio(task);
    }

    /// `TIMESLICE_GRANULARITY`: how often interactive tasks of one priority round-robin.
    pub(super) fn timeslice_granularity(&self, task: &Task) -> u64 {
        let shift = (MAX_BONUS - Self::bonus(task)).max(1) - 1;
        self.ticks(GRANULARITY_MS) << shift
    }
}
