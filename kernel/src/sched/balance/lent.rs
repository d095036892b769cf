//! The runqueues as the policy crate's balancer reads and changes them (its `Runqueues`
//! trait), with the era's rules and shares split and the CPUs online, from one of two
//! lenders ([`Lender`]): the holder of the scheduler's lock, which holds each runqueue from
//! the moment it reaches it to its end, in CPU order (`runqueue::Runqueues`: the tick's
//! passes, a fork's and an exec's placement, the invariant's look); or a newly-idle pass,
//! which holds only the runqueues it works on at the moment (`runqueue::Focused`: the
//! busiest CPU's and its own while it pulls, one CPU's while it reads its figures).
//!
//! Nothing here reads the task table: a task's affinity, user and `on_cpu` flag are read off
//! its context, on the runqueue the balancer found it on. So a newly-idle pass — Linux's
//! `idle_balance`, which takes runqueue locks and no other — runs without the scheduler's
//! lock ([`balance_newly_idle`]), and holds no runqueue but the one it reads or the two it
//! pulls between.

use super::state::{Balancer, CpuBalancing, Seen};
use crate::percpu::this_cpu;
use crate::sched::moving::HeldRunqueues;
use crate::sched::runqueue::{self, Focused, Runqueue};
use crate::sched::state::ONLINE;
use crate::task::Slot;
use crate::time::clock;
use alloc::vec::Vec;
use core::cell::OnceCell;
use core::ops::IndexMut;
use core::sync::atomic::Ordering;
use sched::smp::busiest::CpuStat;
use sched::smp::cpuset::CpuSet;
use sched::smp::domains::Rules;
use sched::smp::runqueues::{self, CpuBalance, Runqueues};
use sched::smp::shares::SharesSplit;
use sched::{Policy, Rq, Uid, Wakeup};

/// Who lends the runqueues to the balancer (see the module's docs).
pub(in crate::sched) trait Lender:
    IndexMut<usize, Output = Runqueue> + HeldRunqueues
{
    /// How many CPUs have a runqueue.
    fn len(&self) -> usize;
    /// Holds `cpus`' runqueues (one bit each), as `Runqueues::focus` asks; returns whether
    /// it took a lock, after which what was read before may have changed.
    fn focus(&mut self, cpus: u64) -> bool;
    /// Whether CPU `cpu`'s runqueue is held (or would be taken as it is reached).
    fn holds(&self, cpu: usize) -> bool;
    /// Holds CPU `cpu`'s runqueue alone if its lock is free now; returns whether it does.
    fn try_reach(&mut self, cpu: usize) -> bool;
}

impl Lender for runqueue::Runqueues {
    fn len(&self) -> usize {
        runqueue::Runqueues::len(self)
    }

    /// Every runqueue reached is held to the end: nothing to take or let go of.
    fn focus(&mut self, _cpus: u64) -> bool {
        false
    }

    fn holds(&self, _cpu: usize) -> bool {
        true
    }

    fn try_reach(&mut self, _cpu: usize) -> bool {
        true
    }
}

impl Lender for Focused {
    fn len(&self) -> usize {
        Focused::len(self)
    }

    fn focus(&mut self, cpus: u64) -> bool {
        Focused::focus(self, cpus)
    }

    fn holds(&self, cpu: usize) -> bool {
        Focused::holds(self, cpu)
    }

    fn try_reach(&mut self, cpu: usize) -> bool {
        self.try_focus_one(cpu)
    }
}

/// The runqueues lent to the balancer, with what it asks beside them.
pub(in crate::sched) struct Lent<'a, L: Lender = runqueue::Runqueues> {
    pub(in crate::sched) rqs: &'a mut L,
    /// The era's rules and split (`None`: no balancer, for a look that needs neither).
    pub(in crate::sched) balancer: Option<Balancer>,
    /// The CPUs online, one bit each (read again each time a newly-idle pass takes its own
    /// CPU's runqueue with another's to pull: see [`Runqueues::focus`]).
    pub(in crate::sched) online_mask: u64,
    /// The balancing state read for a CPU whose balancer is gone: one rebuilt without it
    /// while a newly-idle pass had let go of its runqueue (the pass's changes to it are
    /// lost with it). Made only then.
    pub(in crate::sched) spare: OnceCell<CpuBalance>,
    /// The figures a newly-idle pass last read of each CPU, by CPU, and when: what it goes
    /// by for a CPU whose runqueue is locked as it looks (see [`Runqueues::stat`]). Kept on
    /// the pass's CPU between passes (`CpuBalancing::seen`); empty for the other lender.
    pub(in crate::sched) seen: Vec<Option<Seen>>,
}

impl<L: Lender> Lent<'_, L> {
    fn balancer(&self) -> Balancer {
        self.balancer.expect("balancing on one CPU")
    }
}

impl<L: Lender> Runqueues for Lent<'_, L> {
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
        match self.rqs[cpu].balance.as_ref() {
            Some(b) => &b.state,
            None => self.spare.get_or_init(CpuBalance::without_domains),
        }
    }

    fn balance_mut(&mut self, cpu: usize) -> &mut CpuBalance {
        match self.rqs[cpu].balance.as_mut() {
            Some(b) => &mut b.state,
            None => {
                self.spare.get_or_init(CpuBalance::without_domains);
                self.spare.get_mut().expect("made above")
            }
        }
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

    /// A newly-idle pass that takes its own CPU's runqueue again reads the CPUs online again
    /// under it: `hotplug`'s offlining holds the dying CPU's runqueue as it takes the CPU
    /// out of them, so a pass either pulls before that or sees it gone, and then no task
    /// is allowed here (no move can leave a task on an offline CPU).
    fn focus(&mut self, cpus: CpuSet) {
        let took = self.rqs.focus(cpus.bits());
        if took && cpus.contains(this_cpu().index()) {
            self.online_mask = ONLINE.load(Ordering::Relaxed);
        }
    }

    fn reach(&mut self, cpu: usize) {
        if !self.rqs.holds(cpu) {
            self.focus(CpuSet::one(cpu));
        }
    }

    /// Linux reads another CPU's figures without its lock, as they are at that moment;
    /// cfslab cannot read a runqueue it does not hold. So a newly-idle pass reads one
    /// whose lock is free, and for one whose lock is taken goes by the figures it read of
    /// it within the last tick, if it did, rather than wait: under QEMU, a wait for a lock
    /// lasts until its holder's CPU has had its turn, every other CPU's turn at worst
    /// (docs/performance.md). (A tick: the load history a pass compares is a tick's; older
    /// figures could hide a CPU that has since filled up, and leave this one idle beside
    /// its waiting tasks.) Its own CPU it read as the pass began.
    fn stat(&mut self, cpu: usize) -> CpuStat {
        let now = clock::now();
        let recent = self.seen.get(cpu).copied().flatten();
        let recent = recent.filter(|s| now.saturating_sub(s.at) < crate::time::tick_ns());
        if let Some(recent) = recent
            && !self.rqs.holds(cpu)
            && !self.rqs.try_reach(cpu)
        {
            return recent.stat;
        }
        self.reach(cpu);
        let stat = runqueues::cpu_stat(&self.rqs[cpu], self.balance(cpu), self.split());
        if let Some(seen) = self.seen.get_mut(cpu) {
            *seen = Some(Seen { stat, at: now });
        }
        stat
    }
}

/// `idle_balance`: the running CPU is about to pick with nothing runnable here; it pulls
/// from its domains first — if it still has nothing to run, its runqueue having been let go
/// of on the way here. Under the runqueues' locks alone, a CPU or two at a time (see the
/// module's docs); the era's rules and split are this CPU's copy of them.
pub(in crate::sched) fn balance_newly_idle() {
    let cpu = this_cpu().index();
    let mut rqs = Focused::new();
    rqs.focus(1 << cpu);
    let mut seen = match rqs[cpu].balance.as_mut() {
        Some(b) => core::mem::take(&mut b.seen),
        None => Vec::new(),
    };
    seen.resize(rqs.len(), None);
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
            spare: OnceCell::new(),
            seen,
        };
        // This CPU's own figures, read while its runqueue is held.
        lent.stat(cpu);
        runqueues::idle_balance(&mut lent, cpu);
        seen = lent.seen;
    }
    if !rqs.holds(cpu) {
        rqs.focus(1 << cpu);
    }
    // Kept for the next pass, unless the balancer was rebuilt for another era meanwhile
    // (figures in other units).
    let same =
        |b: &CpuBalancing| balancer.is_some_and(|a| a.rules == b.rules && a.split == b.split);
    if let Some(b) = rqs[cpu].balance.as_mut().filter(|b| same(b)) {
        b.seen = seen;
    }
}
