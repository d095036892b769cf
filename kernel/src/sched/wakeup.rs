//! Waking a task (Linux's `try_to_wake_up`): a sleeper is put back on a runqueue — its
//! own CPU's, or the one the era's wake-up placement picks (`balance::wake_cpu`), or the
//! one a change of affinity or an offline CPU leaves it — and that CPU is told to
//! reschedule if the wakee should preempt what it runs (`resched_curr`'s IPI).
//!
//! Interrupts are off throughout (asserted at the top of [`Scheduler::wake`]): this is the
//! wake-up under the scheduler's lock and every runqueue's (`with_sched`), from a task or
//! from an interrupt handler. A task allowed one CPU is woken under that CPU's runqueue
//! lock instead, when its waker finds it there (`sleep::wake_on_its_cpu`): the same steps,
//! with no placement to make.

use super::{Scheduler, trace};
use crate::arch::irq;
use crate::percpu::this_cpu;
use crate::task::{Slot, State, TaskId, TaskRef};
use core::sync::atomic::Ordering;
use sched::Wakeup;

impl Scheduler {
    /// Wakes task `id` if it sleeps (an id of a task that has exited is ignored, and so is
    /// one of a task that is not asleep: the runqueue's rule).
    pub(super) fn wake(&mut self, id: TaskId, wakeup: Wakeup, now: u64) {
        if let Some(&slot) = self.by_id.get(&id) {
            self.wake_slot(slot, wakeup, now);
        }
    }

    /// Wakes `task` if it sleeps, found by its slot without a search if it still holds the
    /// slot (see [`TaskRef`]).
    pub(super) fn wake_ref(&mut self, task: TaskRef, wakeup: Wakeup, now: u64) {
        if self.task_of_ref(task).is_some() {
            self.wake_slot(task.slot, wakeup, now);
        } else {
            self.wake(task.id, wakeup, now);
        }
    }

    /// Wakes the task in `slot` (see [`Scheduler::wake`]).
    fn wake_slot(&mut self, slot: Slot, wakeup: Wakeup, now: u64) {
        debug_assert!(!irq::enabled(), "wake-ups run with interrupts off");
        match self.state(slot) {
            State::Sleeping => {}
            // It runs: on another CPU, perhaps about to sleep (`Runqueue::wake_while_running`).
            // On this CPU it is the task this wake-up interrupted, or its own waker: not in
            // that window, which it spends with interrupts off.
            State::Running => {
                let cpu = self.cpu_of(slot);
                if cpu != this_cpu().index() {
                    self.rqs[cpu].wake_while_running(slot);
                }
                return;
            }
            _ => return,
        }
        // A wake-up from an interrupt handler (a timer, the console) has no waker: the
        // running task was only interrupted (ADAPTIVE_GRAN learns from task wake-ups only).
        let wakeup = Wakeup {
            from_interrupt: this_cpu().in_interrupt(),
            ..wakeup
        };
        self.record(now, wakeup.from_interrupt, trace::Kind::Waking, slot);
        // Its CPU went offline while it slept: it wakes where `select_fallback_rq` says.
        let prev = self.cpu_of(slot);
        if !self.is_online(prev) && self.context(slot).move_to.is_none() {
            let to = self.fallback_cpu(slot, prev);
            self.context_mut(slot).move_to = Some(to);
        }
        let context = self.rqs[prev].context(slot);
        let (moving, leaving) = (
            context.move_to.is_some(),
            context.on_cpu.load(Ordering::Acquire),
        );
        // Its affinity no longer allows its CPU: it wakes on its new one (Linux's
        // `select_task_rq` at a wake-up chooses among the allowed CPUs) — unless it is
        // still its CPU's current task, blocked but not yet switched away from. That CPU
        // may be waiting for a runqueue lock this wake-up holds (a newly-idle pass, before
        // its pick), so the move cannot wait for its `on_cpu` here: the task wakes
        // where it is, runnable again, and that CPU's stopper moves it, as it moves a
        // running task (Linux's `ttwu_runnable` leaves such a task where it is, and
        // `migration_cpu_stop` moves it). Once that CPU has picked another task, it takes
        // no lock until it clears `on_cpu` (`finish_switch`), and the move waits for it
        // (`finish_move`).
        let still_current = self.rqs[prev].current() == slot;
        if moving && !(leaving && still_current) {
            if let Some(to) = self.finish_move(slot, wakeup, now) {
                self.rqs[to].woken_onto();
            }
            return;
        }
        // Where the era wakes it (a task still leaving its CPU stays there, as Linux's
        // `try_to_wake_up` keeps a `task_running` one).
        let cpu = if leaving {
            prev
        } else {
            self.wake_cpu(slot, prev, wakeup)
        };
        if cpu != prev {
            self.rqs[cpu].woken_onto();
            self.move_between(slot, prev, cpu, wakeup, now);
            return;
        }
        self.rqs[cpu].wake_here(slot, wakeup, now);
        if moving {
            self.stop_to_migrate(slot);
        }
    }
}
