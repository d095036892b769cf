//! 4.1's choice of the group to pull from (`update_sg_lb_stats`, `group_classify`,
//! `update_sd_pick_busiest`, `find_busiest_group`, `calculate_imbalance`,
//! `fix_small_imbalance`, kernel/sched/fair.c of 4.1), run inside 6.6's balancer when
//! `NO_LB_GROUP_TYPES` is set — and the Wasted Cores paper's fix to it (`LB_MIN_LOAD`).
//!
//! 4.1 weighs groups by their **average load**: the sum of their CPUs' loads per unit of
//! capacity. A CPU's load is its root runqueue's load average, where a task in a group
//! (per-uid here, an autogroup in the paper) weighs its group's shares divided among the
//! group's busy tasks: one thread of a 64-job `make` weighs about 16, a lone hog in a group
//! of its own 1024. So one hog makes its node look busy on average however many of its
//! cores idle, and a node whose every core has a `make` job waiting looks light. An idle
//! core beside the hog then finds its own group no lighter than the busiest and pulls
//! nothing: the paper's Group Imbalance bug (§3.1, Figure 2).
//!
//! Groups are sorted as *overloaded* (more tasks than CPUs, and their utilisation over capacity by
//! `imbalance_pct`), *imbalanced* (marked: affinity kept its CPUs from balancing among themselves,
//! [`group_imbalance`](crate::smp::group_imbalance)) or other, and the busiest is the heaviest on
//! average of the highest sort. An imbalanced busiest group is pulled from whatever the averages
//! say, its load per task capped at the domain's average load. Otherwise, in order, a pass is
//! balanced when: no group is busier; this group's average is at least the busiest's; at least the
//! domain's; and, for an idle CPU, the busiest is not overloaded and has no more than one idle CPU
//! fewer than this group; for a busy one, the busiest's average is within `imbalance_pct` of this
//! group's. A CPU about to go idle skips those tests when its group has room and the busiest is
//! overloaded.
//!
//! The paper's fix compares each group's *least* loaded CPU instead: if this group has a
//! CPU lighter than every CPU of another, that CPU should take work from it. The pull is
//! half the gap between the busiest group's most loaded CPU and this group's least. (The
//! patch as released keeps the last group it looks at as the busiest; cfslab takes the one
//! whose least loaded CPU is heaviest, as the paper's argument asks.)
//!
//! What is 6.6's here, not 4.1's: loads are read now (4.1's `cpu_load[]` index 0; its busy
//! and idle passes above the cache read the slower averages of indices 1–3, which move
//! towards the same figures); the domains' parameters are 6.6's `sd_init`'s
//! (`imbalance_pct` 117 at every level above hyperthreads, where 4.1 had 125 at the node
//! and NUMA levels; `busy_factor` 16, not 32); and the tasks are detached by 6.6's rule,
//! under which a task heavier than the imbalance waits for failures where 4.1 let one of
//! up to twice the imbalance go. How a pass ends — its interval, its failures, the mark
//! above — is 4.1's (`balancer/outcome.rs`).

use super::{CpuStat, IdleType, Migration, Verdict, should_we_balance};
use crate::features::Feature;
use crate::smp::cpuset::CpuSet;
use crate::smp::domains::{Domain, Group, SCHED_LOAD_SCALE};

/// `SCHED_CAPACITY_SCALE`: one CPU's capacity.
const CAPACITY: u64 = SCHED_LOAD_SCALE;

/// 4.1's `sg_lb_stats`, with the paper's `min_load` and `max_load`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupStats {
    /// Σ its CPUs' loads.
    pub load: u64,
    /// Σ its CPUs' utilisation, each at most one CPU's capacity (`get_cpu_usage`).
    pub usage: u64,
    /// Its tasks, running or waiting.
    pub nr_running: u64,
    /// Its CPUs with nothing to run.
    pub idle_cpus: u64,
    /// Its CPUs.
    pub weight: u64,
    /// Σ its CPUs' capacity.
    pub capacity: u64,
    /// Load per unit of capacity.
    pub avg_load: u64,
    /// Load per task (`load_per_task`).
    pub load_per_task: u64,
    /// Its least loaded CPU's load (the paper's fix).
    pub min_load: u64,
    /// Its most loaded CPU's load (the paper's fix).
    pub max_load: u64,
    /// `group_no_capacity`: more tasks than CPUs, and its CPUs used.
    pub overloaded: bool,
    /// Marked imbalanced ([`group_imbalance`](crate::smp::group_imbalance)).
    pub imbalanced: bool,
}

impl GroupStats {
    /// `group_has_capacity`: fewer tasks than CPUs, or its CPUs not all used.
    fn has_capacity(&self, pct: u64) -> bool {
        self.nr_running < self.weight || self.capacity * 100 > self.usage * pct
    }

    /// `group_classify`.
    fn group_type(&self) -> GroupType {
        match (self.overloaded, self.imbalanced) {
            (true, _) => GroupType::Overloaded,
            (false, true) => GroupType::Imbalanced,
            (false, false) => GroupType::Other,
        }
    }
}

/// 4.1's `enum group_type`, in the order it compares them (later: more in need of a pull).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum GroupType {
    /// Neither of the others.
    Other,
    /// Marked: affinity kept its CPUs from balancing among themselves.
    Imbalanced,
    /// More tasks than CPUs, and its CPUs used.
    Overloaded,
}

/// `update_sg_lb_stats` for group `g` of a domain with `imbalance_pct` `pct`, `marked` if
/// it is marked imbalanced.
fn group_stats(g: &Group, marked: bool, pct: u64, stats: &[CpuStat], cpus: CpuSet) -> GroupStats {
    let mut s = GroupStats {
        load: 0,
        usage: 0,
        nr_running: 0,
        idle_cpus: 0,
        weight: g.cpus.len() as u64,
        capacity: CAPACITY * g.cpus.len() as u64,
        avg_load: 0,
        load_per_task: 0,
        min_load: u64::MAX,
        max_load: 0,
        overloaded: false,
        imbalanced: marked,
    };
    for i in (g.cpus & cpus).iter() {
        let st = &stats[i];
        s.load += st.load;
        s.usage += st.util.min(CAPACITY);
        s.nr_running += u64::from(st.nr_running);
        s.min_load = s.min_load.min(st.load);
        s.max_load = s.max_load.max(st.load);
        if st.nr_running == 0 && st.idle {
            s.idle_cpus += 1;
        }
    }
    s.avg_load = s.load * CAPACITY / s.capacity;
    s.load_per_task = s.load.checked_div(s.nr_running).unwrap_or(0);
    s.overloaded = s.nr_running > s.weight && s.capacity * 100 < s.usage * pct;
    s
}

/// What a pass found: the busiest group (index, figures), this CPU's, and the domain's
/// average load.
struct Survey {
    local: GroupStats,
    busiest: Option<(usize, GroupStats)>,
    sd_avg: u64,
}

/// `update_sd_lb_stats` and `update_sd_pick_busiest`, `marked[i]` if group i is marked
/// imbalanced. Every group holding the balancing CPU counts as its own (with 4.1's NUMA
/// groups, several may).
fn survey(
    domain: &Domain,
    this_cpu: usize,
    stats: &[CpuStat],
    cpus: CpuSet,
    marked: &[bool],
) -> Survey {
    let pct = domain.params.imbalance_pct;
    let min_load = domain.features.has(Feature::LbMinLoad);
    let mut local: Option<GroupStats> = None;
    let mut busiest: Option<(usize, GroupStats)> = None;
    let (mut total_load, mut total_capacity) = (0, 0);
    for (gi, g) in domain.groups.iter().enumerate() {
        let mark = marked.get(gi).copied().unwrap_or(false);
        let mut s = group_stats(g, mark, pct, stats, cpus);
        total_load += s.load;
        total_capacity += s.capacity;
        if g.cpus.contains(this_cpu) {
            local = Some(s);
            continue;
        }
        // SD_PREFER_SIBLING below: a group running two or more tasks beside a local group
        // with room counts as overloaded.
        let room = local.is_some_and(|l| l.has_capacity(pct));
        if domain.child_prefers_siblings && room && s.nr_running > 1 {
            s.overloaded = true;
        }
        // `update_sd_pick_busiest` against a busiest that starts as "other, load 0": a
        // group of no load is never the busiest, nor (the paper's fix) one with an idle
        // CPU; a group whose CPUs are all out of this pass is not looked at.
        let (b_type, b_avg, b_min) = busiest.map_or((GroupType::Other, 0, 0), |(_, b)| {
            (b.group_type(), b.avg_load, b.min_load)
        });
        let busier = match () {
            _ if (g.cpus & cpus).is_empty() => false,
            _ if min_load => s.min_load > b_min,
            _ if s.group_type() != b_type => s.group_type() > b_type,
            _ => s.avg_load > b_avg,
        };
        if busier {
            busiest = Some((gi, s));
        }
    }
    Survey {
        local: local.expect("a domain holds the balancing CPU"),
        busiest,
        sd_avg: total_load * CAPACITY / total_capacity.max(1),
    }
}

/// `find_busiest_group` of 4.1, or with `LB_MIN_LOAD` the paper's (see the module's docs),
/// over `cpus`; `marked[i]` if the domain's group i is marked imbalanced.
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
    let sv = survey(domain, this_cpu, stats, cpus, marked);
    let Some((group, busiest)) = sv.busiest else {
        return Verdict::Balanced;
    };
    if busiest.nr_running == 0 {
        return Verdict::Balanced;
    }
    let local = &sv.local;
    let imbalance = if domain.features.has(Feature::LbMinLoad) {
        // Pull only towards a CPU lighter than every CPU of the busiest group.
        if local.min_load >= busiest.min_load {
            return Verdict::Balanced;
        }
        busiest.max_load.saturating_sub(local.min_load) / 2
    } else {
        let pct = domain.params.imbalance_pct;
        let force = busiest.group_type() == GroupType::Imbalanced
            || (why == IdleType::NewlyIdle && local.has_capacity(pct) && busiest.overloaded);
        if !force && balanced_on_average(&sv, &busiest, why, pct) {
            return Verdict::Balanced;
        }
        calculate_imbalance(&sv, &busiest)
    };
    Verdict::Pull {
        group,
        migration: Migration::Load,
        imbalance,
    }
}

/// `find_busiest_group`'s tests on average loads, in 4.1's order: is the domain balanced?
fn balanced_on_average(sv: &Survey, busiest: &GroupStats, why: IdleType, pct: u64) -> bool {
    let local = &sv.local;
    if local.avg_load >= busiest.avg_load || local.avg_load >= sv.sd_avg {
        return true;
    }
    if why == IdleType::Idle {
        !busiest.overloaded && local.idle_cpus <= busiest.idle_cpus + 1
    } else {
        100 * busiest.avg_load <= pct * local.avg_load
    }
}

/// `calculate_imbalance` of 4.1: the least of the busiest group's excess over the domain's
/// average (above its capacity, if both groups are overloaded) and this group's shortfall,
/// each × its capacity — or, below one task's load, [`fix_small_imbalance`].
fn calculate_imbalance(sv: &Survey, busiest: &GroupStats) -> u64 {
    let local = &sv.local;
    let mut capped = *busiest;
    if busiest.group_type() == GroupType::Imbalanced {
        // Imbalanced: the group's own average may mislead; no more than the domain's.
        capped.load_per_task = busiest.load_per_task.min(sv.sd_avg);
    }
    let busiest = &capped;
    if busiest.avg_load <= sv.sd_avg || local.avg_load >= sv.sd_avg {
        return fix_small_imbalance(local, busiest).unwrap_or(0);
    }
    let mut above_capacity = u64::MAX;
    if busiest.overloaded && local.overloaded {
        let tasks = busiest.nr_running * CAPACITY;
        if tasks > busiest.capacity {
            above_capacity = tasks - busiest.capacity;
        }
    }
    let max_pull = (busiest.avg_load - sv.sd_avg).min(above_capacity);
    let imbalance =
        (max_pull * busiest.capacity).min((sv.sd_avg - local.avg_load) * local.capacity) / CAPACITY;
    if imbalance < busiest.load_per_task {
        // Less than one task: one task's load if that helps, else the small imbalance
        // stands (lighter tasks may still make it up).
        return fix_small_imbalance(local, busiest).unwrap_or(imbalance);
    }
    imbalance
}

/// `fix_small_imbalance` of 4.1: one task's load, if moving it narrows the gap enough or
/// lets the two groups use more capacity together; else `None` (the caller's imbalance
/// stands).
fn fix_small_imbalance(local: &GroupStats, busiest: &GroupStats) -> Option<u64> {
    // An empty local group keeps a load per task of 0 (4.1 reads the balancing CPU's own,
    // `cpu_avg_load_per_task`, which is 0 on an empty CPU); a busiest group of heavier
    // tasks than this one's lets one move on a smaller gap.
    let (b, l) = (busiest, local);
    let imbn = if l.nr_running > 0 && b.load_per_task > l.load_per_task {
        1
    } else {
        2
    };
    let scaled = b.load_per_task * CAPACITY / b.capacity;
    if b.avg_load + scaled >= l.avg_load + scaled * imbn {
        return Some(b.load_per_task);
    }
    let capa_now = (b.capacity * b.load_per_task.min(b.avg_load)
        + l.capacity * l.load_per_task.min(l.avg_load))
        / CAPACITY;
    let mut capa_move = 0;
    if b.avg_load > scaled {
        capa_move += b.capacity * b.load_per_task.min(b.avg_load - scaled);
    }
    let gained = if b.avg_load * b.capacity < b.load_per_task * CAPACITY {
        b.avg_load * b.capacity / l.capacity
    } else {
        b.load_per_task * CAPACITY / l.capacity
    };
    capa_move += l.capacity * l.load_per_task.min(l.avg_load + gained);
    (capa_move / CAPACITY > capa_now).then_some(b.load_per_task)
}

#[cfg(test)]
mod tests;
