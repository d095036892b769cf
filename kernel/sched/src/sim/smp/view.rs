//! The SMP simulator as 2.6.24's balancer sees it ([`Machine`]): each CPU's load and load
//! history, the busiest CPU's waiting tasks group by group, and the moves.

use super::SmpSim;
use crate::policy::Policy;
use crate::rq::State;
use crate::sim::IDLE;
use crate::smp::balancer::Machine;
use crate::smp::busiest::CpuStat;
use crate::smp::cpuset::CpuSet;
use crate::smp::move_tasks::{Candidate, GroupQueues, MAX_PRIO, Queues};
use alloc::vec::Vec;

/// The machine as the balancer sees it.
pub(super) struct View<'a, P: Policy> {
    pub(super) sim: &'a mut SmpSim<P>,
}

impl<P: Policy> Machine for View<'_, P> {
    fn stats(&self) -> Vec<CpuStat> {
        (0..self.sim.cpus.len())
            .map(|cpu| {
                let c = &self.sim.cpus[cpu];
                let queues = c.rq.policy().balance_queues();
                let current = c.rq.current();
                // The current task counts while it is still queued: one about to sleep
                // (a newly-idle pass) has left the queue already, as in Linux.
                let queued = current != IDLE && c.rq.state(current) == State::Running;
                CpuStat {
                    load: queues.iter().map(|q| q.load).sum(),
                    nr_running: queues.iter().map(|q| q.waiting.len() as u32).sum::<u32>()
                        + u32::from(queued),
                    cpu_load: c.cpu_load,
                    idle: current == IDLE,
                }
            })
            .collect()
    }

    fn queues(&self, busiest: usize, this_cpu: usize) -> Queues {
        let (b, t) = (&self.sim.cpus[busiest].rq, &self.sim.cpus[this_cpu].rq);
        let here = t.policy().balance_queues();
        let busy = b.policy().balance_queues();
        // Without groups the policy has one queue, the root's (uid `None`).
        let grouped = busy.len() != 1 || busy[0].uid.is_some();
        let queues: Vec<GroupQueues> = busy
            .into_iter()
            .map(|q| {
                let mine = here.iter().find(|h| h.uid == q.uid);
                GroupQueues {
                    busiest: q
                        .waiting
                        .iter()
                        .map(|w| Candidate {
                            task: w.task,
                            weight: w.weight,
                            prio: w.prio,
                            allowed: self.sim.allowed[w.task],
                            last_ran: b.policy().task_info(w.task).map_or(0, |i| i.exec_start),
                            running: false,
                        })
                        .collect(),
                    busiest_load: q.load,
                    this_load: mine.map_or(0, |h| h.load),
                    this_best_prio: mine.map_or(MAX_PRIO, |h| h.best_prio),
                }
            })
            .collect();
        if grouped {
            Queues::Groups(queues)
        } else {
            Queues::Flat(queues.into_iter().next().expect("one queue"))
        }
    }

    fn clock(&self, _cpu: usize) -> u64 {
        self.sim.now
    }

    fn running_allowed(&self, cpu: usize) -> CpuSet {
        self.sim
            .current(cpu)
            .map_or(CpuSet::EMPTY, |t| self.sim.allowed[t])
    }

    fn pull(&mut self, from: usize, to: usize, tasks: &[usize]) {
        for &task in tasks {
            self.sim.move_task(task, from, to);
        }
    }
}
