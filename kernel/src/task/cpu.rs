//! Which CPU's runqueue holds a task (Linux's `task_cpu()`, `p->cpu`), one number shared by
//! the task's entry in the task table and its context. A waker that holds only runqueue
//! locks moves a sleeping task, and a newly-idle pass a queued one, and says where it went
//! through the context in its hands
//! (Linux's `set_task_cpu`, under the locks of the runqueue the task leaves and the one it
//! joins); the holder of the task table reads it through the table, and knows it for sure
//! once it holds the runqueue it names and the number has not changed (`sched`'s
//! `Scheduler::cpu_of`, Linux's `task_rq_lock` loop). A leaf, as `id` is.

use alloc::sync::Arc;
use core::sync::atomic::{AtomicUsize, Ordering};

/// The CPU whose runqueue holds a task (see the module's docs). A clone shares the number.
#[derive(Debug, Clone, Default)]
pub struct TaskCpu(Arc<AtomicUsize>);

impl TaskCpu {
    /// The CPU, as last written: sure only under the lock of the runqueue it names.
    #[inline(always)]
    pub fn get(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }

    /// The task is now on `cpu`'s runqueue: written while the runqueues it leaves and joins
    /// are both held (or before the task is on any).
    pub(crate) fn set(&self, cpu: usize) {
        self.0.store(cpu, Ordering::Release);
    }
}
