//! Load balancing on the kernel's CPUs: the policy crate's multiprocessor half
//! (`sched::smp::runqueues`, shared with the simulator) driven by the tick
//! (`scheduler_tick` → `rebalance_domains`), by a CPU about to idle (`idle_balance`), and by
//! a fork, an exec or a wake-up (`select_task_rq`), in the era the policy runs.
//!
//! The balancer reads the runqueues through one view ([`Lent`]) that needs nothing of the
//! task table. The tick's passes and a fork's or an exec's placement run under
//! `with_sched`, which holds the scheduler's lock and every runqueue it reaches, in CPU
//! order; a newly-idle pass holds the runqueues' locks alone, a CPU or two at a time: each
//! CPU's to read its load, then the busiest's and its own to pull (`balance_newly_idle`,
//! Linux's `double_lock_balance`). Each CPU's own
//! part of the balancer (`state::CpuBalancing`) lives on its runqueue, so that a wake-up
//! onto the CPU and the CPU's look before a newly-idle pass need that runqueue's lock
//! alone. A pull moves a waiting task at once; a push (active balancing) marks the busiest
//! CPU's running task to move, and that CPU's stopper moves it (`stopper`, as Linux's
//! `active_load_balance_cpu_stop`).
//!
//! **Idle CPUs and their stopped tick.** An idle AP stops its tick (under `-icount` a CPU
//! halted with no timer costs the machine no instructions). 2.6.24 keeps one idle CPU
//! ticking as the *idle load balancer*, which runs `rebalance_domains` on behalf of every
//! tickless idle CPU whose balance is due. cfslab runs those same passes from a busy CPU's
//! tick instead — the decisions are the idle CPUs' own, only the CPU that computes them
//! differs — so that no idle CPU ticks: a pass that pulls a task wakes its CPU with the
//! reschedule IPI. The lab's tasks, pinned to CPU 0, are never pulled, and the other CPUs
//! stay parked (tests/smp.rs).
//!
//! Balancing runs with a fair policy on two CPUs or more. O(1) (2.6.11) places a new task
//! on the least loaded CPU and does not balance (its own `load_balance` is not built).

use super::{Scheduler, moving, with_sched};
use crate::percpu::this_cpu;
use crate::task::Slot;
use crate::time::clock;
use alloc::vec::Vec;
use sched::smp::cpuset::CpuSet;
use sched::smp::domains::{Flags, Rules, build_after_hotplug, build_with, restrict_to};
use sched::smp::invariant::Report;
use sched::smp::runqueues::{self, CpuBalance, SyncWaker};
use sched::smp::schedstat::DomainStats;
use sched::smp::shares::SharesSplit;
use sched::{SyncWake, Wakeup};
use state::{Balancer, CpuBalancing, TickRest};

mod lent;
pub(super) mod state;
use lent::Lent;
pub(super) use lent::balance_newly_idle;
pub(super) use state::BalanceState;

/// Takes CPU 0 out of balancing for the rest of the boot, as `isolcpus=0` (or a cpuset of
/// CPU 0 alone with load balancing off) does in Linux: no domain spans it, so no task is
/// pulled to or from it, no group's shares are split between it and the others, and its
/// forks and wake-ups stay on it. The lab runs its uniprocessor experiments so: with
/// several CPUs, 2.6.27–2.6.37 would otherwise give a group asleep on CPU 0 a part of its
/// shares on each idle CPU, and the figures would be those of a machine of several CPUs.
/// (cfslab turns the balancer off altogether, where Linux would still balance the other
/// CPUs among themselves: the lab starts nothing on them.)
pub fn isolate_boot_cpu() {
    with_sched(|s| {
        s.balancing.boot_cpu_isolated = true;
        s.build_balancer();
    });
}

/// `sched_exec`: the running task is about to load a new program; if the era's exec
/// balancing picks another CPU, it moves there now (at the switch this asks for).
pub fn exec_balance() {
    super::change_then_reschedule(Scheduler::balance_exec);
}

/// What the Wasted Cores invariant's checker found since the boot (`invariant=on`).
pub fn invariant_report() -> Option<Report> {
    with_sched(|s| Some(s.balancing.invariant.as_ref()?.report(clock::now())))
}

impl Scheduler {
    /// The invariant's look at the machine, at each of the boot CPU's ticks (`invariant=on`;
    /// CPU 0 never stops its tick). The simulator tells its checker of every change; here
    /// a stretch is measured to within a tick at each end — the paper's checker looked
    /// once a second.
    pub(super) fn check_invariant(&mut self, now: u64) {
        if self.balancing.invariant.is_some() {
            let online = CpuSet::from_bits(self.online_mask);
            let snapshot = runqueues::snapshot(&self.lent(), online);
            if let Some(checker) = &mut self.balancing.invariant {
                checker.observe(now, &snapshot);
            }
        }
    }

    /// (Re)builds the balancer for the policy now in place: at boot once the APs are up,
    /// when the lab changes the policy, and when a CPU goes offline or comes back
    /// (`hotplug`); its domains are built from the machine's topology, as the era built
    /// them, with the policy's balancing switches, over the CPUs online.
    pub(super) fn build_balancer(&mut self) {
        let params = self.rqs[0].policy().fair_params();
        let features = params.map(|p| p.features);
        let era = params.map(|p| p.era);
        self.balancing.balancer = match era {
            // A CPU that did not come up would be in the domains, idle for ever: then
            // there is no balancing (its absence is reported at boot).
            Some(era)
                if self.online.len() > 1
                    && self.present_mask.count_ones() as usize == self.balancing.topology.len()
                    && !self.balancing.boot_cpu_isolated =>
            {
                let rules = Rules::of(era);
                let features = features.unwrap_or(rules.era_features());
                let jiffies = clock::now() / crate::time::tick_ns();
                let split = SharesSplit::of(era).unwrap_or(SharesSplit::Full);
                let topology = &self.balancing.topology;
                let online = CpuSet::from_bits(self.online_mask);
                let came_back = self.balancing.cpu_came_back;
                let domains_of = |cpu| {
                    let built = match came_back {
                        true => build_after_hotplug(topology, cpu, rules, features),
                        false => build_with(topology, cpu, rules, features),
                    };
                    restrict_to(topology, cpu, built, online)
                };
                for cpu in 0..self.rqs.len() {
                    let state = CpuBalance::with_domains(topology, cpu, domains_of(cpu), jiffies);
                    self.rqs[cpu].balance = Some(CpuBalancing {
                        state,
                        rules,
                        split,
                        seen: Vec::new(),
                    });
                }
                Some(Balancer { split, rules })
            }
            _ => None,
        };
        if self.balancing.balancer.is_none() {
            self.rqs.iter_mut().for_each(|rq| rq.balance = None);
        }
        self.publish_next_balances();
    }

    /// Every CPU's `next_balance` as the lock-free check at each tick reads it
    /// (`state::publish_next_balance`).
    fn publish_next_balances(&self) {
        for (cpu, rq) in self.rqs.iter().enumerate() {
            if let Some(b) = &rq.balance {
                state::publish_next_balance(cpu, b.state.next_balance);
            }
        }
    }

    /// The domains rebuilt over the CPUs online now (`hotplug`; Linux's
    /// `partition_sched_domains`), each CPU keeping its load history, its groups' shares,
    /// its idle stamp and average and when it is next due, as Linux's runqueue keeps them. With
    /// `came_back` a CPU has just come back online: from now on the domains are built as
    /// after a hotplug (`build_after_hotplug`, which may lose the NUMA levels as 4.1 did).
    pub(super) fn rebuild_domains(&mut self, came_back: bool) {
        self.balancing.cpu_came_back |= came_back;
        let old: Vec<_> = self.rqs.iter_mut().map(|rq| rq.balance.take()).collect();
        self.build_balancer();
        for (rq, old) in self.rqs.iter_mut().zip(old) {
            if let (Some(old), Some(new)) = (old, &mut rq.balance) {
                let (old, new) = (old.state, &mut new.state);
                new.cpu_load = old.cpu_load;
                new.held_shares = old.held_shares;
                new.idle_stamp = old.idle_stamp;
                new.avg_idle = old.avg_idle;
                new.next_balance = old.next_balance;
            }
        }
        self.publish_next_balances();
    }

    /// The CPUs of `cpu`'s NUMA node (none for a CPU the topology does not know).
    pub(super) fn node_cpus_of(&self, cpu: usize) -> CpuSet {
        let topology = &self.balancing.topology;
        match cpu < topology.len() {
            true => topology.node_cpus(topology.place(cpu).node),
            false => CpuSet::EMPTY,
        }
    }

    /// The balancing part of the running CPU's tick (interrupts off, under the lock): its
    /// own periodic pass when due, then the passes due for the idle CPUs whose tick has
    /// stopped (see the module's docs), and the pushes they ask for.
    /// `rest` says what is left once this CPU's own share is done (`tick`).
    pub(super) fn balance_tick(&mut self, now: u64, rest: TickRest) {
        if self.balancing.balancer.is_none() || rest == TickRest::Nothing {
            return;
        }
        let tick_ns = crate::time::tick_ns();
        let (jiffies, hz) = (now / tick_ns, 1_000_000_000 / tick_ns);
        let cpu = this_cpu().index();
        let pushes = match rest {
            TickRest::Whole => runqueues::tick(&mut self.lent(), cpu, jiffies, hz),
            _ => runqueues::tick_after_load_update(&mut self.lent(), cpu, jiffies, hz),
        };
        self.push_to(cpu, &pushes);
        self.balance_idle_cpus(cpu, jiffies, hz);
        self.publish_next_balances();
    }

    /// The periodic passes due for the idle CPUs whose tick has stopped, run from busy
    /// CPU `cpu`'s tick (see the module's docs).
    fn balance_idle_cpus(&mut self, cpu: usize, jiffies: u64, hz: u64) {
        if self.rqs[cpu].current() == self.rqs[cpu].idle() {
            return;
        }
        for i in 0..self.online.len() {
            let idle = self.online[i];
            let tickless = crate::percpu::cpu(idle).is_some_and(|c| !c.tick_on());
            if idle == cpu || !tickless || self.rqs[idle].current() != self.rqs[idle].idle() {
                continue;
            }
            if self
                .cpu_balance(idle)
                .is_some_and(|b| jiffies >= b.next_balance)
            {
                let pushes = runqueues::rebalance(&mut self.lent(), idle, jiffies, hz);
                self.push_to(idle, &pushes);
            }
        }
    }

    /// Active balancing: each CPU in `from` was asked to push its running task to `to`,
    /// which its stopper does (Linux's `active_load_balance_cpu_stop`).
    fn push_to(&mut self, to: usize, from: &[usize]) {
        for &cpu in from {
            let running = self.rqs[cpu].current();
            if !self.rqs[cpu].runs_policy_task() || self.context(running).move_to.is_some() {
                continue;
            }
            self.context_mut(running).move_to = Some(to);
            self.stop_to_migrate(running);
        }
    }

    /// The CPU a task on `cpu` allowed on `affinity` goes to as it forks or execs
    /// (`flag`: SD_BALANCE_FORK or SD_BALANCE_EXEC), by the era's `sched_balance_self`;
    /// `None` without a balancer.
    pub(super) fn balance_self(&mut self, cpu: usize, flag: u32, affinity: u64) -> Option<usize> {
        self.balancing.balancer.as_ref()?;
        let allowed = CpuSet::from_bits(affinity & self.online_mask);
        // `sched_balance_self` starts from `cpu`, which the task may no longer be allowed
        // (its move is pending): then the caller chooses among the allowed CPUs.
        let to = runqueues::balance_self(&self.lent(), cpu, flag, allowed);
        Some(to).filter(|&to| allowed.contains(to))
    }

    /// `sched_exec`'s choice: the running task is marked to move to the CPU the era's
    /// exec balancing picks, if not its own, and this CPU's stopper moves it there (Linux's
    /// `sched_exec` calls `stop_one_cpu` the same way).
    fn balance_exec(&mut self) {
        let (slot, cpu) = (self.current_slot(), this_cpu().index());
        let affinity = self.context(slot).affinity;
        if let Some(to) = self.balance_self(cpu, Flags::BALANCE_EXEC, affinity)
            && to != cpu
            && self.context(slot).move_to.is_none()
        {
            self.context_mut(slot).move_to = Some(to);
            self.stop_to_migrate(slot);
        }
    }

    /// The CPU sleeping task `slot`, last on `prev`, wakes on: the era's wake-up placement
    /// when balancing, else its own. A synchronous `wakeup` from a task (not an interrupt)
    /// tells the placement that the running task is about to give its CPU up.
    pub(super) fn wake_cpu(&mut self, slot: Slot, prev: usize, wakeup: Wakeup) -> usize {
        if self.balancing.balancer.is_none() {
            return prev;
        }
        let cpu = this_cpu().index();
        let waker = self.rqs[cpu].current();
        let sync_waker = (wakeup.sync != SyncWake::No
            && !wakeup.from_interrupt
            && waker != self.rqs[cpu].idle())
        .then(|| self.rqs[cpu].policy().task_info(waker))
        .flatten()
        .map(|info| SyncWaker {
            weight: info.weight,
            uid: self.rqs[cpu].context(waker).uid,
            exiting: wakeup.sync == SyncWake::WakerExits,
        });
        runqueues::wake_cpu(&self.lent(), slot, prev, cpu, sync_waker)
    }

    /// Moves task `slot`, waiting or woken, from `from`'s runqueue to `to`'s, attached
    /// with `wakeup` (`moving::move_task`, under the runqueues this holds).
    pub(super) fn move_between(
        &mut self,
        slot: Slot,
        from: usize,
        to: usize,
        wakeup: Wakeup,
        now: u64,
    ) {
        moving::move_task(&mut self.rqs, slot, (from, to), wakeup, now);
    }

    /// CPU `cpu`'s domains, bottom up: each one's CPUs (one bit each) and counters.
    pub(super) fn domain_schedstats(&self, cpu: usize) -> Vec<(u64, DomainStats)> {
        let Some(c) = self.cpu_balance(cpu) else {
            return Vec::new();
        };
        let spans = c.domains.iter().map(|d| d.span.bits());
        spans.zip(c.states.iter().map(|s| s.stats)).collect()
    }

    /// CPU `cpu`'s balancing state, if there is a balancer.
    pub(super) fn cpu_balance(&self, cpu: usize) -> Option<&CpuBalance> {
        Some(&self.rqs[cpu].balance.as_ref()?.state)
    }

    /// The runqueues as the balancer reads them ([`Lent`]), lent by this holder.
    fn lent(&mut self) -> Lent<'_> {
        Lent {
            balancer: self.balancing.balancer,
            online_mask: self.online_mask,
            rqs: &mut self.rqs,
            spare: core::cell::OnceCell::new(),
            seen: Vec::new(),
        }
    }
}
