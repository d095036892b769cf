//! The runqueues as the policy crate's balancer reads and changes them (its `Runqueues`
//! trait): every CPU's runqueue, each held from the moment the pass reaches it, in CPU order
//! (`runqueue::Runqueues`), with the era's rules and shares split and the CPUs online.
//!
//! Nothing here reads the task table: a task's affinity, user and `on_cpu` flag are read off
//! its context, on the runqueue the balancer found it on. So a pass that needs nothing more
//! — a CPU's newly-idle pass, Linux's `idle_balance`, which takes runqueue locks and no
//! other — runs without the scheduler's lock ([`balance_newly_idle`]), and what takes that
//! lock for the task table alone (a signal mask, a process's group) does not wait for it,
//! nor does a holder of it until it reaches a runqueue. Like every lender it holds the
//! runqueues from CPU 0's on, in CPU order (`runqueue::Runqueues`), so it and a holder of
//! the scheduler's lock that has reached a runqueue follow one another whole: none sees the
//! other move a task under it. The passes that run under the
//! scheduler's lock (the tick's, a fork's and an exec's placement, the invariant's look)
//! read the machine through the same view.

use super::state::Balancer;
use crate::percpu::this_cpu;
use crate::sched::runqueue;
use crate::sched::state::ONLINE;
use crate::task::Slot;
use crate::time::clock;
use core::sync::atomic::Ordering;
use sched::smp::cpuset::CpuSet;
use sched::smp::domains::Rules;
use sched::smp::runqueues::{self, CpuBalance, Runqueues};
use sched::smp::shares::SharesSplit;
use sched::{Policy, Rq, Uid, Wakeup};

/// The runqueues lent to the balancer, with what it asks beside them.
pub(in crate::sched) struct Lent<'a> {
    pub(in crate::sched) rqs: &'a mut runqueue::Runqueues,
    /// The era's rules and split (`None`: no balancer, for a look that needs neither).
    pub(in crate::sched) balancer: Option<Balancer>,
    /// The CPUs online, one bit each.
    pub(in crate::sched) online_mask: u64,
}

impl Lent<'_> {
    fn balancer(&self) -> Balancer {
        self.balancer.expect("balancing on one CPU")
    }
}

impl Runqueues for Lent<'_> {
    type Policy = dyn Policy + Send;

    fn len(&self) -> usize {
        self.rqs.len()
    }

    fn rq(&self, cpu: usize) -> &Rq<dyn Policy + Send> {
        &self.rqs[cpu]
    }

    fn rq_mut(&mut self, cpu: usize) -> &mut Rq<dyn Policy + Send> {
        &mut self.rqs[cpu]
    }

    fn balance(&self, cpu: usize) -> &CpuBalance {
        let b = self.rqs[cpu].balance.as_ref();
        &b.expect("balancing on one CPU").state
    }

    fn balance_mut(&mut self, cpu: usize) -> &mut CpuBalance {
        let b = self.rqs[cpu].balance.as_mut();
        &mut b.expect("balancing on one CPU").state
    }

    fn allowed(&self, cpu: usize, task: Slot) -> CpuSet {
        CpuSet::from_bits(self.rqs[cpu].context(task).affinity & self.online_mask)
    }

    fn uid(&self, cpu: usize, task: Slot) -> Uid {
        self.rqs[cpu].context(task).uid
    }

    fn leaving(&self, cpu: usize, task: Slot) -> bool {
        let on_cpu = &self.rqs[cpu].context(task).on_cpu;
        on_cpu.load(Ordering::Acquire)
    }

    fn now(&self) -> u64 {
        clock::now()
    }

    fn split(&self) -> SharesSplit {
        self.balancer().split
    }

    fn rules(&self) -> Rules {
        self.balancer().rules
    }

    fn migrate(&mut self, task: Slot, from: usize, to: usize) {
        let now = clock::now();
        crate::sched::moving::move_task(self.rqs, task, (from, to), Wakeup::default(), now);
    }
}

/// `idle_balance`: the running CPU is about to pick with nothing runnable here; it pulls
/// from its domains first — if it still has nothing to run, its runqueue having been let go
/// of on the way here. Under the runqueues' locks alone, each taken as the pass reaches it
/// (see the module's docs); the era's rules and split are this CPU's copy of them.
pub(in crate::sched) fn balance_newly_idle() {
    let cpu = this_cpu().index();
    let mut rqs = runqueue::Runqueues::new();
    rqs.start_lending();
    let balancer = rqs[cpu].balance.as_ref().map(|b| Balancer {
        rules: b.rules,
        split: b.split,
    });
    // A CPU going offline pulls nothing: the CPUs online are read under its runqueue's
    // lock, which `hotplug`'s offlining holds before it takes the CPU out of them.
    let online_mask = ONLINE.load(Ordering::Relaxed);
    let online = online_mask & 1 << cpu != 0;
    if balancer.is_some() && online && rqs[cpu].about_to_idle() {
        let mut lent = Lent {
            rqs: &mut rqs,
            balancer,
            online_mask,
        };
        runqueues::idle_balance(&mut lent, cpu);
    }
    rqs.stop_lending();
}
