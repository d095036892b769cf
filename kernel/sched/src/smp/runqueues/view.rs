//! The runqueues as the balancer sees them ([`Machine`]): each CPU's load and load history,
//! the busiest CPU's waiting tasks group by group, the moves, and — from 2.6.27 — each
//! group's shares split across CPUs.

use super::{Runqueues, stats_one_by_one};
use crate::policy::{BalanceQueue, Policy, QueuedTask, TaskId};
use crate::smp::balancer::Machine;
use crate::smp::busiest::CpuStat;
use crate::smp::cpuset::CpuSet;
use crate::smp::group_imbalance;
use crate::smp::move_tasks::{Candidate, GroupQueues, MAX_PRIO, Queues};
use crate::smp::shares::{GroupOnCpu, GroupSpan, Share, SharesSplit};
use alloc::vec::Vec;

/// What `groups_on` reads of one CPU: its groups' queues and the shares they hold there.
struct GroupsOnCpu {
    cpu: usize,
    queues: Vec<BalanceQueue>,
    held: Vec<(u32, Share)>,
}

/// Runqueues lent to a balancing pass.
pub struct Balancing<'a, R: Runqueues + ?Sized>(pub &'a mut R);

impl<R: Runqueues + ?Sized> Balancing<'_, R> {
    /// The task `cpu` runs, unless it runs its idle task.
    fn running(&self, cpu: usize) -> Option<TaskId> {
        let rq = self.0.rq(cpu);
        Some(rq.current()).filter(|&t| t != rq.idle())
    }
}

impl<R: Runqueues + ?Sized> Balancing<'_, R> {
    /// A task of `busiest` as a pass may take it.
    fn candidate(&self, busiest: usize, w: &QueuedTask) -> Candidate {
        let r = &*self.0;
        let running = r.rq(busiest).current() == w.task;
        let policy = r.rq(busiest).policy();
        Candidate {
            task: w.task,
            weight: w.h_load,
            prio: w.prio,
            allowed: r.allowed(busiest, w.task),
            last_ran: policy.task_info(w.task).map_or(0, |i| i.exec_start),
            // A task still leaving the CPU it was preempted on stays, as a running one.
            running: running || r.leaving(busiest, w.task),
            util: w.util,
        }
    }

    /// `busiest`'s running task as a candidate that cannot move (its priority does not
    /// count), if it runs one.
    fn running_candidate(&self, busiest: usize) -> Option<Candidate> {
        let task = self.running(busiest)?;
        let info = self.0.rq(busiest).policy().task_info(task)?;
        let queued = QueuedTask {
            task,
            weight: info.weight,
            prio: MAX_PRIO,
            h_load: info.weight,
            util: 0,
        };
        Some(self.candidate(busiest, &queued))
    }

    /// 6.6: `busiest`'s fair tasks in one list whatever their group (`rq->cfs_tasks`), each
    /// weighing its `task_h_load`, the least recently run first — the list's tail, which
    /// `detach_tasks` starts from (a task goes to the head when it is queued or picked).
    /// The running task is in the list too, last: it stays, but keeps a pass from being
    /// "all pinned" if its affinity allows the balancing CPU.
    fn load_avg_queue(&self, busiest: usize, busy: &[BalanceQueue]) -> Queues {
        let mut tasks: Vec<Candidate> = busy
            .iter()
            .flat_map(|q| &q.waiting)
            .map(|w| self.candidate(busiest, w))
            .collect();
        tasks.sort_by_key(|c| c.last_ran);
        tasks.extend(self.running_candidate(busiest));
        Queues::Flat(GroupQueues {
            busiest: tasks,
            busiest_load: busy.iter().map(|q| q.load).sum(),
            this_load: 0,
            this_best_prio: MAX_PRIO,
        })
    }
}

impl<R: Runqueues + ?Sized> Machine for Balancing<'_, R> {
    fn stats(&mut self) -> Vec<CpuStat> {
        stats_one_by_one(self.0)
    }

    fn cpus(&self) -> usize {
        self.0.len()
    }

    fn queues(&mut self, busiest: usize, this_cpu: usize) -> Queues {
        self.0.focus(CpuSet::one(busiest).with(this_cpu));
        let r = &*self.0;
        let (b, t) = (r.rq(busiest), r.rq(this_cpu));
        let busy = b.policy().balance_queues();
        if r.split() == SharesSplit::FromLoadAvg {
            return self.load_avg_queue(busiest, &busy);
        }
        let here = t.policy().balance_queues();
        // Without groups the policy has one queue, the root's (uid `None`).
        let grouped = busy.len() != 1 || busy[0].uid.is_some();
        let busy_uids: Vec<Option<u32>> = busy.iter().map(|q| q.uid).collect();
        // From 2.6.27 the balancer walks a list of the group's tasks that holds the
        // running one too (`cfs_rq->tasks`): it stays, but as a task whose affinity
        // allows the balancing CPU it keeps the pass from counting as "all pinned".
        // (That list is in enqueue order; the waiting tasks are taken here in the
        // timeline's, the running one last.)
        let running = self
            .running_candidate(busiest)
            .filter(|_| !r.split().load_is_tasks());
        let queues: Vec<GroupQueues> = busy
            .into_iter()
            .map(|q| {
                let mine = here.iter().find(|h| h.uid == q.uid);
                let mut tasks: Vec<Candidate> = q
                    .waiting
                    .iter()
                    .map(|w| self.candidate(busiest, w))
                    .collect();
                if let Some(c) = running
                    && (q.uid.is_none() || q.uid == Some(r.uid(busiest, c.task)))
                {
                    tasks.push(c);
                }
                GroupQueues {
                    busiest: tasks,
                    busiest_load: q.load,
                    this_load: mine.map_or(0, |h| h.load),
                    this_best_prio: mine.map_or(MAX_PRIO, |h| h.best_prio),
                }
            })
            .collect();
        if grouped && !r.split().load_is_tasks() {
            let held = r.balance(busiest);
            let shares = busy_uids
                .iter()
                .map(|&uid| uid.map_or(0, |uid| held.held(uid)))
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
        self.0.now()
    }

    fn running_allowed(&mut self, cpu: usize) -> CpuSet {
        self.0.reach(cpu);
        self.running(cpu)
            .map_or(CpuSet::EMPTY, |t| self.0.allowed(cpu, t))
    }

    fn pull(&mut self, from: usize, to: usize, tasks: &[TaskId]) {
        self.0.focus(CpuSet::one(from).with(to));
        for &task in tasks {
            self.0.migrate(task, from, to);
        }
    }

    fn shares_split(&self) -> SharesSplit {
        self.0.split()
    }

    fn group_imbalanced(&mut self, level: usize, cpus: CpuSet) -> bool {
        // The mark is kept by the group's lowest CPU.
        if let Some(keeper) = cpus.lowest() {
            self.0.reach(keeper);
        }
        group_imbalance::marked(self.0, level, cpus)
    }

    fn mark_group_imbalanced(&mut self, level: usize, cpus: CpuSet, on: bool) {
        group_imbalance::mark(self.0, level, cpus, on);
    }

    fn groups_on(&mut self, span: CpuSet) -> Vec<GroupSpan> {
        let Some(lowest) = span.lowest() else {
            return Vec::new();
        };
        self.0.reach(lowest);
        let Some(params) = self.0.rq(lowest).policy().fair_params().cloned() else {
            return Vec::new();
        };
        // Each CPU's groups and the shares held there, read one CPU at a time.
        let on_cpus: Vec<GroupsOnCpu> = span
            .iter()
            .map(|cpu| {
                self.0.reach(cpu);
                GroupsOnCpu {
                    cpu,
                    queues: self.0.rq(cpu).policy().balance_queues(),
                    held: self.0.balance(cpu).held_shares.clone(),
                }
            })
            .collect();
        let mut uids: Vec<u32> = on_cpus
            .iter()
            .flat_map(|on| on.queues.iter().filter_map(|q| q.uid))
            .collect();
        uids.sort_unstable();
        uids.dedup();
        uids.into_iter()
            .map(|uid| {
                let shares = params.shares_of(uid);
                let on = on_cpus
                    .iter()
                    .map(|on| {
                        let q = on.queues.iter().find(|q| q.uid == Some(uid));
                        let share = on.held.iter().find(|&&(u, _)| u == uid);
                        GroupOnCpu {
                            cpu: on.cpu,
                            weight: q.map_or(0, |q| q.load),
                            shares: share.map_or(0, |(_, s)| s.shares),
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

    fn nr_running(&mut self, busiest: usize) -> Option<usize> {
        self.0.reach(busiest);
        let (r, split) = (&*self.0, self.0.split());
        let stat = super::cpu_stat(r.rq(busiest), r.balance(busiest), split);
        Some(stat.nr_running as usize)
    }

    fn has_work(&mut self, cpu: usize) -> bool {
        self.0.reach(cpu);
        !self.0.rq(cpu).about_to_idle()
    }

    fn reweight_group(&mut self, uid: u32, share: Share) {
        let now = self.0.now();
        self.0.reach(share.cpu);
        self.0
            .rq_mut(share.cpu)
            .set_group_weight_here(uid, share.entity_weight, now);
        let held = &mut self.0.balance_mut(share.cpu).held_shares;
        held.retain(|&(u, _)| u != uid);
        held.push((uid, share));
    }
}
