//! The scheduler's side of thread groups (`thread_group`): which tasks are the threads
//! of a process, their CPU time, the running thread's tid bookkeeping and signal mask, and
//! ending a whole group.

use super::exit_status::CpuTimes;
use super::thread_group::ThreadGroup;
use crate::sched::{Scheduler, runqueue, with_sched, with_tasks};
use crate::task::{Slot, State, Task, TaskId};
use crate::time::clock;
use ::sched::TaskStats;
use alloc::sync::Arc;
use alloc::vec::Vec;

impl Scheduler {
    /// The CPU time so far of the task in `slot` (counting the current run if it is on the
    /// CPU at `now`), split into user and system time.
    pub(in crate::sched) fn cpu_times(&self, slot: Slot, now: u64) -> CpuTimes {
        let running = self.state(slot) == State::Running;
        times_of(self.task_rq(slot).stats(slot), now, running)
    }

    fn in_group(&self, t: &Task, group: &Arc<ThreadGroup>) -> bool {
        self.alive(t.slot) && t.group.as_ref().is_some_and(|g| Arc::ptr_eq(g, group))
    }

    pub(in crate::sched) fn threads_of(
        &self,
        group: &Arc<ThreadGroup>,
    ) -> impl Iterator<Item = &Task> {
        self.slots
            .iter()
            .flatten()
            .map(|t| &**t)
            .filter(move |t| self.in_group(t, group))
    }
}

/// A task's CPU time from its statistics, counting the current run if it is `running` at
/// `now`, split into user and system time.
fn times_of(s: &TaskStats, now: u64, running: bool) -> CpuTimes {
    CpuTimes {
        voluntary_switches: s.voluntary_switches,
        involuntary_switches: s.involuntary_switches,
        ..CpuTimes::from_ticks(s.cpu_ns_at(now, running), s.user_ticks, s.system_ticks)
    }
}

/// The running task's process (`None` in a kernel thread).
pub fn current_group() -> Option<Arc<ThreadGroup>> {
    with_tasks(|s| s.current_task().group.clone())
}

/// The live threads of the process task `id` belongs to (just `id` for a kernel thread;
/// none if it has exited).
pub fn threads_of_task(id: TaskId) -> Vec<TaskId> {
    with_sched(|s| {
        let Some(t) = s.task_by_id(id) else {
            return Vec::new();
        };
        let slot = t.slot;
        match t.group.clone() {
            Some(g) => s.threads_of(&g).map(|t| t.id).collect(),
            None if s.alive(slot) => alloc::vec![id],
            None => Vec::new(),
        }
    })
}

/// The live threads of `group`.
pub fn threads_in(group: &Arc<ThreadGroup>) -> Vec<TaskId> {
    with_sched(|s| s.threads_of(group).map(|t| t.id).collect())
}

/// The running thread's CPU time, under this CPU's runqueue's lock alone, where its
/// figures are (Linux's `task_sched_runtime` on `current`).
pub fn current_thread_times() -> CpuTimes {
    let rq = runqueue::lock_this_cpu();
    let rq = rq.as_ref().expect("a runqueue");
    times_of(rq.stats(rq.current()), clock::now(), true)
}

/// The CPU time of the live threads of `group`, the running thread's process. A process of
/// one thread, nearly every one, has only the caller's: read under this CPU's runqueue's
/// lock alone, as Linux's `thread_group_cputime` reads the caller's, so that a program
/// polling its own CPU clock (a CPU hog timing itself) takes no lock another CPU needs.
/// Several threads are read together, under the scheduler's lock.
pub fn live_threads_times(group: &Arc<ThreadGroup>) -> CpuTimes {
    if !group.has_other_threads() {
        return current_thread_times();
    }
    with_sched(|s| {
        let now = clock::now();
        let mut sum = CpuTimes::default();
        for t in s.threads_of(group) {
            sum.add(s.cpu_times(t.slot, now));
        }
        sum
    })
}

/// Sets where the running thread's tid is cleared when it ends (`set_tid_address`).
pub fn set_clear_child_tid(addr: u64) {
    with_tasks(|s| s.current_task().clear_child_tid = addr);
}

/// Takes, as the running thread ends, where its tid is to be cleared and where its robust
/// futex list is (0: nowhere), in one look.
pub fn take_exit_addresses() -> (u64, u64) {
    with_tasks(|s| {
        let t = s.current_task();
        (
            core::mem::take(&mut t.clear_child_tid),
            core::mem::take(&mut t.robust_list),
        )
    })
}

/// The running thread's blocked signals.
pub fn blocked_signals() -> u64 {
    with_tasks(|s| s.current_task().blocked_signals)
}

/// Sets the running thread's blocked signals.
pub fn set_blocked_signals(set: u64) {
    with_tasks(|s| s.current_task().blocked_signals = set);
}

/// Runs `f` on the running thread's signal state, in one look under the lock: its mask,
/// the mask `rt_sigsuspend` saved (to be put back after a handler), and its alternate stack.
pub fn with_thread_signals<R>(
    f: impl FnOnce(&mut u64, &mut Option<u64>, &mut crate::user::signal::altstack::AltStack) -> R,
) -> R {
    with_tasks(|s| {
        let t = s.current_task();
        f(&mut t.blocked_signals, &mut t.saved_mask, &mut t.altstack)
    })
}

/// `rt_sigsuspend`: `mask` replaces the running thread's mask until a handler has run.
pub fn suspend_mask(mask: u64) {
    with_tasks(|s| {
        let t = s.current_task();
        t.saved_mask = Some(t.blocked_signals);
        t.blocked_signals = mask;
    });
}

/// Sets the blocked signals the running thread waits for all the same (`rt_sigtimedwait`).
pub fn set_waiting_for(set: u64) {
    with_tasks(|s| s.current_task().waiting_for = set);
}

/// Whether task `id` blocks `signal` (1..=64).
pub fn blocks(id: TaskId, signal: u8) -> bool {
    with_tasks(|s| {
        s.task_by_id(id)
            .is_some_and(|t| t.blocked_signals & (1 << (signal - 1)) != 0)
    })
}

/// The process task `id` is a thread of (`None` for a kernel thread or a task gone).
pub fn group_of(id: TaskId) -> Option<Arc<ThreadGroup>> {
    with_tasks(|s| s.task_by_id(id)?.group.clone())
}
