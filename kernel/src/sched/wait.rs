//! Sleeping on a wait queue and waking it (Linux's `kernel/sched/wait.c`: `wait_event`,
//! `prepare_to_wait`, `__wake_up`). A waiter joins the queue *before* it looks at its
//! condition, and looks and sleeps with interrupts off (Linux's `prepare_to_wait` order).
//! So no wake-up is lost: one from this CPU cannot come between the look and the sleep,
//! and one from another CPU that made the condition true after the look finds the waiter
//! on the queue — still running, perhaps, and then its sleep returns at once
//! (`Task::wake_pending`). (A first look before joining only lets a condition that already
//! holds skip the queue, as `wait_event` does.) A waker looks at the queue's count before
//! its lock (`WaitQueue::has_waiters`), past a fence that pairs with the one a waiter
//! passes between joining and looking.

use super::waitqueue::WaitQueue;
use super::{current, current_ref, sleep_current, wake_up_from};
use crate::arch::irq;
use crate::task::TaskRef;
use alloc::collections::VecDeque;
use sched::SyncWake;

impl WaitQueue {
    /// Sleeps until `condition()` holds (at once if it already does).
    pub fn wait_until(&self, condition: impl Fn() -> bool) {
        // A condition that holds needs no queue (Linux's `wait_event` looks first too): after
        // a wake-up, the usual case, the waiter goes on without joining the queue again to
        // leave it at once.
        let mut slept = false;
        while !condition() {
            slept = irq::without(|| {
                // Joining after the look would let a waker on another CPU find the queue
                // empty between the two: the waiter would sleep on a condition already true.
                self.add_current();
                if condition() {
                    self.remove(current());
                    return false;
                }
                sleep_current();
                true
            });
            if !slept {
                return;
            }
        }
        if slept {
            // The queue's wake-up took the waiter off it; any other (a kill, a timer) left it
            // there, and a later `wake_one` must not spend itself on a task gone (Linux's
            // `finish_wait`).
            self.remove(current());
        }
    }

    /// Adds the running task to the queue without sleeping: for a task about to look at its
    /// condition and perhaps sleep on several queues at once (`poll`), which takes itself off
    /// them with [`Self::remove`] when it wakes or need not sleep. Interrupts must be off
    /// from here to the sleep.
    pub fn add_current(&self) {
        debug_assert!(!irq::enabled());
        self.add(current_ref());
    }

    /// Wakes the longest waiter, if any.
    pub fn wake_one(&self) {
        if !self.has_waiters() {
            return;
        }
        let waiter = self.change(VecDeque::pop_front);
        if let Some(task) = waiter {
            wake_up_from(&[task], SyncWake::No);
        }
    }

    /// Wakes every waiter. The wake-ups may switch tasks, so no lock may be held across them:
    /// the waiters are first moved out. A few (nearly always one) are copied to the stack
    /// and the queue keeps its buffer; had the buffer itself been moved out, the woken task
    /// (which often runs at once and sleeps again on this queue) would find the queue without
    /// one and allocate — a heap round trip on every pipe transfer. Waking allocates nothing,
    /// and an empty queue costs one look.
    pub fn wake_all(&self) {
        self.wake_all_as(SyncWake::No);
    }

    /// Wakes every waiter as a caller about to sleep (Linux's
    /// `wake_up_interruptible_sync`: a pipe's reader waking the writers, or a writer the
    /// readers): the wake-up placement may count the caller's CPU without it.
    pub fn wake_all_sync(&self) {
        self.wake_all_as(SyncWake::WakerSleeps);
    }

    fn wake_all_as(&self, sync: SyncWake) {
        const FEW: usize = 4;
        if !self.has_waiters() {
            return;
        }
        irq::without(|| {
            let mut few = [TaskRef::UNUSED; FEW];
            let (n, many) = self.change(|queue| match queue.len() {
                n if n <= FEW => {
                    for (slot, task) in few.iter_mut().zip(queue.drain(..)) {
                        *slot = task;
                    }
                    (n, None)
                }
                n => (n, Some(core::mem::take(queue))),
            });
            match many {
                None if n > 0 => wake_up_from(&few[..n], sync),
                None => {}
                Some(mut many) => wake_up_from(many.make_contiguous(), sync),
            }
        });
    }
}
