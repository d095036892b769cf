//! Where the SMP simulator puts a task that forks, execs or wakes: 2.6.24's placement
//! ([`crate::smp::placement`]) on the simulated machine.

use super::SmpSim;
use crate::policy::{ForkKind, Policy, TaskId, Wakeup};
use crate::rq::State;
use crate::sim::{Behavior, SimTask, VFORK_RELEASE, Waiting, vfork_waiter};
use crate::smp::domains::Flags;
use crate::smp::runqueues::{self, SyncWaker};
use alloc::boxed::Box;

impl<P: Policy> SmpSim<P> {
    /// `parent`, running on `cpu`, forks a child of `behavior`: placed by the era's fork
    /// balancing (`runqueues::balance_self`), set up by the parent's CPU and queued on its
    /// own.
    pub(super) fn fork(
        &mut self,
        cpu: usize,
        parent: TaskId,
        behavior: Box<dyn Behavior>,
        kind: ForkKind,
    ) {
        let child = TaskId::new(self.tasks.len());
        let (uid, allowed) = (self.tasks[parent].uid, self.allowed[parent]);
        self.tasks.push(SimTask::new(behavior, uid, Some(parent)));
        self.allowed.push(allowed);
        let to = runqueues::balance_self(self, cpu, Flags::BALANCE_FORK, allowed);
        self.cpu_of.push(to);
        let now = self.now;
        if to == cpu {
            self.cpus[cpu].rq.fork(child, kind, now);
        } else {
            let moving = self.cpus[cpu].rq.fork_away(child, now);
            self.cpus[to]
                .rq
                .attach(child, moving, Wakeup::default(), now);
        }
        if kind == ForkKind::Vfork {
            self.cpus[cpu].rq.block_current(now);
            self.tasks[parent].waiting = Some(Waiting::VforkChild(child));
        }
    }

    /// `sched_exec`: an exec'ing task on `cpu` goes to the CPU 2.6.24's exec balancing
    /// picks, pushed there by its CPU's migration thread.
    pub(super) fn exec_balance(&mut self, cpu: usize, task: TaskId) {
        let to = runqueues::balance_self(self, cpu, Flags::BALANCE_EXEC, self.allowed[task]);
        if to != cpu {
            self.push_running(cpu, to);
        }
    }

    pub(super) fn release_vfork_parent(&mut self, cpu: usize, child: TaskId) {
        if let Some(parent) = vfork_waiter(&self.tasks, child) {
            self.wake_from(parent, cpu, VFORK_RELEASE, None);
        }
    }

    /// `task`'s timer expires, on the CPU it slept on (where it armed it).
    pub(super) fn timer_wake(&mut self, task: TaskId) {
        let timer = Wakeup {
            from_interrupt: true,
            ..Wakeup::default()
        };
        self.wake_from(task, self.cpu_of[task], timer, None);
    }

    /// `try_to_wake_up` of `task` from `waker_cpu` (synchronous if the waker, of that weight
    /// and uid, is about to sleep or go), placed as the era places a wake-up
    /// (`crate::smp::placement`): the waker's CPU or the task's, or an idle sibling.
    pub(super) fn wake_from(
        &mut self,
        task: TaskId,
        waker_cpu: usize,
        wakeup: Wakeup,
        sync_waker: Option<SyncWaker>,
    ) {
        let prev = self.cpu_of[task];
        if self.cpus[prev].rq.state(task) != State::Sleeping {
            return;
        }
        let cpu = runqueues::wake_cpu(self, task, prev, waker_cpu, sync_waker);
        runqueues::woken_onto(self, cpu);
        if cpu == prev {
            self.cpus[cpu].rq.wake(task, wakeup, self.now);
        } else {
            let moving = self.cpus[prev].rq.detach(task, self.now);
            self.cpus[cpu].rq.attach(task, moving, wakeup, self.now);
            self.cpu_of[task] = cpu;
        }
        self.tasks[task].waiting = None;
    }
}
