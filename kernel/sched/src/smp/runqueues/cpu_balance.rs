//! What one CPU keeps for balancing ([`CpuBalance`], Linux's balancing fields of `struct rq`
//! with the CPU's `sched_domain`s): its load history, its domains and their states, when it
//! is next due, its groups' shares, its idle spells, and the groups it marks imbalanced.

use crate::features::Features;
use crate::policy::{Nanos, Uid};
use crate::smp::avg_idle;
use crate::smp::balancer::DomainState;
use crate::smp::cpu_load::CpuLoad;
use crate::smp::domains::{Domain, Rules, build_with};
use crate::smp::group_imbalance::ImbalancedGroups;
use crate::smp::shares::Share;
use crate::smp::topology::Topology;
use alloc::sync::Arc;
use alloc::vec::Vec;

/// What one CPU keeps for balancing: its load history, its domains bottom up with each
/// one's state, when it is next due, and the shares its groups hold here.
#[derive(Debug, Clone)]
pub struct CpuBalance {
    /// `rq->cpu_load[]`.
    pub cpu_load: CpuLoad,
    /// Its scheduling domains, bottom up: shared, for they change only when they are
    /// rebuilt whole, and a wake-up reads those of the CPUs it looks at ([`CpuFigures`](super::CpuFigures)).
    pub domains: Arc<[Domain]>,
    /// Each domain's interval, last balance and failures.
    pub states: Vec<DomainState>,
    /// `rq->next_balance`, in jiffies.
    pub next_balance: u64,
    /// Each group's part of its shares held here, as the last split gave it
    /// (`cfs_rq->shares` and `rq_weight`, 2.6.27–2.6.37).
    pub held_shares: Vec<(Uid, Share)>,
    /// The machine has hyperthreads (2.6.24's `wake_idle` exists only then).
    pub smt: bool,
    /// When it last went idle with nothing to pull (`rq->idle_stamp`; `None` after a pass
    /// that pulled, after a wake-up onto it, or before it first idles).
    pub idle_stamp: Option<Nanos>,
    /// Its idle spells' running average (`rq->avg_idle`, [`avg_idle`]).
    pub avg_idle: Nanos,
    /// The groups whose lowest CPU it is that are marked imbalanced
    /// ([`group_imbalance`](crate::smp::group_imbalance)).
    pub imbalanced_groups: ImbalancedGroups,
}

impl CpuBalance {
    /// CPU `cpu` of `topology`, its domains built by `rules` with the balancing switches of
    /// `features` at tick `jiffies` (each first due one interval later, as Linux's built
    /// domains start from `jiffies`).
    pub fn new(
        topology: &Topology,
        cpu: usize,
        rules: Rules,
        features: Features,
        jiffies: u64,
    ) -> CpuBalance {
        let domains = build_with(topology, cpu, rules, features);
        CpuBalance::with_domains(topology, cpu, domains, jiffies)
    }

    /// CPU `cpu` of `topology` balancing over `domains` (built, or rebuilt after a hotplug)
    /// from tick `jiffies`.
    pub fn with_domains(
        topology: &Topology,
        cpu: usize,
        domains: Vec<Domain>,
        jiffies: u64,
    ) -> CpuBalance {
        let states = domains
            .iter()
            .map(|d| DomainState::new(d, jiffies))
            .collect();
        CpuBalance {
            cpu_load: CpuLoad::default(),
            domains: domains.into(),
            states,
            next_balance: jiffies,
            held_shares: Vec::new(),
            smt: topology.smt_siblings(cpu).len() > 1,
            idle_stamp: None,
            avg_idle: avg_idle::AVG_IDLE_MAX_NS,
            imbalanced_groups: ImbalancedGroups::default(),
        }
    }

    /// A CPU's state with no domains (one the balancer left out): nothing to balance.
    pub fn without_domains() -> CpuBalance {
        CpuBalance {
            cpu_load: CpuLoad::default(),
            domains: Arc::from(Vec::new()),
            states: Vec::new(),
            next_balance: 0,
            held_shares: Vec::new(),
            smt: false,
            idle_stamp: None,
            avg_idle: avg_idle::AVG_IDLE_MAX_NS,
            imbalanced_groups: ImbalancedGroups::default(),
        }
    }

    /// The balancing switches its domains were built with (none without domains).
    pub fn switches(&self) -> Features {
        self.domains.first().map(|d| d.features).unwrap_or_default()
    }

    /// What the last split gave uid `uid`'s group here.
    pub fn last_share(&self, uid: Uid) -> Option<Share> {
        let mut held = self.held_shares.iter();
        held.find(|&&(u, _)| u == uid).map(|&(_, s)| s)
    }

    /// The part of uid `uid`'s shares held here (none until a split gives it some).
    pub fn held(&self, uid: Uid) -> u64 {
        self.last_share(uid).map_or(0, |s| s.shares)
    }

    /// A task was woken onto this CPU (`try_to_wake_up`; `ttwu_do_wakeup` from 3.0): if it
    /// was idle, its idle spell ends and goes into its average ([`avg_idle`]) by `rules`'
    /// era. The clock is read only then: most wake-ups find their CPU busy.
    pub fn woken(&mut self, rules: Rules, now: impl FnOnce() -> Nanos) {
        if let Some(stamp) = self.idle_stamp.take() {
            let spell = now().saturating_sub(stamp);
            self.avg_idle = avg_idle::update(rules, self.avg_idle, spell);
        }
    }

    /// Whether this CPU, about to idle at `now`, skips its newly-idle pass, its idle spells
    /// too short to be worth one in `rules`' era ([`avg_idle::skips_newidle`]); if it does,
    /// its idle spell starts now. It reads nothing but this CPU's state, as Linux's
    /// `idle_balance` looks at `avg_idle` before it lets go of its runqueue's lock.
    pub fn skips_newly_idle(&mut self, rules: Rules, now: Nanos) -> bool {
        let skips = avg_idle::skips_newidle(rules, self.switches(), self.avg_idle);
        if skips {
            self.idle_stamp = Some(now);
        }
        skips
    }
}
