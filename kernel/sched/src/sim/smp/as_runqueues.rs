//! The simulated machine as the balancer reads and changes it (the policy crate's
//! [`Runqueues`]): it holds every runqueue, so a newly-idle pass's focus is only checked
//! ([`focus`](super::focus)), and a move is the simulator's own.

use super::SmpSim;
use crate::policy::{Nanos, Policy, TaskId, Uid};
use crate::rq::Rq;
use crate::smp::cpuset::CpuSet;
use crate::smp::domains::Rules;
use crate::smp::runqueues::{CpuBalance, Runqueues};
use crate::smp::shares::SharesSplit;

impl<P: Policy> Runqueues for SmpSim<P> {
    type Policy = P;

    fn len(&self) -> usize {
        self.cpus.len()
    }

    fn rq(&self, cpu: usize) -> &Rq<P> {
        self.focus.check(cpu);
        &self.cpus[cpu].rq
    }

    fn rq_mut(&mut self, cpu: usize) -> &mut Rq<P> {
        self.focus.check(cpu);
        &mut self.cpus[cpu].rq
    }

    fn balance(&self, cpu: usize) -> &CpuBalance {
        self.focus.check(cpu);
        &self.cpus[cpu].balance
    }

    fn balance_mut(&mut self, cpu: usize) -> &mut CpuBalance {
        self.focus.check(cpu);
        &mut self.cpus[cpu].balance
    }

    fn allowed(&self, cpu: usize, task: TaskId) -> CpuSet {
        self.focus.check(cpu);
        self.allowed[task]
    }

    fn uid(&self, cpu: usize, task: TaskId) -> Uid {
        self.focus.check(cpu);
        self.tasks[task].uid
    }

    fn now(&self) -> Nanos {
        self.now
    }

    fn split(&self) -> SharesSplit {
        self.split
    }

    fn rules(&self) -> Rules {
        self.rules
    }

    fn migrate(&mut self, task: TaskId, from: usize, to: usize) {
        self.focus.check(from);
        self.focus.check(to);
        self.move_task(task, from, to);
    }

    fn focus(&mut self, cpus: CpuSet) {
        self.focus.focus(cpus);
    }

    fn reach(&mut self, cpu: usize) {
        self.focus.reach(cpu);
    }
}
