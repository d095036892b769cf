//! The running task, readable without the scheduler's lock: Linux's per-CPU `current`.
//! `pick` writes it as it chooses the next task, under the lock and with interrupts off;
//! everything that runs afterwards runs as that task, so a read always sees its own id.
//! System calls ask "who am I?" on every call (`getpid`, the kill check at their end): an
//! atomic load instead of a lock round trip.

use crate::task::TaskId;
use core::sync::atomic::{AtomicUsize, Ordering};

/// The running task's id (the boot task's until the first switch).
static CURRENT: AtomicUsize = AtomicUsize::new(super::BOOT_TASK);
/// The process it is a thread of: its leader's id (its own id for a kernel thread).
static CURRENT_PROCESS: AtomicUsize = AtomicUsize::new(super::BOOT_TASK);
/// Tasks marked killed that have not exited yet: while there are none, a system call's
/// end need not look at the running task's mark.
static KILLS_PENDING: AtomicUsize = AtomicUsize::new(0);

/// Records the task `pick` chose (and its process).
pub(super) fn set(id: TaskId, process: TaskId) {
    CURRENT.store(id, Ordering::Relaxed);
    CURRENT_PROCESS.store(process, Ordering::Relaxed);
}

/// The running task's id: a new task can read its own id as soon as it runs.
pub fn current() -> TaskId {
    CURRENT.load(Ordering::Relaxed)
}

/// The running task's process id: its leader's id (its own for a kernel thread).
pub fn current_process() -> TaskId {
    CURRENT_PROCESS.load(Ordering::Relaxed)
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
