//! Which CPUs a task may run on (Linux's `sched_setaffinity` and `set_cpus_allowed_ptr`,
//! kernel/sched/core.c), and how a task moves when its CPU is no longer one of them.
//!
//! A task is on one runqueue at a time (`Task::cpu`). Before the policy's multiprocessor
//! half brings balancing, a task changes CPU only here: when its affinity stops allowing
//! the CPU it is on. It is marked with the CPU it goes to (`Context::move_to`), and:
//! - a task waiting for its CPU moves at once ([`Scheduler::finish_move`]);
//! - a running one is moved by its CPU's stopper (`stopper`, Linux's `stop_one_cpu` with
//!   `migration_cpu_stop`), which preempts it — by the reschedule IPI if it runs on
//!   another CPU — and moves it once its registers are saved: the caller changing its own
//!   affinity returns from here on its new CPU;
//! - a sleeping one — or a running one that goes to sleep before its stopper runs — stays
//!   marked and moves as it wakes, as Linux's wake-up chooses among the allowed CPUs: a
//!   move never ends a sleep (a vfork parent waits for its child whatever its affinity
//!   does). It may still be leaving the CPU it last ran on: once that CPU has picked
//!   another task, the move waits for its `on_cpu` flag to clear (Linux's `try_to_wake_up`
//!   waits on `p->on_cpu` the same way), which that CPU does before it takes any lock; a
//!   sleeper woken while still its CPU's current task wakes there, and its stopper moves
//!   it (`Scheduler::wake`).
//!
//! A CPU's idle task and its stopper belong to it: their affinity does not change (Linux's
//! `PF_NO_SETAFFINITY`, EINVAL).
//!
//! On the new runqueue the policy places the task as its era placed a migrated one
//! (`sched::rq::Rq::attach`; the CFS eras keep its distance from the runqueue's
//! `min_vruntime`, EEVDF its lag).

use super::{Scheduler, change_then_reschedule, with_sched};
use crate::percpu::this_cpu;
use crate::task::{Slot, State, TaskId};
use core::sync::atomic::Ordering;

/// Why an affinity was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AffinityError {
    /// No such task (or it has exited).
    NoTask,
    /// The mask holds no CPU that is online (Linux: EINVAL).
    NoOnlineCpu,
    /// The task is a CPU's own (its idle task or its stopper; Linux: EINVAL).
    PerCpuThread,
}

/// The CPUs task `id` may run on, among those online.
pub fn affinity_of(id: TaskId) -> Option<u64> {
    with_sched(|s| {
        let online = s.online_mask;
        let slot = s.live_task_by_id(id)?.slot;
        Some(s.context(slot).affinity & online)
    })
}

/// Lets task `id` run only on the CPUs in `mask` (those that are online among them); if it
/// is on another CPU it moves (see the module's docs). The caller returns from here on a
/// CPU its new mask allows.
pub fn set_affinity(id: TaskId, mask: u64) -> Result<(), AffinityError> {
    change_then_reschedule(|s| {
        let allowed = mask & s.online_mask;
        if allowed == 0 {
            return Err(AffinityError::NoOnlineCpu);
        }
        let &slot = s.by_id.get(&id).ok_or(AffinityError::NoTask)?;
        if !s.alive(slot) {
            return Err(AffinityError::NoTask);
        }
        if s.is_idle(slot) || s.is_stopper(slot) {
            return Err(AffinityError::PerCpuThread);
        }
        let to = s.least_loaded(allowed);
        s.context_mut(slot).affinity = mask;
        super::wakelist::note_affinity(slot, mask);
        let cpu = s.cpu_of(slot);
        if allowed & 1 << cpu != 0 {
            s.context_mut(slot).move_to = None;
            return Ok(());
        }
        s.context_mut(slot).move_to = Some(to);
        if s.rqs[cpu].current() == slot {
            s.stop_to_migrate(slot);
        } else if s.state(slot) == State::Runnable {
            let _ = s.finish_move(slot, ::sched::Wakeup::default(), crate::time::clock::now());
        }
        Ok(())
    })
}

impl Scheduler {
    /// Among the CPUs in `allowed` (one bit each, at least one online), the one with the
    /// fewest tasks running or waiting, the running CPU first among equals, then the lowest.
    pub(super) fn least_loaded(&self, allowed: u64) -> usize {
        let here = this_cpu().index();
        let candidates = self.online.iter().copied();
        let load = |cpu: usize| (self.runnable_on(cpu), cpu != here, cpu);
        candidates
            .filter(|&cpu| allowed & 1 << cpu != 0)
            .min_by_key(|&cpu| load(cpu))
            .unwrap_or(here)
    }

    /// The task in `slot`, marked to move, is not current on its CPU: off that runqueue,
    /// onto its new CPU's, woken there (with `wakeup`) if it slept, and that CPU told if it
    /// should switch.
    ///
    /// If it is still leaving its CPU (a sleep that has not finished switching away), this
    /// waits until its registers are saved — a few instructions on that CPU, which takes no
    /// lock before it says so. Returns the CPU it went to (`None`: nothing to move).
    pub(super) fn finish_move(
        &mut self,
        slot: Slot,
        wakeup: ::sched::Wakeup,
        now: u64,
    ) -> Option<usize> {
        let state = self.state(slot);
        let to = self.context_mut(slot).move_to.take()?;
        if state == State::Exited {
            return None;
        }
        // Its destination went offline since it was marked (`hotplug`): it stays where it
        // is if it may, as Linux's `__migrate_task` leaves it, else it falls back.
        let here = self.cpu_of(slot);
        let may_stay = self.is_online(here) && self.context(slot).affinity & 1 << here != 0;
        let to = match (self.is_online(to), may_stay) {
            (true, _) => to,
            (false, true) => here,
            (false, false) => self.fallback_cpu(slot, to),
        };
        while self.context(slot).on_cpu.load(Ordering::Acquire) {
            crate::sync::cross_call::serve();
            core::hint::spin_loop();
        }
        let from = self.cpu_of(slot);
        self.move_between(slot, from, to, wakeup, now);
        Some(to)
    }
}
