//! What a CPU's stopper is asked to do (Linux's `cpu_stop_work`, queued on the CPU's
//! `cpu_stopper`): kept on the CPU's runqueue, under its lock, in the order asked
//! (`Runqueue::queue_stop_work`). The stopper itself, and who asks it, are
//! `sched::stopper`'s.

use crate::task::TaskRef;

/// One piece of work for a stopper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sched) enum StopWork {
    /// Move `task` — the stopper's CPU's running task when it was asked — to the CPU its
    /// mark names (`Context::move_to`), unless it has gone to sleep, exited or moved since
    /// (Linux's `migration_cpu_stop`, and `active_load_balance_cpu_stop` for a push).
    Migrate(TaskRef),
}
