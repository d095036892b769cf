//! Where 6.6 puts a task that forks or execs (`find_idlest_cpu`, `find_idlest_group`,
//! `update_sg_wakeup_stats`, `find_idlest_group_cpu`, kernel/sched/fair.c).
//!
//! From the highest of the CPU's domains with the flag (SD_BALANCE_FORK or
//! SD_BALANCE_EXEC: every level on one node; NUMA levels beyond `RECLAIM_DISTANCE` drop
//! them), each group is sized up as if the task were already gone from its CPU (an exec
//! leaves its old CPU) and typed as the balancer types it. The idlest group is the one of
//! the lowest type; between equals, the least loaded per unit of capacity (busy groups) or
//! the one with the most idle CPUs, then the least utilisation. The task leaves this CPU's
//! group for it only if that group is of a higher type, or — same type — busier by the
//! domain's margin (busy groups), or with fewer idle CPUs (groups with spare capacity; a
//! small difference across nodes is left, as the balancer leaves it). In the group, the
//! first idle CPU, else the least loaded; then again from there, one level down.
//!
//! With `NO_LB_GROUP_TYPES`, the group is chosen as 4.1 chose it, by average load alone
//! ([`find_idlest_group_4_1`]): the Wasted Cores paper's Group Imbalance, at fork.

use super::CAPACITY;
use crate::features::Feature;
use crate::smp::busiest::CpuStat;
use crate::smp::busiest::v6_6::{
    GroupStats, GroupType, adjust_numa_imbalance, classify, sum_group,
};
use crate::smp::cpuset::CpuSet;
use crate::smp::domains::{Domain, Flags, Group};
use alloc::vec::Vec;

/// What the task takes away from its CPU's figures (an exec; a forked child is on no CPU
/// yet): its load (`task_h_load`) and utilisation.
#[derive(Debug, Clone, Copy)]
pub struct Leaving {
    /// The CPU it runs on.
    pub cpu: usize,
    /// Its load as that CPU's root sees it.
    pub load: u64,
    /// Its utilisation.
    pub util: u64,
}

/// The CPUs' figures with `leaving`'s task gone (`cpu_load_without` and its kin).
fn without(stats: &[CpuStat], leaving: Option<Leaving>) -> Vec<CpuStat> {
    let mut stats = stats.to_vec();
    if let Some(l) = leaving {
        let st = &mut stats[l.cpu];
        st.load = st.load.saturating_sub(l.load);
        st.util = st.util.saturating_sub(l.util);
        st.runnable = st.runnable.saturating_sub(l.util);
        st.nr_running = st.nr_running.saturating_sub(1);
        st.idle = st.nr_running == 0;
    }
    stats
}

/// `update_sg_wakeup_stats`: group `g`'s figures over the task's allowed CPUs, typed
/// (`marked` if it is marked imbalanced).
fn wakeup_stats(
    sd: &Domain,
    g: &Group,
    marked: bool,
    stats: &[CpuStat],
    allowed: CpuSet,
) -> GroupStats {
    let mut s = sum_group(g, false, stats, allowed);
    s.group_type = classify(sd.params.imbalance_pct, &s, marked, false);
    if matches!(s.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
        s.avg_load = s.load * CAPACITY / s.capacity;
    }
    s
}

/// `update_pick_idlest`: whether `cand` is idler than `idlest`.
fn idler(cand: &GroupStats, idlest: &GroupStats) -> bool {
    if cand.group_type != idlest.group_type {
        return cand.group_type < idlest.group_type;
    }
    match cand.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => cand.avg_load < idlest.avg_load,
        // Types the balancer's, not placement's: the first such group stays the idlest.
        GroupType::SmtBalance | GroupType::Imbalanced => false,
        GroupType::HasSpare => {
            cand.idle_cpus > idlest.idle_cpus
                || (cand.idle_cpus == idlest.idle_cpus && cand.util < idlest.util)
        }
    }
}

/// 4.1's `find_idlest_group` (with `NO_LB_GROUP_TYPES`): the group of least average load,
/// taken if this CPU's own is heavier by half the domain's margin. Like 4.1's balancer
/// it weighs loads only, so a node with one hog of a group of its own looks heavier than
/// a node of eight CPUs each running a `make` job, whose group's shares are spread thin:
/// new jobs keep off the hog's node however many of its CPUs idle (docs/wasted-cores.md).
fn find_idlest_group_4_1(
    sd: &Domain,
    this_cpu: usize,
    allowed: CpuSet,
    stats: &[CpuStat],
) -> Option<usize> {
    let avg_load = |g: &Group| {
        let load: u64 = g.cpus.iter().map(|c| stats[c].load).sum();
        load * CAPACITY / (CAPACITY * g.cpus.len() as u64)
    };
    let mut this_load = 0;
    let mut idlest: Option<(usize, u64)> = None;
    for (gi, g) in sd.groups.iter().enumerate() {
        if (g.cpus & allowed).is_empty() {
            continue;
        }
        let avg = avg_load(g);
        if g.cpus.contains(this_cpu) {
            this_load = avg;
        } else if idlest.is_none_or(|(_, min)| avg < min) {
            idlest = Some((gi, avg));
        }
    }
    let (group, min_load) = idlest?;
    let margin = 100 + (sd.params.imbalance_pct - 100) / 2;
    (100 * this_load >= margin * min_load).then_some(group)
}

/// `find_idlest_group`: the index of `sd`'s group the task should go to, if not this
/// CPU's own; `marked` says which groups are marked imbalanced.
fn find_idlest_group(
    sd: &Domain,
    this_cpu: usize,
    allowed: CpuSet,
    stats: &[CpuStat],
    marked: &impl Fn(usize, CpuSet) -> bool,
) -> Option<usize> {
    let mut local = None;
    let mut idlest: Option<(usize, GroupStats)> = None;
    for (gi, g) in sd.groups.iter().enumerate() {
        if (g.cpus & allowed).is_empty() {
            continue;
        }
        let s = wakeup_stats(sd, g, marked(sd.topology_level, g.cpus), stats, allowed);
        if g.cpus.contains(this_cpu) {
            local = Some((gi, s));
        } else if idlest.as_ref().is_none_or(|(_, i)| idler(&s, i)) {
            idlest = Some((gi, s));
        }
    }
    let (group, idlest) = idlest?;
    let Some((local_group, local)) = local else {
        return Some(group);
    };
    if local.group_type != idlest.group_type {
        return (local.group_type > idlest.group_type).then_some(group);
    }
    let pct = sd.params.imbalance_pct;
    let numa = sd.params.flags.has(Flags::NUMA);
    let stay = match local.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => {
            let imb = CAPACITY * (pct - 100) / 100;
            (numa && idlest.avg_load + imb >= local.avg_load)
                || idlest.avg_load >= local.avg_load + imb
                || 100 * local.avg_load <= pct * idlest.avg_load
        }
        // A local group of a type placement does not weigh keeps the task.
        GroupType::SmtBalance | GroupType::Imbalanced => true,
        GroupType::HasSpare => {
            let numa_stay = numa && {
                let here = (sd.groups[local_group].cpus & allowed).len() as u64;
                let imb_numa_nr = sd.imb_numa_nr.min(here);
                let imb = local.idle_cpus.abs_diff(idlest.idle_cpus);
                adjust_numa_imbalance(imb, local.nr_running + 1, imb_numa_nr) == 0
            };
            numa_stay || local.idle_cpus >= idlest.idle_cpus
        }
    };
    (!stay).then_some(group)
}

/// `find_idlest_group_cpu`: the group's first idle CPU the task may use, else its least
/// loaded (`this_cpu` if none is allowed).
fn find_idlest_group_cpu(g: &Group, allowed: CpuSet, this_cpu: usize, stats: &[CpuStat]) -> usize {
    if g.cpus.len() == 1 {
        return g.cpus.lowest().expect("a group has a CPU");
    }
    let cpus = g.cpus & allowed;
    if let Some(c) = cpus
        .iter()
        .find(|&c| stats[c].idle && stats[c].nr_running == 0)
    {
        return c;
    }
    cpus.iter()
        .min_by_key(|&c| stats[c].load)
        .unwrap_or(this_cpu)
}

/// `find_idlest_cpu`: where a task on `cpu` allowed on `allowed` goes as it forks or execs
/// (`flag`), walking down from the highest domain with the flag; `marked(level, cpus)`
/// says whether a group is marked imbalanced (`smp::group_imbalance`).
pub fn find_idlest_cpu<'a>(
    cpu: usize,
    flag: u32,
    allowed: CpuSet,
    leaving: Option<Leaving>,
    stats: &[CpuStat],
    domains_of: impl Fn(usize) -> &'a [Domain],
    marked: impl Fn(usize, CpuSet) -> bool,
) -> usize {
    let stats = without(stats, leaving);
    let domains = domains_of(cpu);
    let Some(level) = domains.iter().rposition(|d| d.params.flags.has(flag)) else {
        return cpu;
    };
    if (domains[level].span & allowed).is_empty() {
        return cpu;
    }
    let mut new_cpu = cpu;
    // The domain looked at: whose CPU's, and which level.
    let mut at = Some((cpu, level));
    while let Some((this_cpu, level)) = at {
        let sd = &domains_of(this_cpu)[level];
        let down = level.checked_sub(1).map(|l| (this_cpu, l));
        let group = sd
            .params
            .flags
            .has(flag)
            .then(|| match sd.features.has(Feature::LbGroupTypes) {
                true => find_idlest_group(sd, this_cpu, allowed, &stats, &marked),
                false => find_idlest_group_4_1(sd, this_cpu, allowed, &stats),
            })
            .flatten();
        let Some(group) = group else {
            at = down;
            continue;
        };
        new_cpu = find_idlest_group_cpu(&sd.groups[group], allowed, this_cpu, &stats);
        if new_cpu == this_cpu {
            at = down;
            continue;
        }
        // From the new CPU: its highest domain with the flag that is smaller than this one.
        let weight = sd.span.len();
        at = domains_of(new_cpu)
            .iter()
            .enumerate()
            .take_while(|(_, d)| d.span.len() < weight)
            .filter(|(_, d)| d.params.flags.has(flag))
            .last()
            .map(|(l, _)| (new_cpu, l));
    }
    new_cpu
}
