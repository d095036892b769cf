//! 6.6's choice of where to pull from and what (`update_sg_lb_stats`, `group_classify`,
//! `update_sd_pick_busiest`, `find_busiest_group`, `calculate_imbalance`,
//! `find_busiest_queue`, kernel/sched/fair.c), on symmetric CPUs.
//!
//! 6.6 no longer asks only "which group is heaviest per unit of capacity". It first sorts
//! each group into a *type*, by what it could still take:
//!
//! | type | the group … |
//! |---|---|
//! | `has_spare` | runs fewer tasks than it has CPUs, or its CPUs are not all used |
//! | `fully_busy` | runs as many tasks as CPUs, all its capacity used, none waiting for long |
//! | `smt_balance` | is a core of hyperthreads running two or more tasks, seen by an idle CPU |
//! | `imbalanced` | is marked: affinity kept its CPUs from balancing (`smp::group_imbalance`) |
//! | `overloaded` | runs more tasks than CPUs *and* its utilisation or runnable time says they wait |
//!
//! (`misfit` and `asym_packing`, for CPUs of unequal capacity, are not modelled.) "Used" has a
//! margin: utilisation over capacity × 100 / `imbalance_pct`, or runnable time over capacity ×
//! `imbalance_pct` / 100, with `imbalance_pct` 117 (110 for hyperthreads).
//!
//! The busiest group is the one of the highest type, then — by type — the most loaded
//! per unit of capacity (overloaded), or the one with the fewest idle CPUs and then the
//! most tasks (has_spare). What moves depends on the two groups' types
//! (`calculate_imbalance`'s *migration type*):
//! - both overloaded (or this one about to be): **load**, the least of the busiest group's
//!   excess over the domain's average and this group's shortfall, each × its capacity;
//! - this group has spare capacity: **tasks** — half the difference in idle CPUs, or in
//!   tasks where groups are single CPUs or prefer siblings — or, above the last-level
//!   cache from an overloaded group, **utilisation**, this group's spare capacity;
//! - the busiest group runs two tasks on one core of hyperthreads, or is imbalanced:
//!   **one task** — for an imbalanced group whatever the other tests say, since its sums
//!   hide what affinity does inside it.
//!
//! So two hogs on one CPU of an idle pair move *one task* (a count), where 2.6.36 moved
//! *a task's weight* of load; and a busy CPU never pulls from a group that is not
//! overloaded.

use super::{CpuStat, IdleType, Migration, Verdict, should_we_balance};
use crate::smp::cpuset::CpuSet;
use crate::smp::domains::{Domain, Flags, Group, SCHED_LOAD_SCALE};

/// `SCHED_CAPACITY_SCALE`: one CPU's capacity (no RT or IRQ pressure is modelled).
const CAPACITY: u64 = SCHED_LOAD_SCALE;

/// `enum group_type`, in the order 6.6 compares them (later: more in need of a pull).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GroupType {
    /// It could take more work.
    HasSpare,
    /// Its CPUs are used, with no task waiting for long.
    FullyBusy,
    /// A core of hyperthreads running two or more tasks, seen by an idle CPU.
    SmtBalance,
    /// Marked: affinity kept its CPUs from balancing among themselves.
    Imbalanced,
    /// Its tasks wait: more of them than CPUs, and the CPUs are used.
    Overloaded,
}

/// `sg_lb_stats`: one group's figures in one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupStats {
    /// Σ its CPUs' load averages.
    pub load: u64,
    /// Σ its CPUs' utilisation.
    pub util: u64,
    /// Σ its CPUs' runnable averages.
    pub runnable: u64,
    /// Its tasks, running or waiting.
    pub nr_running: u64,
    /// Its CPUs with nothing to run.
    pub idle_cpus: u64,
    /// Its CPUs.
    pub weight: u64,
    /// Σ its CPUs' capacity.
    pub capacity: u64,
    /// Load per unit of capacity — computed only when it matters (overloaded, or this
    /// group when both are busy), as in Linux.
    pub avg_load: u64,
    /// What it could take.
    pub group_type: GroupType,
    /// It is a core of hyperthreads (its child domain shares CPU capacity).
    pub smt: bool,
}

/// `group_is_overloaded`: more tasks than CPUs, and its CPUs used or its tasks waiting.
fn overloaded(pct: u64, s: &GroupStats) -> bool {
    s.nr_running > s.weight
        && (s.capacity * 100 < s.util * pct || s.capacity * pct < s.runnable * 100)
}

/// `group_has_capacity`: fewer tasks than CPUs, or neither waiting nor fully used.
fn has_capacity(pct: u64, s: &GroupStats) -> bool {
    if s.nr_running < s.weight {
        return true;
    }
    if s.capacity * pct < s.runnable * 100 {
        return false;
    }
    s.capacity * 100 > s.util * pct
}

/// `update_sg_lb_stats` and `group_classify` for group `g` of `domain`, `marked` if it is
/// marked imbalanced.
fn group_stats(
    domain: &Domain,
    g: &Group,
    marked: bool,
    local: bool,
    stats: &[CpuStat],
    cpus: CpuSet,
    why: IdleType,
) -> GroupStats {
    let pct = domain.params.imbalance_pct;
    let smt = g.cpus.len() > 1 && domain.child_shares_cpu_capacity;
    let mut s = sum_group(g, smt, stats, cpus);
    let smt_balance = !local && why != IdleType::NotIdle && s.smt && s.nr_running > 1;
    s.group_type = classify(pct, &s, marked, smt_balance);
    if s.group_type == GroupType::Overloaded {
        s.avg_load = s.load * CAPACITY / s.capacity;
    }
    s
}

/// `group_classify` (on symmetric CPUs, where no group is misfit or asymmetric).
pub(crate) fn classify(pct: u64, s: &GroupStats, marked: bool, smt_balance: bool) -> GroupType {
    if overloaded(pct, s) {
        GroupType::Overloaded
    } else if marked {
        GroupType::Imbalanced
    } else if smt_balance {
        GroupType::SmtBalance
    } else if !has_capacity(pct, s) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

/// A group's figures over `cpus` (its CPUs the pass may look at), before classification.
pub(crate) fn sum_group(g: &Group, smt: bool, stats: &[CpuStat], cpus: CpuSet) -> GroupStats {
    let mut s = GroupStats {
        load: 0,
        util: 0,
        runnable: 0,
        nr_running: 0,
        idle_cpus: 0,
        weight: g.cpus.len() as u64,
        capacity: CAPACITY * g.cpus.len() as u64,
        avg_load: 0,
        group_type: GroupType::HasSpare,
        smt,
    };
    for i in (g.cpus & cpus).iter() {
        let st = &stats[i];
        s.load += st.load;
        s.util += st.util;
        s.runnable += st.runnable;
        s.nr_running += u64::from(st.nr_running);
        if st.nr_running == 0 && st.idle {
            s.idle_cpus += 1;
        }
    }
    s
}

/// `update_sd_pick_busiest`: whether `cand` is busier than `busiest` so far.
fn busier(cand: &GroupStats, busiest: Option<&GroupStats>) -> bool {
    if cand.nr_running == 0 {
        return false;
    }
    let Some(b) = busiest else { return true };
    if cand.group_type != b.group_type {
        return cand.group_type > b.group_type;
    }
    let spare_rule = |c: &GroupStats, b: &GroupStats| {
        if c.smt != b.smt {
            // An SMT group wins over a plain one unless it runs one task or none.
            return !(c.smt && c.nr_running <= 1);
        }
        c.idle_cpus < b.idle_cpus || (c.idle_cpus == b.idle_cpus && c.nr_running > b.nr_running)
    };
    match cand.group_type {
        GroupType::Overloaded => cand.avg_load > b.avg_load,
        // Nothing tells one imbalanced group from another: the first stays.
        GroupType::Imbalanced => false,
        GroupType::SmtBalance if cand.idle_cpus > 0 || b.idle_cpus > 0 => spare_rule(cand, b),
        // avg_load is 0 for both here: the later group wins, unless the one kept is SMT.
        GroupType::SmtBalance | GroupType::FullyBusy => !b.smt,
        GroupType::HasSpare => spare_rule(cand, b),
    }
}

/// `sibling_imbalance` where both groups have the same number of cores (single CPUs, or
/// cores alike): the difference in tasks, if the balancing CPU is idle.
fn sibling_imbalance(why: IdleType, busiest: &GroupStats, local: &GroupStats) -> u64 {
    if why == IdleType::NotIdle || busiest.nr_running == 0 {
        return 0;
    }
    busiest.nr_running.saturating_sub(local.nr_running)
}

/// `adjust_numa_imbalance`: across nodes, a small imbalance (2 tasks or fewer) is left
/// while the destination runs at most `imb_numa_nr` tasks — a pair of communicating
/// tasks may share a node.
pub(crate) fn adjust_numa_imbalance(imbalance: u64, dst_running: u64, imb_numa_nr: u64) -> u64 {
    if dst_running > imb_numa_nr || imbalance > 2 {
        imbalance
    } else {
        0
    }
}

/// What a pass found in one domain: the busiest group (index, figures) and this CPU's.
struct Survey {
    local: GroupStats,
    busiest: Option<(usize, GroupStats)>,
    total_load: u64,
    total_capacity: u64,
}

/// `update_sd_lb_stats`; `marked[i]` when group i is marked imbalanced.
fn survey(
    domain: &Domain,
    this_cpu: usize,
    stats: &[CpuStat],
    why: IdleType,
    cpus: CpuSet,
    marked: &[bool],
) -> Survey {
    let mut local = None;
    let mut busiest: Option<(usize, GroupStats)> = None;
    let (mut total_load, mut total_capacity) = (0, 0);
    for (gi, g) in domain.groups.iter().enumerate() {
        let is_local = g.cpus.contains(this_cpu);
        let mark = marked.get(gi).copied().unwrap_or(false);
        let s = group_stats(domain, g, mark, is_local, stats, cpus, why);
        total_load += s.load;
        total_capacity += s.capacity;
        if is_local {
            local = Some(s);
        } else if busier(&s, busiest.as_ref().map(|(_, b)| b)) {
            busiest = Some((gi, s));
        }
    }
    Survey {
        local: local.expect("a domain holds the balancing CPU"),
        busiest,
        total_load,
        total_capacity,
    }
}

/// `find_busiest_group` of 6.6 (see the module's docs), over `cpus`; `marked[i]` when the
/// domain's group i is marked imbalanced (a shorter slice: the rest are not).
pub fn find_busiest_group(
    domain: &Domain,
    this_cpu: usize,
    stats: &[CpuStat],
    why: IdleType,
    cpus: CpuSet,
    marked: &[bool],
) -> Verdict {
    if !should_we_balance(domain, this_cpu, stats, why) {
        return Verdict::NotTheBalancer;
    }
    let mut sv = survey(domain, this_cpu, stats, why, cpus, marked);
    let Some((group, busiest)) = sv.busiest else {
        return Verdict::Balanced;
    };
    let pct = domain.params.imbalance_pct;
    let local = &mut sv.local;
    let pull = |migration, imbalance| {
        if imbalance == 0 {
            Verdict::Balanced
        } else {
            Verdict::Pull {
                group,
                migration,
                imbalance,
            }
        }
    };
    if busiest.group_type == GroupType::Imbalanced {
        // Its averages hide what affinity does inside it: one task, whatever they say.
        let (migration, imbalance) = calculate_imbalance(domain, &sv, why);
        return pull(migration, imbalance);
    }
    if local.group_type > busiest.group_type {
        return Verdict::Balanced;
    }
    if local.group_type == GroupType::Overloaded {
        let sd_avg = sv.total_load * CAPACITY / sv.total_capacity;
        if local.avg_load >= busiest.avg_load
            || local.avg_load >= sd_avg
            || 100 * busiest.avg_load <= pct * local.avg_load
        {
            return Verdict::Balanced;
        }
    }
    let prefer_sibling = domain.child_prefers_siblings;
    if prefer_sibling
        && local.group_type == GroupType::HasSpare
        && sibling_imbalance(why, &busiest, local) > 1
    {
        let (migration, imbalance) = calculate_imbalance(domain, &sv, why);
        return pull(migration, imbalance);
    }
    if busiest.group_type != GroupType::Overloaded {
        if why == IdleType::NotIdle {
            // A busy CPU pulls only from an overloaded group.
            return Verdict::Balanced;
        }
        if busiest.group_type == GroupType::SmtBalance && local.smt != busiest.smt {
            let (migration, imbalance) = calculate_imbalance(domain, &sv, why);
            return pull(migration, imbalance);
        }
        if busiest.weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1 {
            return Verdict::Balanced;
        }
        if busiest.nr_running == 1 {
            return Verdict::Balanced;
        }
    }
    let (migration, imbalance) = calculate_imbalance(domain, &sv, why);
    pull(migration, imbalance)
}

/// `calculate_imbalance`: what to move from the busiest group, and how much.
fn calculate_imbalance(domain: &Domain, sv: &Survey, why: IdleType) -> (Migration, u64) {
    let (_, busiest) = sv.busiest.expect("a busiest group");
    let local = &sv.local;
    let flags = domain.params.flags;
    if matches!(
        busiest.group_type,
        GroupType::SmtBalance | GroupType::Imbalanced
    ) {
        return (Migration::Task, 1);
    }
    if local.group_type == GroupType::HasSpare {
        if busiest.group_type > GroupType::FullyBusy && !flags.has(Flags::SHARE_PKG_RESOURCES) {
            // Above the last-level cache: fill this group's spare capacity.
            let spare = local.capacity.max(local.util) - local.util;
            if spare == 0 && why != IdleType::NotIdle {
                return (Migration::Task, 1);
            }
            return (Migration::Util, spare);
        }
        let mut imbalance = if busiest.weight == 1 || domain.child_prefers_siblings {
            sibling_imbalance(why, &busiest, local)
        } else {
            local.idle_cpus.saturating_sub(busiest.idle_cpus)
        };
        if flags.has(Flags::NUMA) {
            imbalance = adjust_numa_imbalance(imbalance, local.nr_running + 1, domain.imb_numa_nr);
        }
        return (Migration::Task, imbalance >> 1);
    }
    let local_avg = local.load * CAPACITY / local.capacity;
    if local.group_type < GroupType::Overloaded && local_avg >= busiest.avg_load {
        return (Migration::Load, 0);
    }
    let sd_avg = sv.total_load * CAPACITY / sv.total_capacity;
    if local.group_type < GroupType::Overloaded && local_avg >= sd_avg {
        return (Migration::Load, 0);
    }
    let excess = busiest.avg_load.saturating_sub(sd_avg) * busiest.capacity;
    let shortfall = sd_avg.saturating_sub(local_avg) * local.capacity;
    (Migration::Load, excess.min(shortfall) / CAPACITY)
}

/// `find_busiest_queue` of 6.6: in `domain`'s group `group`, the CPU with the most load per
/// unit of capacity (passing over one whose single task is heavier than the imbalance),
/// the most utilisation, or the most tasks, by what is to move.
pub fn find_busiest_queue(
    domain: &Domain,
    group: usize,
    stats: &[CpuStat],
    migration: Migration,
    imbalance: u64,
    cpus: CpuSet,
) -> Option<usize> {
    let mut best: Option<(usize, u64)> = None;
    for i in (domain.groups[group].cpus & cpus).iter() {
        let st = &stats[i];
        if st.nr_running == 0 {
            continue;
        }
        let measure = match migration {
            Migration::Load if st.nr_running == 1 && st.load > imbalance => continue,
            Migration::Load => st.load,
            Migration::Util if st.nr_running <= 1 => continue,
            Migration::Util => st.util.max(st.runnable).min(CAPACITY),
            Migration::Task => u64::from(st.nr_running),
        };
        if best.is_none_or(|(_, b)| measure > b) {
            best = Some((i, measure));
        }
    }
    best.map(|(cpu, _)| cpu)
}

#[cfg(test)]
mod tests;
