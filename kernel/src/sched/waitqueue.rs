//! Wait queues (Linux's `wait_queue_head_t`): who waits for something, in the order they
//! came. This module is the queue alone — its waiters and its lock — and names nothing of
//! the scheduler, so that what holds one (a pipe, the terminal, a table of open files)
//! stands on it without standing on the scheduler. Sleeping on a queue and waking it are
//! the scheduler's own (`sched::wait`, as Linux keeps `wait.c` in `kernel/sched/`).

use crate::sync::{Rank, SpinLock};
use crate::task::{TaskId, TaskRef};
use alloc::collections::VecDeque;

/// Tasks waiting for something.
pub struct WaitQueue {
    pub(super) waiters: SpinLock<VecDeque<TaskRef>>,
}

impl Default for WaitQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl WaitQueue {
    /// An empty queue.
    pub const fn new() -> Self {
        WaitQueue {
            waiters: SpinLock::new(Rank::WaitQueue, VecDeque::new()),
        }
    }

    /// Puts `task` at the end of the queue, unless it is on it already.
    pub(super) fn add(&self, task: TaskRef) {
        let mut waiters = self.waiters.lock();
        if !waiters.iter().any(|w| w.id == task.id) {
            waiters.push_back(task);
        }
    }

    /// Takes `task` off the queue, if it is on it.
    pub fn remove(&self, task: TaskId) {
        self.waiters.lock().retain(|w| w.id != task);
    }
}
