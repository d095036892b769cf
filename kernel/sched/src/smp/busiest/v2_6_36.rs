//! 2.6.36's choice of where to pull from (`update_sg_lb_stats`, `update_sd_lb_stats`,
//! `find_busiest_group`, `calculate_imbalance`, `fix_small_imbalance` and
//! `find_busiest_queue`, kernel/sched_fair.c), for domains built by `build_2_6_36`.
//!
//! The shape is 2.6.24's ([`super`]); what changed on the way, each with its reason:
//! - **Power from the CPUs.** A group's power is the sum of its CPUs' (a hyperthread
//!   1178 / 2 = 589), and its *capacity* — how many tasks it runs at once — that power in
//!   units of 1024, rounded to the nearest. Below a domain whose child prefers siblings
//!   (MC and CPU), every group counts as able to run one task, so that tasks spread over
//!   packages and cores before they double up (2.6.31's `SD_PREFER_SIBLING`).
//! - **"Imbalanced inside"** needs its CPUs' loads to differ by more than *twice* the
//!   group's load per task (2.6.27, "hierarchical load vs find_busiest_group": with group
//!   shares a task's load is no longer 1024), not by one nice-0 task.
//! - **The imbalance** is bounded by the load above the busiest group's capacity, not by
//!   its load less one task; a busiest group imbalanced inside counts its load per task
//!   at most at the average.
//! - **The small imbalance** has no nice-0 slack: one task moves if the gap plus a task
//!   reaches `imbn` tasks (scaled by the busiest group's power), or if it raises the two
//!   groups' summed throughput; an empty balancing group reads its CPU's own load per
//!   task, 0 when it is idle, not a nice-0 task's.
//! - **The busiest queue** is compared per unit of its CPU's power, and a CPU running one
//!   task heavier than the imbalance is passed over only where a CPU has capacity.
//!
//! Everything is unsigned, as Linux's `unsigned long`s. Left out, as in 2.6.24's: power
//! savings, and `SD_ASYM_PACKING` (POWER7 only).

use super::{CpuStat, IdleType, Migration, Verdict, load_index, sum_group};
use crate::smp::cpuset::CpuSet;
use crate::smp::domains::{Domain, Group, Level, SCHED_LOAD_SCALE};

/// `DIV_ROUND_CLOSEST(power, SCHED_LOAD_SCALE)`, or `fix_small_capacity`'s 1 for a
/// hyperthread of four that would round to none (on a machine without RT load its power
/// is all there).
fn capacity(power: u64, level: Level) -> u64 {
    let rounded = (power + SCHED_LOAD_SCALE / 2) / SCHED_LOAD_SCALE;
    if rounded == 0 && level == Level::Smt {
        1
    } else {
        rounded
    }
}

/// `sg_lb_stats`: one group's figures in one pass.
struct GroupStats {
    /// Its loads summed (high guesses for this CPU's group, low ones for the others).
    load: u64,
    nr_running: u64,
    /// Its CPUs' loads now (`weighted_cpuload`), summed.
    weighted: u64,
    /// The load per unit of power.
    avg_load: u64,
    /// Its CPUs' loads differ by more than twice its load per task.
    imbalanced: bool,
    capacity: u64,
    /// The CPU that balances for it: its first idle CPU, or its first.
    balancer: Option<usize>,
}

/// `update_sg_lb_stats`: the loop over the group's CPUs is 2.6.24's ([`sum_group`]).
fn group_stats(
    domain: &Domain,
    g: &Group,
    local: bool,
    stats: &[CpuStat],
    cpus: CpuSet,
    index: usize,
) -> GroupStats {
    let sums = sum_group(g, local, stats, cpus, index);
    let per_task = sums.weighted.checked_div(sums.nr_running).unwrap_or(0);
    let mut capacity = capacity(g.power, domain.level);
    if domain.child_prefers_siblings {
        capacity = capacity.min(1);
    }
    GroupStats {
        load: sums.load,
        nr_running: sums.nr_running,
        weighted: sums.weighted,
        avg_load: sums.load * SCHED_LOAD_SCALE / g.power,
        imbalanced: sums.spread > 2 * per_task,
        capacity,
        balancer: sums.balancer,
    }
}

/// `find_busiest_group` of 2.6.36 (see the module's docs).
pub fn find_busiest_group(
    domain: &Domain,
    this_cpu: usize,
    stats: &[CpuStat],
    why: IdleType,
    cpus: CpuSet,
) -> Verdict {
    let p = &domain.params;
    let index = load_index(domain, why);
    let (mut total_load, mut total_power) = (0u64, 0u64);
    let mut this: Option<(usize, GroupStats)> = None;
    let mut busiest: Option<(usize, GroupStats)> = None;
    for (gi, g) in domain.groups.iter().enumerate() {
        let local = g.cpus.contains(this_cpu);
        let s = group_stats(domain, g, local, stats, cpus, index);
        if local && why != IdleType::NewlyIdle && s.balancer != Some(this_cpu) {
            return Verdict::NotTheBalancer;
        }
        total_load += s.load;
        total_power += g.power;
        let max_load = busiest.as_ref().map_or(0, |(_, b)| b.avg_load);
        if local {
            this = Some((gi, s));
        } else if s.avg_load > max_load && (s.nr_running > s.capacity || s.imbalanced) {
            busiest = Some((gi, s));
        }
    }
    let (Some((this_g, this)), Some((busy_g, busy))) = (this, busiest) else {
        return Verdict::Balanced;
    };
    if busy.nr_running == 0 || this.avg_load >= busy.avg_load {
        return Verdict::Balanced;
    }
    let avg_load = SCHED_LOAD_SCALE * total_load / total_power;
    if this.avg_load >= avg_load || 100 * busy.avg_load <= p.imbalance_pct * this.avg_load {
        return Verdict::Balanced;
    }
    let groups = Pair {
        busy_power: domain.groups[busy_g].power,
        this_power: domain.groups[this_g].power,
        this_cpu_per_task: {
            let st = &stats[this_cpu];
            st.load.checked_div(u64::from(st.nr_running)).unwrap_or(0)
        },
        avg_load,
    };
    Verdict::Pull {
        group: busy_g,
        migration: Migration::Load,
        imbalance: groups.imbalance(&busy, &this),
    }
}

/// What `calculate_imbalance` reads besides the two groups' figures.
struct Pair {
    busy_power: u64,
    this_power: u64,
    /// `cpu_avg_load_per_task(this_cpu)`.
    this_cpu_per_task: u64,
    /// The domain's load per unit of power.
    avg_load: u64,
}

impl Pair {
    /// `calculate_imbalance`: how much load to pull from `busy` to `this`.
    fn imbalance(&self, busy: &GroupStats, this: &GroupStats) -> u64 {
        let (max_load, avg_load) = (busy.avg_load, self.avg_load);
        let mut per_task = busy.weighted / busy.nr_running;
        if busy.imbalanced {
            per_task = per_task.min(avg_load);
        }
        if max_load < avg_load {
            return self.small(busy, this, per_task, 0);
        }
        let above_capacity = if busy.imbalanced {
            u64::MAX
        } else {
            (busy.nr_running - busy.capacity) * SCHED_LOAD_SCALE * SCHED_LOAD_SCALE
                / self.busy_power
        };
        let max_pull = (max_load - avg_load).min(above_capacity);
        let imbalance = max_pull
            .saturating_mul(self.busy_power)
            .min((avg_load - this.avg_load) * self.this_power)
            / SCHED_LOAD_SCALE;
        if imbalance < per_task {
            self.small(busy, this, per_task, imbalance)
        } else {
            imbalance
        }
    }

    /// `fix_small_imbalance`: one task's load (`per_task`) if moving one task closes
    /// the gap or raises the two groups' summed throughput, else `imbalance` unchanged.
    fn small(&self, busy: &GroupStats, this: &GroupStats, per_task: u64, imbalance: u64) -> u64 {
        let (bp, tp) = (self.busy_power, self.this_power);
        let (max, this_load) = (busy.avg_load, this.avg_load);
        // A busier task there than here needs only one task's gap (`imbn` 1), else two.
        let (this_per_task, imbn) = match this.weighted.checked_div(this.nr_running) {
            Some(t) => (t, if per_task > t { 1 } else { 2 }),
            None => (self.this_cpu_per_task, 2),
        };
        let scaled = per_task * SCHED_LOAD_SCALE / bp;
        if max - this_load + scaled >= scaled * imbn {
            return per_task;
        }
        let pwr_now =
            (bp * per_task.min(max) + tp * this_per_task.min(this_load)) / SCHED_LOAD_SCALE;
        let one_task = per_task * SCHED_LOAD_SCALE / bp;
        let mut pwr_move = 0;
        if max > one_task {
            pwr_move += bp * per_task.min(max - one_task);
        }
        let arriving = if max * bp < per_task * SCHED_LOAD_SCALE {
            max * bp / tp
        } else {
            per_task * SCHED_LOAD_SCALE / tp
        };
        pwr_move += tp * this_per_task.min(this_load + arriving);
        pwr_move /= SCHED_LOAD_SCALE;
        if pwr_move > pwr_now {
            per_task
        } else {
            imbalance
        }
    }
}

/// `find_busiest_queue` of 2.6.36: the CPU of `domain`'s group `group` with the most load
/// per unit of its power, passing over one that runs a single task heavier than the
/// imbalance (where a CPU has capacity).
pub fn find_busiest_queue(
    domain: &Domain,
    group: usize,
    stats: &[CpuStat],
    imbalance: u64,
    cpus: CpuSet,
) -> Option<usize> {
    let power = domain.cpu_power;
    let capacity = capacity(power, domain.level);
    let mut best: Option<(usize, u64)> = None;
    for i in (domain.groups[group].cpus & cpus).iter() {
        let st = &stats[i];
        if capacity > 0 && st.nr_running == 1 && st.load > imbalance {
            continue;
        }
        let load = st.load * SCHED_LOAD_SCALE / power;
        if load > best.map_or(0, |(_, l)| l) {
            best = Some((i, load));
        }
    }
    best.map(|(cpu, _)| cpu)
}

#[cfg(test)]
mod tests;
