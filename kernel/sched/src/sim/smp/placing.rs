//! Where the SMP simulator puts a task that forks, execs or wakes: 2.6.24's placement
//! ([`crate::smp::placement`]) on the simulated machine.

use super::SmpSim;
use super::view::View;
use crate::policy::{ForkKind, Policy, TaskId, Uid, Wakeup};
use crate::rq::State;
use crate::sim::{Behavior, SimTask, VFORK_RELEASE, Waiting, vfork_waiter};
use crate::smp::balancer::Machine;
use crate::smp::cpuset::CpuSet;
use crate::smp::domains::Flags;
use crate::smp::domains::Rules;
use crate::smp::placement::v2_6_36::{self, GroupHere, effective_load};
use crate::smp::placement::{Wake, balance_self, select_wake_cpu};
use alloc::boxed::Box;

impl<P: Policy> SmpSim<P> {
    /// `parent`, running on `cpu`, forks a child of `behavior`: placed by 2.6.24's
    /// `sched_balance_self` at fork (only NUMA's NODE level balances at fork), set up by
    /// the parent's CPU and queued on its own.
    pub(super) fn fork(
        &mut self,
        cpu: usize,
        parent: TaskId,
        behavior: Box<dyn Behavior>,
        kind: ForkKind,
    ) {
        let child = self.tasks.len();
        let (uid, allowed) = (self.tasks[parent].uid, self.allowed[parent]);
        self.tasks.push(SimTask::new(behavior, uid, Some(parent)));
        self.allowed.push(allowed);
        let to = self.balance_self(cpu, Flags::BALANCE_FORK, allowed);
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
        let to = self.balance_self(cpu, Flags::BALANCE_EXEC, self.allowed[task]);
        if to != cpu && self.cpus[cpu].push_to.is_none() {
            self.cpus[cpu].push_to = Some(to);
            self.cpus[cpu].rq.leave_to_move();
        }
    }

    fn balance_self(&mut self, cpu: usize, flag: u32, allowed: CpuSet) -> usize {
        let stats = View { sim: self }.stats();
        balance_self(cpu, flag, allowed, &stats, |c| &self.cpus[c].domains)
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
        sync_waker: Option<(u64, Uid)>,
    ) {
        let prev = self.cpu_of[task];
        if self.cpus[prev].rq.state(task) != State::Sleeping {
            return;
        }
        let info = self.cpus[prev].rq.policy().task_info(task);
        let wake = Wake {
            prev,
            this_cpu: waker_cpu,
            allowed: self.allowed[task],
            weight: info.map_or(crate::weights::NICE_0_LOAD, |i| i.weight),
            sync_waker_weight: sync_waker.map(|(weight, _)| weight),
            hot: info.is_some_and(|i| {
                self.now.saturating_sub(i.exec_start) < crate::smp::move_tasks::MIGRATION_COST_NS
            }),
        };
        let stats = View { sim: self }.stats();
        let domains_of = |c: usize| self.cpus[c].domains.as_slice();
        let cpu = match self.rules {
            Rules::V2_6_24 => select_wake_cpu(&wake, &stats, self.smt, domains_of),
            Rules::V2_6_36 => {
                // What the waker and the task would change at the root of the waker's CPU.
                let effect = |uid: Uid, w: i64| {
                    effective_load(self.group_here(waker_cpu, uid).as_ref(), w, w)
                };
                let weight = wake.weight as i64;
                let w = v2_6_36::Wake {
                    prev,
                    this_cpu: waker_cpu,
                    allowed: wake.allowed,
                    sync_waker_effect: sync_waker.map(|(ww, uid)| effect(uid, -(ww as i64))),
                    task_effect: effect(self.tasks[task].uid, weight),
                };
                v2_6_36::select_wake_cpu(&w, &stats, domains_of)
            }
        };
        if cpu == prev {
            self.cpus[cpu].rq.wake(task, wakeup, self.now);
        } else {
            let moving = self.cpus[prev].rq.detach(task, self.now);
            self.cpus[cpu].rq.attach(task, moving, wakeup, self.now);
            self.cpu_of[task] = cpu;
        }
        self.tasks[task].waiting = None;
    }

    /// Uid `uid`'s group on `cpu` as `effective_load` reads it; `None` without split
    /// shares or groups (the task's weight counts whole).
    fn group_here(&self, cpu: usize, uid: Uid) -> Option<GroupHere> {
        if self.split.load_is_tasks() {
            return None;
        }
        let policy = self.cpus[cpu].rq.policy();
        let queues = policy.balance_queues();
        if queues.iter().all(|q| q.uid.is_none()) {
            return None;
        }
        let weight = queues
            .iter()
            .find(|q| q.uid == Some(uid))
            .map_or(0, |q| q.load);
        let last = self.last_share(cpu, uid);
        Some(GroupHere {
            tg_shares: policy.fair_params()?.shares_of(uid),
            shares: last.map_or(0, |s| s.shares),
            rq_weight: last.map_or(0, |s| s.rq_weight),
            weight,
        })
    }
}
