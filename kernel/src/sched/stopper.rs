//! Each CPU's stopper thread, `migration/N` (Linux's `stop_one_cpu` and the `cpu_stopper`
//! kthreads of kernel/stop_machine.c, with `migration_cpu_stop` as their work): how a task
//! that is running is moved to another CPU.
//!
//! A running task cannot be taken off its runqueue: its registers are live on its CPU. So
//! whoever wants it elsewhere — a change of affinity (`affinity`), the balancer's push
//! (`balance`), `sched_exec`'s placement, a CPU going offline (`hotplug`) — marks it with
//! the CPU it is to go to (`Context::move_to`) and asks its CPU's stopper
//! ([`Scheduler::ask_stopper`]). The stopper is above every policy (the policy crate's
//! `Rq` picks it first), so that CPU switches to it at once: by the time the stopper runs,
//! the task's registers are saved and it waits on the runqueue like any other task, and
//! the stopper moves it as one (`Scheduler::finish_move`: detach, then attach on the new
//! CPU, both under the locks that hold the two runqueues).
//!
//! A task that went to sleep before its stopper ran is not moved: a change of affinity
//! stays marked, and moves it as it wakes (`wakeup`); a push or an exec's placement, for a
//! task that keeps running, is forgotten (`Runqueue::block_current`). One that exited is
//! forgotten too. With one CPU there is nothing to move to, and no stopper.

use super::runqueue::{Runqueue, StopWork};
use super::{Scheduler, change_then_reschedule, new_task};
use crate::mm::stack::KernelStack;
use crate::percpu::this_cpu;
use crate::task::{State, TaskRef};
use crate::time::clock;
use alloc::format;

/// The stopper's body, on CPU `cpu`: do the work asked, then sleep until asked again. Each
/// round runs under the scheduler's lock, which the moves need (both runqueues).
pub(super) fn stopper_thread(cpu: u64) {
    let cpu = cpu as usize;
    loop {
        change_then_reschedule(|s| s.run_stop_work(cpu));
    }
}

impl Scheduler {
    /// The CPU of runqueue `rq`, not yet among the scheduler's, gets its stopper,
    /// `migration/N`, on `stack`: a kernel thread allowed that CPU alone, asleep until
    /// asked. At boot, before any other task starts: the stoppers take the pids after the
    /// idle task's, as Linux's come right after its first kernel threads.
    pub(super) fn add_stopper(&mut self, rq: &mut Runqueue, stack: KernelStack, now: u64) {
        let cpu = rq.cpu();
        let name = format!("migration/{cpu}");
        let entry = Some((stopper_thread as fn(u64), cpu as u64));
        let (task, mut context) = new_task(&name, 0, 0, entry, Some(stack));
        let (id, slot) = self.add(task);
        let task = self.task(slot);
        task.cpu.set(cpu);
        task.started_at = now;
        let comm = self.task_ref(slot).comm(false);
        (context.id, context.process, context.comm) = (id, id, comm);
        context.affinity = 1 << cpu;
        rq.install_stopper(slot, context, now);
    }

    /// Whether the task in `slot` is its CPU's stopper.
    pub(super) fn is_stopper(&self, slot: crate::task::Slot) -> bool {
        self.task_rq(slot).is_stopper(slot)
    }

    /// Asks CPU `cpu`'s stopper to do `work`: it preempts what runs there at once (by the
    /// reschedule IPI if `cpu` is another CPU).
    pub(super) fn ask_stopper(&mut self, cpu: usize, work: StopWork) {
        let rq = &mut self.rqs[cpu];
        let asked_before = rq.need_resched();
        rq.queue_stop_work(work);
        rq.wake_stopper(clock::now());
        rq.kick_if_asked(asked_before);
    }

    /// Asks the stopper of the CPU that runs the task in `slot` to move it to the CPU its
    /// mark names (see the module's docs).
    pub(super) fn stop_to_migrate(&mut self, slot: crate::task::Slot) {
        let (id, cpu) = (self.task_ref(slot).id, self.cpu_of(slot));
        self.ask_stopper(cpu, StopWork::Migrate(TaskRef { id, slot, cpu }));
    }

    /// One round of CPU `cpu`'s stopper: every work asked so far, then its sleep.
    fn run_stop_work(&mut self, cpu: usize) {
        debug_assert_eq!(cpu, this_cpu().index(), "a stopper runs on its own CPU");
        let now = clock::now();
        while let Some(work) = self.rqs[cpu].take_stop_work() {
            match work {
                StopWork::Migrate(task) => self.migrate_preempted(task, cpu, now),
            }
        }
        self.rqs[cpu].stopper_sleeps(now);
    }

    /// `migration_cpu_stop`: `task`, preempted on `cpu` by this stopper, moves where it is
    /// marked to — if it is still that task, still here, and still waiting for the CPU.
    fn migrate_preempted(&mut self, task: TaskRef, cpu: usize, now: u64) {
        if self.task_of_ref(task).is_none() || self.cpu_of(task.slot) != cpu {
            return;
        }
        if self.state(task.slot) == State::Runnable {
            let _ = self.finish_move(task.slot, ::sched::Wakeup::default(), now);
        }
    }
}
