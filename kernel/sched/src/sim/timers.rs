//! The simulator's timer wake-ups, ordered by (time, sequence number): timers of one instant
//! fire in the order they were armed, so that a run repeats exactly.

use super::SimConfig;
use crate::policy::{Nanos, TaskId};
use alloc::collections::BTreeMap;

/// Armed wake-ups.
pub(super) struct Timers {
    queue: BTreeMap<(Nanos, u64), TaskId>,
    sequence: u64,
}

impl Timers {
    /// No timer armed.
    pub(super) fn new() -> Timers {
        Timers {
            queue: BTreeMap::new(),
            sequence: 0,
        }
    }

    /// Arms a wake-up of `task` at `at` — not before `now`, and on the next tick boundary
    /// in the jiffies world (`config.hrtimer` off).
    pub(super) fn arm(&mut self, task: TaskId, at: Nanos, now: Nanos, config: &SimConfig) {
        let at = if config.hrtimer {
            at
        } else {
            at.next_multiple_of(config.tick_ns)
        };
        self.sequence += 1;
        self.queue.insert((at.max(now), self.sequence), task);
    }

    /// When the next timer expires (`Nanos::MAX` if none is armed).
    pub(super) fn next(&self) -> Nanos {
        self.queue.keys().next().map_or(Nanos::MAX, |&(t, _)| t)
    }

    /// The next timer due by `now`, taken off the queue.
    pub(super) fn pop_due(&mut self, now: Nanos) -> Option<TaskId> {
        let (&(at, seq), &task) = self.queue.iter().next()?;
        if at > now {
            return None;
        }
        self.queue.remove(&(at, seq));
        Some(task)
    }
}
