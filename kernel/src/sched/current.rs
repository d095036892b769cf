//! The running task, readable without the scheduler's lock: Linux's per-CPU `current`, kept
//! in the CPU's [`PerCpu`](crate::percpu::PerCpu) (the switch writes it). System calls ask
//! "who am I?" on every call (`getpid`, the kill check at their end): a load instead of a
//! lock round trip. And whether any task is marked killed, so that the kill check usually
//! needs no lock either.

use crate::percpu::this_cpu;
use crate::task::TaskId;
use core::sync::atomic::{AtomicUsize, Ordering};

/// Tasks marked killed that have not exited yet: while there are none, a system call's
/// end need not look at the running task's mark.
static KILLS_PENDING: AtomicUsize = AtomicUsize::new(0);

/// The running task's id: a new task can read its own id as soon as it runs.
pub fn current() -> TaskId {
    this_cpu().current()
}

/// The running task's process id: its leader's id (its own for a kernel thread).
pub fn current_process() -> TaskId {
    this_cpu().current_process()
}

/// A task was marked killed (`kill_task`), or a marked task exited.
pub(super) fn kill_marked() {
    KILLS_PENDING.fetch_add(1, Ordering::Relaxed);
}
pub(super) fn killed_task_exited() {
    KILLS_PENDING.fetch_sub(1, Ordering::Relaxed);
}

/// Whether any task is marked killed (if not, the running one is not).
pub fn kills_pending() -> bool {
    KILLS_PENDING.load(Ordering::Relaxed) != 0
}
