//! Wait queues (Linux's `wait_queue_head_t`): tasks sleep on one until another task, or an
//! interrupt, wakes them. The condition is re-checked with interrupts off right before going
//! to sleep, so a wake-up that comes between the check and the sleep cannot be lost: on one
//! CPU, nothing else runs while interrupts are off.

use super::{current, sleep_current, wake_up_from, wake_up_irq};
use crate::task::TaskId;
use alloc::collections::VecDeque;
use spin::Mutex;
use x86_64::instructions::interrupts;

/// Tasks waiting for something.
pub struct WaitQueue {
    waiters: Mutex<VecDeque<TaskId>>,
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
            waiters: Mutex::new(VecDeque::new()),
        }
    }

    /// Sleeps until `condition()` holds (at once if it already does).
    pub fn wait_until(&self, condition: impl Fn() -> bool) {
        loop {
            let slept = interrupts::without_interrupts(|| {
                if condition() {
                    return false;
                }
                let me = current();
                self.waiters.lock().push_back(me);
                sleep_current();
                true
            });
            if !slept {
                return;
            }
        }
    }

    /// Adds the running task to the queue without sleeping: for a task about to sleep on
    /// several queues at once (`poll`), which takes itself off them with [`Self::remove`]
    /// when it wakes. Interrupts must be off from here to the sleep.
    pub fn add_current(&self) {
        debug_assert!(!interrupts::are_enabled());
        let me = current();
        let mut waiters = self.waiters.lock();
        if !waiters.contains(&me) {
            waiters.push_back(me);
        }
    }

    /// Takes `task` off the queue, if it is on it.
    pub fn remove(&self, task: TaskId) {
        interrupts::without_interrupts(|| self.waiters.lock().retain(|&t| t != task));
    }

    /// Wakes the longest waiter, if any.
    pub fn wake_one(&self) {
        interrupts::without_interrupts(|| {
            let waiter = self.waiters.lock().pop_front();
            if let Some(task) = waiter {
                wake_up_from(&[task]);
            }
        });
    }

    /// Wakes every waiter. The wake-ups may switch tasks, so no lock may be held across them:
    /// the waiters are first moved out. A few (nearly always one) are copied to the stack
    /// and the queue keeps its buffer; had the buffer itself been moved out, the woken task
    /// (which often runs at once and sleeps again on this queue) would find the queue without
    /// one and allocate — a heap round trip on every pipe transfer. Waking allocates nothing,
    /// and an empty queue costs one look.
    pub fn wake_all(&self) {
        const FEW: usize = 4;
        interrupts::without_interrupts(|| {
            let mut queue = self.waiters.lock();
            match queue.len() {
                0 => {}
                n if n <= FEW => {
                    let mut few = [0; FEW];
                    for (slot, task) in few.iter_mut().zip(queue.drain(..)) {
                        *slot = task;
                    }
                    drop(queue);
                    wake_up_from(&few[..n]);
                }
                _ => {
                    let mut many = core::mem::take(&mut *queue);
                    drop(queue);
                    wake_up_from(many.make_contiguous());
                }
            }
        });
    }

    /// Wakes every waiter from an interrupt handler (the console's input): the switch, if a
    /// wake-up asks for one, waits for the interrupt's end. Each waiter is taken off the
    /// queue before it is woken, so the queue's lock is never held across a wake-up.
    pub fn wake_all_irq(&self, now: u64) {
        debug_assert!(!interrupts::are_enabled());
        loop {
            let next = self.waiters.lock().pop_front();
            let Some(task) = next else { break };
            wake_up_irq(task, now);
        }
    }
}
