//! The SMP simulator as the balancer sees it ([`Machine`]): each CPU's load and load
//! history, the busiest CPU's waiting tasks group by group, the moves, and — from 2.6.27 —
//! each group's shares split across CPUs.

use super::SmpSim;
use crate::policy::Policy;
use crate::rq::State;
use crate::sim::IDLE;
use crate::smp::balancer::Machine;
use crate::smp::busiest::CpuStat;
use crate::smp::cpuset::CpuSet;
use crate::smp::move_tasks::{Candidate, GroupQueues, MAX_PRIO, Queues};
use crate::smp::shares::{GroupOnCpu, GroupSpan, Share, SharesSplit};
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
                    load: self.sim.load(cpu),
                    nr_running: queues.iter().map(|q| q.waiting.len() as u32).sum::<u32>()
                        + u32::from(queued),
                    cpu_load: c.cpu_load,
                    idle: current == IDLE,
                }
            })
            .collect()
    }

    fn cpus(&self) -> usize {
        self.sim.cpus.len()
    }

    fn queues(&self, busiest: usize, this_cpu: usize) -> Queues {
        let (b, t) = (&self.sim.cpus[busiest].rq, &self.sim.cpus[this_cpu].rq);
        let here = t.policy().balance_queues();
        let busy = b.policy().balance_queues();
        // Without groups the policy has one queue, the root's (uid `None`).
        let grouped = busy.len() != 1 || busy[0].uid.is_some();
        let busy_uids: Vec<Option<u32>> = busy.iter().map(|q| q.uid).collect();
        let candidate = |task: usize, weight: u64, prio: u32, running: bool| Candidate {
            task,
            weight,
            prio,
            allowed: self.sim.allowed[task],
            last_ran: b.policy().task_info(task).map_or(0, |i| i.exec_start),
            running,
        };
        // From 2.6.27 the balancer walks a list of the group's tasks that holds the
        // running one too (`cfs_rq->tasks`): it stays, but as a task whose affinity
        // allows the balancing CPU it keeps the pass from counting as "all pinned".
        // (That list is in enqueue order; the waiting tasks are taken here in the
        // timeline's, the running one last.)
        let running = self
            .sim
            .current(busiest)
            .filter(|_| !self.sim.split.load_is_tasks());
        let queues: Vec<GroupQueues> = busy
            .into_iter()
            .map(|q| {
                let mine = here.iter().find(|h| h.uid == q.uid);
                let mut tasks: Vec<Candidate> = q
                    .waiting
                    .iter()
                    .map(|w| candidate(w.task, w.weight, w.prio, false))
                    .collect();
                if let Some(task) = running
                    && let Some(info) = b.policy().task_info(task)
                    && (q.uid.is_none() || q.uid == Some(self.sim.tasks[task].uid))
                {
                    // Its priority does not count: it cannot move.
                    tasks.push(candidate(task, info.weight, MAX_PRIO, true));
                }
                GroupQueues {
                    busiest: tasks,
                    busiest_load: q.load,
                    this_load: mine.map_or(0, |h| h.load),
                    this_best_prio: mine.map_or(MAX_PRIO, |h| h.best_prio),
                }
            })
            .collect();
        if grouped && !self.sim.split.load_is_tasks() {
            let shares = busy_uids
                .iter()
                .map(|&uid| uid.map_or(0, |uid| self.sim.held(busiest, uid)))
                .collect();
            let root_load = b.policy().runqueues()[0].load;
            Queues::Split {
                groups: queues,
                shares,
                root_load,
            }
        } else if grouped {
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

    fn shares_split(&self) -> SharesSplit {
        self.sim.split
    }

    fn groups_on(&self, span: CpuSet) -> Vec<GroupSpan> {
        let mut uids: Vec<u32> = span
            .iter()
            .flat_map(|cpu| self.sim.cpus[cpu].rq.policy().balance_queues())
            .filter_map(|q| q.uid)
            .collect();
        uids.sort_unstable();
        uids.dedup();
        let Some(params) = self.sim.cpus[0].rq.policy().fair_params() else {
            return Vec::new();
        };
        uids.into_iter()
            .map(|uid| {
                let shares = params.shares_of(uid);
                let on = span
                    .iter()
                    .map(|cpu| {
                        let queues = self.sim.cpus[cpu].rq.policy().balance_queues();
                        let q = queues.iter().find(|q| q.uid == Some(uid));
                        GroupOnCpu {
                            cpu,
                            weight: q.map_or(0, |q| q.load),
                            shares: self.sim.held(cpu, uid),
                            // A CPU without the group's entity yet makes it with the
                            // whole shares.
                            entity_weight: q.and_then(|q| q.entity_weight).unwrap_or(shares),
                        }
                    })
                    .collect();
                GroupSpan { uid, shares, on }
            })
            .collect()
    }

    fn reweight_group(&mut self, uid: u32, share: Share) {
        let now = self.sim.now;
        let cpu = &mut self.sim.cpus[share.cpu];
        cpu.rq.set_group_weight_here(uid, share.entity_weight, now);
        cpu.held_shares.retain(|&(u, _)| u != uid);
        cpu.held_shares.push((uid, share));
    }
}

impl<P: Policy> SmpSim<P> {
    /// `weighted_cpuload`: 2.6.24–2.6.26 count the tasks' weight; later eras the top-level
    /// entities', a group's with its share here.
    pub(super) fn load(&self, cpu: usize) -> u64 {
        let policy = self.cpus[cpu].rq.policy();
        if self.split.load_is_tasks() {
            policy.balance_queues().iter().map(|q| q.load).sum()
        } else {
            policy.runqueues()[0].load
        }
    }
    /// The part of uid `uid`'s shares `cpu` holds (none until a split gives it some).
    pub(super) fn held(&self, cpu: usize, uid: u32) -> u64 {
        self.last_share(cpu, uid).map_or(0, |s| s.shares)
    }

    /// What the last split gave uid `uid`'s group on `cpu`.
    pub(super) fn last_share(&self, cpu: usize, uid: u32) -> Option<Share> {
        let held = &self.cpus[cpu].held_shares;
        held.iter().find(|&&(u, _)| u == uid).map(|&(_, s)| s)
    }
}
