//! A task as 2.6.11's `task_struct` holds its scheduling: its priorities, its slice, the
//! `sleep_avg` its interactivity comes from, and where it is queued.

use crate::policy::{Nanos, TaskId};

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
