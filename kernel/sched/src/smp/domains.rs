//! Scheduling domains and groups (Linux's `struct sched_domain` and `struct sched_group`),
//! built from a [`Topology`] as 2.6.24 built them on x86_64 (`build_sched_domains`,
//! `cpu_attach_domain`).
//!
//! Each CPU balances over a stack of domains, bottom up, each wider than the one below:
//! - **SMT**: the hyperthreads of its core, each a group;
//! - **MC**: the cores sharing its last-level cache (its package), each core a group;
//! - **CPU** (Linux's "phys" level): the CPUs of its NUMA node, each package a group;
//! - **NODE** (NUMA only): its node and up to 15 nearest others (`SD_NODES_PER_DOMAIN`),
//!   each node a group (listed from its own node on, by number);
//! - **ALLNODES**: every CPU, each node a group — built only when the machine has more than
//!   16 nodes' worth of CPUs.
//!
//! 6.6 replaces NODE and ALLNODES by a NUMA level per distance between nodes, with
//! overlapping groups ([`numa`]), and gives every level `sd_init`'s parameters
//! ([`params_6_6`]).
//!
//! A level that adds nothing is dropped (`sd_degenerate`, `sd_parent_degenerate`): one
//! that spans one CPU, or its child's span with no flag the child lacks. On QEMU's plain
//! `-smp 2` only MC is left: both CPUs, each a group.
//!
//! A group's *power* says how many tasks it can run at once, in units of 1024
//! (`SCHED_LOAD_SCALE`). 2.6.24 gives every group of SMT, MC and CPU a power of 1024 — a
//! whole package, or a whole core, counts as room for one task, so that tasks spread over
//! packages and cores before they double up — unless power-savings balancing is on, which
//! cfslab does not model. A node's group has 1024 per package in it
//! (`init_numa_sched_groups_power`).

use super::cpuset::CpuSet;
use super::topology::Topology;
use crate::features::{Feature, Features};
use alloc::vec::Vec;

/// `SCHED_LOAD_SCALE`: the power of one CPU, and the weight of a nice-0 task.
pub const SCHED_LOAD_SCALE: u64 = 1024;

/// A domain level, bottom up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The hyperthreads of a core.
    Smt,
    /// The cores of a package (sharing its last-level cache).
    Mc,
    /// The packages of a NUMA node (Linux's "phys" domain).
    Cpu,
    /// A node and its nearest nodes.
    Node,
    /// Every node.
    AllNodes,
    /// 6.6: the nodes within one of the machine's distances of this CPU's node — a level
    /// per distinct distance, nearest first (`sched_init_numa`).
    Numa,
}

/// A domain's flags (`SD_*`, 2.6.24's values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flags(pub u32);

impl Flags {
    /// Balance periodically and when idle within this domain.
    pub const LOAD_BALANCE: u32 = 1;
    /// Balance when the CPU is about to go idle.
    pub const BALANCE_NEWIDLE: u32 = 2;
    /// Choose the least loaded CPU at exec.
    pub const BALANCE_EXEC: u32 = 4;
    /// Choose the least loaded CPU at fork.
    pub const BALANCE_FORK: u32 = 8;
    /// At a wake-up, prefer an idle CPU of this span.
    pub const WAKE_IDLE: u32 = 16;
    /// At a wake-up, consider the waking CPU.
    pub const WAKE_AFFINE: u32 = 32;
    /// At a wake-up, balance passively.
    pub const WAKE_BALANCE: u32 = 64;
    /// The members share execution units (hyperthreads).
    pub const SHARE_CPUPOWER: u32 = 128;
    /// Power-savings balancing (never set: cfslab does not model it).
    pub const POWERSAVINGS_BALANCE: u32 = 256;
    /// The members share a package's resources (its cache).
    pub const SHARE_PKG_RESOURCES: u32 = 512;
    /// One CPU of the machine at a time balances such a domain.
    pub const SERIALIZE: u32 = 1024;
    /// Spread tasks over this domain's child groups first: a child group counts as able
    /// to run one task (2.6.31–, MC and CPU; `SD_PREFER_SIBLING`, whose value here is
    /// cfslab's own).
    pub const PREFER_SIBLING: u32 = 4096;
    /// A level that spans NUMA nodes (6.6's `SD_NUMA`; the value here is cfslab's own).
    pub const NUMA: u32 = 8192;

    /// Whether any of `flags` is set.
    pub fn has(self, flags: u32) -> bool {
        self.0 & flags != 0
    }
}

/// A domain's fixed parameters (`SD_*_INIT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// The balancing interval's floor and ceiling, in milliseconds.
    pub min_interval_ms: u64,
    /// See `min_interval_ms`.
    pub max_interval_ms: u64,
    /// A busy CPU balances this many times less often.
    pub busy_factor: u64,
    /// The busiest group must exceed this one by this percentage to be pulled from.
    pub imbalance_pct: u64,
    /// Failed attempts before a cache-hot task may be moved.
    pub cache_nice_tries: u64,
    /// Which `cpu_load[]` history each kind of balancing reads (0: the load now).
    pub busy_idx: usize,
    /// See `busy_idx`.
    pub idle_idx: usize,
    /// See `busy_idx`.
    pub newidle_idx: usize,
    /// See `busy_idx`.
    pub wake_idx: usize,
    /// See `busy_idx`.
    pub forkexec_idx: usize,
    /// The interval a domain starts with, in milliseconds.
    pub balance_interval_ms: u64,
    /// `SD_*`.
    pub flags: Flags,
}

/// A group of a domain: some of its CPUs, and their power.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Its CPUs.
    pub cpus: CpuSet,
    /// How many tasks it can run at once, in units of [`SCHED_LOAD_SCALE`].
    pub power: u64,
    /// The CPUs that balance on its behalf (its *balance mask*): all of it, except in 6.6's
    /// NUMA levels, whose groups overlap — there, the CPUs whose own domain at the level
    /// has exactly this group below it (`build_balance_mask`).
    pub balance: CpuSet,
}

/// One level of one CPU's domains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Domain {
    /// Which level.
    pub level: Level,
    /// Its place among the levels built for the machine, bottom up, before degenerate ones
    /// are dropped (Linux's `sched_domain_topology_level`): the same for every CPU's domain
    /// of that level, and what a group's shared state is kept by — two NUMA levels are both
    /// [`Level::Numa`], but each has its own.
    pub topology_level: usize,
    /// The CPUs it spans.
    pub span: CpuSet,
    /// Its groups, the CPU's own first, then around the span (Linux's circular list).
    pub groups: Vec<Group>,
    /// Its parameters.
    pub params: Params,
    /// Which era's rules balance it.
    pub rules: Rules,
    /// The balancing switches in force when it was built (`Feature::is_balancing`).
    pub features: Features,
    /// The power of each of its CPUs (`cpu_power`; 2.6.36: less than 1024 for a
    /// hyperthread, which shares its core).
    pub cpu_power: u64,
    /// The domain below it has `SD_PREFER_SIBLING` (2.6.36 then counts each of this
    /// domain's groups as able to run one task).
    pub child_prefers_siblings: bool,
    /// The domain below it is a core's hyperthreads (its groups are SMT cores: 6.6's
    /// `SD_SHARE_CPUCAPACITY` in a group's flags).
    pub child_shares_cpu_capacity: bool,
    /// 6.6: how many tasks a NUMA level lets a node run before a small imbalance towards
    /// it counts (`imb_numa_nr`; 0 at and below the last-level cache).
    pub imb_numa_nr: u64,
}

/// The era whose balancer rules a domain follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rules {
    /// 2.6.24's (`build_2_6_24`): a group's power counts whole packages or cores.
    V2_6_24,
    /// 2.6.36's (`build_2_6_36`): `sd_lb_stats`, group power summed from its CPUs.
    V2_6_36,
    /// 6.6's: `sd_init`'s parameters, capacity 1024 a CPU, groups classified by type
    /// (`busiest::v6_6`) over PELT loads, and a NUMA level per distance ([`numa`]).
    V6_6,
}

impl Rules {
    /// The rules `era` balances by: 2.6.24's for 2.6.24 and 2.6.25, 2.6.36's for the CFS
    /// eras after — checked against 2.6.36's source only (2.6.32 and 2.6.35 differ in
    /// details) — and 6.6's for 6.6.
    pub fn of(era: crate::params::Era) -> Rules {
        use crate::params::Era;
        match era {
            Era::V2_6_24 | Era::V2_6_25 => Rules::V2_6_24,
            Era::V2_6_32 | Era::V2_6_35 | Era::V2_6_36 => Rules::V2_6_36,
            Era::V6_6 => Rules::V6_6,
        }
    }

    /// The balancing switches the era shipped with (none before 6.6's balancer).
    pub fn era_features(self) -> Features {
        match self {
            Rules::V6_6 => crate::params::FairParams::preset(crate::params::Era::V6_6).features,
            Rules::V2_6_24 | Rules::V2_6_36 => Features::default(),
        }
    }
}

/// `smt_gain`: a core of two hyperthreads is worth 1178/1024 of one CPU (2.6.31–).
pub const SMT_GAIN: u64 = 1178;

/// `SD_NODES_PER_DOMAIN`: how many nodes a NODE domain spans at most.
const NODES_PER_DOMAIN: usize = 16;

/// The nodes of `node`'s NODE domain: itself, then the nearest others, up to
/// [`NODES_PER_DOMAIN`] (`sched_domain_node_span`; of equal distances, the first after
/// `node` in numbering order, wrapping, as `find_next_best_node` scans).
fn node_span_nodes(t: &Topology, node: usize) -> Vec<usize> {
    let mut chosen = alloc::vec![node];
    while chosen.len() < NODES_PER_DOMAIN.min(t.nodes()) {
        let best = (1..t.nodes())
            .map(|i| (node + i) % t.nodes())
            .filter(|n| !chosen.contains(n))
            .min_by_key(|&n| t.distance(node, n));
        match best {
            Some(n) => chosen.push(n),
            None => break,
        }
    }
    chosen
}

/// The groups of a domain over `span`, each of `group_of(cpu)` for its CPUs, `cpu`'s first
/// and then around the span by lowest CPU, wrapping.
fn groups_around(cpu: usize, span: CpuSet, group_of: impl Fn(usize) -> CpuSet) -> Vec<CpuSet> {
    let mut groups: Vec<CpuSet> = Vec::new();
    for c in span.iter() {
        let g = group_of(c) & span;
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    let own = groups.iter().position(|g| g.contains(cpu)).unwrap_or(0);
    groups.rotate_left(own);
    groups
}

/// `cpu`'s domains on `t`, bottom up, as 2.6.24 attaches them (degenerate levels dropped).
pub fn build_2_6_24(t: &Topology, cpu: usize) -> Vec<Domain> {
    build(t, cpu, Rules::V2_6_24)
}

/// `cpu`'s domains on `t`, bottom up, as 2.6.36 builds them: the same levels, spans and
/// groups as 2.6.24 (degenerate levels dropped), with 2.6.36's parameters and a group's
/// power the sum of its CPUs' (`init_sched_groups_power`).
pub fn build_2_6_36(t: &Topology, cpu: usize) -> Vec<Domain> {
    build(t, cpu, Rules::V2_6_36)
}

/// `cpu`'s domains on `t` under `rules`, with the era's own balancing switches.
pub fn build(t: &Topology, cpu: usize, rules: Rules) -> Vec<Domain> {
    build_with(t, cpu, rules, rules.era_features())
}

/// `cpu`'s domains on `t` under `rules`, with the balancing switches of `features` (the
/// Wasted Cores lab's: NUMA groups from this CPU or from the lowest, and the rules its
/// balancer follows).
pub fn build_with(t: &Topology, cpu: usize, rules: Rules, features: Features) -> Vec<Domain> {
    let node = t.place(cpu).node;
    let numa = t.nodes() > 1;
    let package_groups = |span: CpuSet| groups_around(cpu, span, |c| t.package_cpus(c));
    let mut built: Vec<(Level, CpuSet, Vec<CpuSet>)> = Vec::new();
    let siblings = t.smt_siblings(cpu);
    if siblings.len() > 1 {
        built.push((
            Level::Smt,
            siblings,
            groups_around(cpu, siblings, CpuSet::one),
        ));
    }
    let package = t.package_cpus(cpu);
    let smt = t.smt_siblings(0).len() > 1;
    let core_group = |c: usize| {
        if smt {
            t.smt_siblings(c)
        } else {
            CpuSet::one(c)
        }
    };
    built.push((Level::Mc, package, groups_around(cpu, package, core_group)));
    let node_cpus = t.node_cpus(node);
    built.push((Level::Cpu, node_cpus, package_groups(node_cpus)));
    // Each level's groups, with their balance masks where these are not the whole group.
    let mut balance: Vec<Option<Vec<CpuSet>>> = alloc::vec![None; built.len()];
    if numa && rules == Rules::V6_6 {
        let from_self = features.has(Feature::NumaGroupsFromSelf);
        for (span, groups, masks) in numa::levels(t, cpu, from_self) {
            built.push((Level::Numa, span, groups));
            balance.push(Some(masks));
        }
    } else if numa {
        let nodes = node_span_nodes(t, node);
        let span = nodes
            .iter()
            .fold(CpuSet::EMPTY, |acc, &n| acc | t.node_cpus(n));
        // The span takes the nearest nodes; its groups are listed from this node on by
        // number, wrapping (`build_sched_domains`' node groups).
        let groups = (0..t.nodes())
            .map(|i| (node + i) % t.nodes())
            .filter(|n| nodes.contains(n))
            .map(|n| t.node_cpus(n))
            .collect();
        built.push((Level::Node, span, groups));
        balance.push(None);
        if t.len() > NODES_PER_DOMAIN * node_cpus.len() {
            let mut groups: Vec<CpuSet> = (0..t.nodes()).map(|n| t.node_cpus(n)).collect();
            groups.rotate_left(node);
            built.push((Level::AllNodes, t.all(), groups));
            balance.push(None);
        }
    }
    let threads = t.smt_siblings(0).len() as u64;
    let cpu_power = match rules {
        Rules::V2_6_24 => SCHED_LOAD_SCALE,
        // `update_cpu_power` on a machine without RT load: a thread's share of the gain.
        Rules::V2_6_36 if threads > 1 => SMT_GAIN / threads,
        Rules::V2_6_36 | Rules::V6_6 => SCHED_LOAD_SCALE,
    };
    let mut domains: Vec<Domain> = Vec::new();
    for (topology_level, ((level, span, groups), masks)) in
        built.into_iter().zip(balance).enumerate()
    {
        let params = match rules {
            Rules::V2_6_24 => params_2_6_24(level, t.len()),
            Rules::V2_6_36 => params_2_6_36(level, t.len()),
            Rules::V6_6 => params_6_6(level, span.len() as u64, numa::max_distance(t, node, span)),
        };
        let masks = masks.unwrap_or_else(|| groups.clone());
        let groups = groups
            .into_iter()
            .zip(masks)
            .map(|(cpus, balance)| Group {
                cpus,
                power: match rules {
                    Rules::V2_6_24 => group_power(t, level, cpus),
                    Rules::V2_6_36 | Rules::V6_6 => cpu_power * cpus.len() as u64,
                },
                balance,
            })
            .collect();
        domains.push(Domain {
            level,
            topology_level,
            span,
            groups,
            params,
            rules,
            features,
            cpu_power,
            child_prefers_siblings: false,
            child_shares_cpu_capacity: false,
            imb_numa_nr: 0,
        });
    }
    if rules == Rules::V6_6 {
        // Computed over every level, before the degenerate ones are dropped, as Linux does.
        numa::set_imb_numa_nr(&mut domains);
    }
    let mut domains = attach(domains);
    tell_children(&mut domains);
    domains
}

/// Each domain of a CPU's stack (bottom up, pruned) learns what the one below it is.
fn tell_children(domains: &mut [Domain]) {
    for i in 0..domains.len() {
        let below = match i {
            0 => Flags::default(),
            _ => domains[i - 1].params.flags,
        };
        domains[i].child_prefers_siblings = below.has(Flags::PREFER_SIBLING);
        domains[i].child_shares_cpu_capacity = below.has(Flags::SHARE_CPUPOWER);
    }
}

/// A group's power in 2.6.24 without power savings (see the module's docs).
fn group_power(t: &Topology, level: Level, cpus: CpuSet) -> u64 {
    match level {
        Level::Smt | Level::Mc | Level::Cpu => SCHED_LOAD_SCALE,
        // One package's worth per package with a CPU in it.
        Level::Node | Level::AllNodes | Level::Numa => {
            let mut packages: Vec<usize> = cpus.iter().map(|c| t.place(c).package).collect();
            packages.dedup();
            SCHED_LOAD_SCALE * packages.len() as u64
        }
    }
}

mod attach;
mod hotplug;
pub mod numa;
use attach::attach;
pub use hotplug::{build_after_hotplug, restrict_to};
mod params;
pub use params::{params_2_6_24, params_2_6_36, params_6_6};

#[cfg(test)]
mod tests;
