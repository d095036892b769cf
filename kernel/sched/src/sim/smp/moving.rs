//! How tasks move between the simulated CPUs once they run: the balancer's part of each
//! tick (Linux's `trigger_load_balance`), and each CPU's stopper
//! (`active_load_balance_cpu_stop`, `migration_cpu_stop`), which moves a running task the balancer or exec balancing
//! pushes (run inline, in no time, through the same `Rq` calls as the kernel's
//! `migration/N`: `Rq::wake_stopper`, the pick, `Rq::stopper_sleeps`).

use super::SmpSim;
use crate::policy::{Policy, TaskId, Wakeup};
use crate::rq::State;
use crate::smp::runqueues;

impl<P: Policy> SmpSim<P> {
    /// `cpu`'s stopper, in no time: the task it was asked to push, preempted by it and so
    /// waiting here now, goes to its new CPU (a task that went to sleep first stays: the
    /// stopper moves only a queued task, as Linux's `active_load_balance_cpu_stop`).
    pub(super) fn run_stopper(&mut self, cpu: usize) {
        if let Some((task, to)) = self.cpus[cpu].push.take()
            && self.cpu_of[task] == cpu
            && self.cpus[cpu].rq.state(task) == State::Runnable
        {
            self.move_task(task, cpu, to);
        }
        self.cpus[cpu].rq.stopper_sleeps(self.now);
    }

    /// Asks `cpu`'s stopper to push its running task to `to`, unless it has a push to make
    /// already or runs no task.
    pub(super) fn push_running(&mut self, cpu: usize, to: usize) {
        if let Some(task) = self.current(cpu)
            && self.cpus[cpu].push.is_none()
        {
            self.cpus[cpu].push = Some((task, to));
            self.cpus[cpu].rq.wake_stopper(self.now);
        }
    }

    pub(super) fn move_task(&mut self, task: TaskId, from: usize, to: usize) {
        let moving = self.cpus[from].rq.detach(task, self.now);
        self.cpus[to]
            .rq
            .attach(task, moving, Wakeup::default(), self.now);
        self.cpu_of[task] = to;
        self.migrations += 1;
    }

    /// The balancing part of `cpu`'s tick; an active balance marks the busiest CPU's
    /// running task to be pushed at once.
    pub(super) fn balance_tick(&mut self, cpu: usize) {
        let jiffies = self.now / self.config.tick_ns;
        let hz = 1_000_000_000 / self.config.tick_ns;
        if !self.balancing {
            runqueues::update_cpu_load(self, cpu);
            return;
        }
        for from in runqueues::tick(self, cpu, jiffies, hz) {
            self.push_running(from, cpu);
        }
    }
}
