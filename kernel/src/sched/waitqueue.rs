//! Wait queues (Linux's `wait_queue_head_t`): who waits for something, in the order they
//! came. This module is the queue alone — its waiters, their count and its lock — and names
//! nothing of the scheduler, so that what holds one (a pipe, the terminal, a table of open
//! files) stands on it without standing on the scheduler. Sleeping on a queue and waking it
//! are the scheduler's own (`sched::wait`, as Linux keeps `wait.c` in `kernel/sched/`).

use crate::sync::{Rank, SpinLock};
use crate::task::{TaskId, TaskRef};
use alloc::collections::VecDeque;
use core::sync::atomic::{AtomicUsize, Ordering, fence};

/// Tasks waiting for something.
pub struct WaitQueue {
    waiters: SpinLock<VecDeque<TaskRef>>,
    /// How many wait, as the lock's holder last left the queue: what a waker reads first,
    /// without the lock (Linux's `waitqueue_active`), so that waking an empty queue — a pipe
    /// write's wake-up of writers that are not there — costs a fence and a load.
    waiting: AtomicUsize,
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
            waiting: AtomicUsize::new(0),
        }
    }

    /// Puts `task` at the end of the queue, unless it is on it already.
    ///
    /// The count is published before the caller looks at its condition, and a waker looks
    /// at the count after making the condition true, each past a full fence (Linux's
    /// `set_current_state` and `wq_has_sleeper`): either the waiter sees the condition, or
    /// the waker sees the waiter.
    pub(super) fn add(&self, task: TaskRef) {
        self.change(|waiters| {
            if !waiters.iter().any(|w| w.id == task.id) {
                waiters.push_back(task);
            }
        });
        fence(Ordering::SeqCst);
    }

    /// Takes `task` off the queue, if it is on it: nothing to do, without the lock, once the
    /// queue is empty (a wake-up emptied it, the usual case when a waiter leaves).
    pub fn remove(&self, task: TaskId) {
        if self.has_waiters() {
            self.change(|waiters| waiters.retain(|w| w.id != task));
        }
    }

    /// Whether anyone may wait (see [`Self::add`]): a waker's first look, without the lock.
    pub(super) fn has_waiters(&self) -> bool {
        fence(Ordering::SeqCst);
        self.waiting.load(Ordering::Relaxed) != 0
    }

    /// Changes the waiters under their lock, and publishes how many there are now.
    pub(super) fn change<R>(&self, f: impl FnOnce(&mut VecDeque<TaskRef>) -> R) -> R {
        let mut waiters = self.waiters.lock();
        let result = f(&mut waiters);
        self.waiting.store(waiters.len(), Ordering::Relaxed);
        result
    }
}
