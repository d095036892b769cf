//! A task as 2.6.11's `task_struct` holds its scheduling: its priorities, its slice, the
//! `sleep_avg` its interactivity comes from, and where it is queued; and how one is made —
//! new, or by a fork (`sched_fork`'s half: half the parent's slice, 95 % of its bonus).

use super::{CHILD_PENALTY, MAX_BONUS, MAX_SLEEP_AVG_NS, O1};
use crate::policy::{Nanos, TaskId};
use crate::weights::Nice;

#[derive(Debug, Clone)]
pub(super) struct Task {
    pub(super) static_prio: u64,
    pub(super) prio: u64,
    /// Ticks left in the current slice.
    pub(super) time_slice: u64,
    pub(super) first_time_slice: bool,
    pub(super) sleep_avg: u64,
    /// When the task last stopped running (sleep start) or was woken.
    pub(super) timestamp: Nanos,
    /// Which array it is queued in: `Some(true)` active, `Some(false)` expired.
    pub(super) in_active: Option<bool>,
    /// 2 after a wake-up (its runqueue wait is credited as sleep at its next pick), else 0.
    pub(super) activated: u8,
    pub(super) parent: Option<TaskId>,
    pub(super) sum_exec_runtime: u64,
    pub(super) picked_at: Nanos,
    /// Exited while running: goes away once switched out.
    pub(super) dead: bool,
}

impl O1 {
    /// A new task `id` of `nice`, not queued yet, with a full slice and no sleep credit.
    pub(super) fn new_task(&mut self, id: TaskId, nice: Nice, now: Nanos, parent: Option<TaskId>) {
        let static_prio = (120 + i64::from(nice.clamp(-20, 19))) as u64;
        let task = Task {
            static_prio,
            prio: static_prio,
            time_slice: self.task_timeslice(static_prio),
            first_time_slice: true,
            sleep_avg: 0,
            timestamp: now,
            in_active: None,
            activated: 0,
            parent,
            sum_exec_runtime: 0,
            picked_at: now,
            dead: false,
        };
        if self.tasks.len() <= id.index() {
            self.tasks.resize(id.index() + 1, None);
        }
        assert!(self.tasks[id].is_none(), "task {id} already exists");
        self.tasks[id] = Some(task);
    }

    /// `sched_fork`'s half of a fork: the child takes half the parent's remaining slice and
    /// 95% of its bonus (not queued yet).
    pub(super) fn forked_child(&mut self, parent: TaskId, child: TaskId, now: Nanos) {
        let (nice, parent_slice, parent_bonus) = {
            let p = self.t(parent);
            (p.static_prio as i64 - 120, p.time_slice, Self::bonus(p))
        };
        self.new_task(child, nice as Nice, now, Some(parent));
        let child_sleep_avg = parent_bonus * CHILD_PENALTY / 100 * MAX_SLEEP_AVG_NS / MAX_BONUS;
        let c = self.t_mut(child);
        c.time_slice = parent_slice.div_ceil(2).max(1);
        c.sleep_avg = child_sleep_avg;
        c.prio = Self::effective_prio(c);
        self.t_mut(parent).time_slice = (parent_slice / 2).max(1);
    }
}
