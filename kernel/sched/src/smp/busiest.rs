//! 2.6.24's choice of where to pull from (`find_busiest_group` and `find_busiest_queue`,
//! kernel/sched.c), for one CPU balancing one domain.
//!
//! The groups' loads are compared per unit of power: a group's summed load × 1024 / its
//! power. The busiest group is the most loaded one that runs more tasks than its power
//! allows (or whose CPUs differ by more than a nice-0 task's weight), and it is pulled from
//! only if it exceeds the balancing CPU's group by the domain's `imbalance_pct` and the
//! balancing group is below the domain's average. The amount — the *imbalance* — is what
//! brings the busiest group down to the average without bringing this one above it, and
//! no less than one task's weight when moving one task would even the two out
//! (`small_imbalance`, whose "throughput" comparison this follows step by step).
//!
//! Only one CPU of a group balances the levels above it: its first idle CPU, or its first
//! CPU if none is idle; another CPU is told it is not the one (Linux's `*balance = 0`), but
//! not when it is about to go idle, where any CPU may pull.
//!
//! Left out: the power-savings parts (`SD_POWERSAVINGS_BALANCE`, off by default).

use super::cpu_load::CpuLoad;
use super::cpuset::CpuSet;
use super::domains::{Domain, Group, SCHED_LOAD_SCALE};

/// What the balancer reads of one CPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuStat {
    /// The weight queued on it now (`weighted_cpuload`), the running task's included.
    pub load: u64,
    /// Its runnable tasks, the running one included.
    pub nr_running: u32,
    /// Its load history.
    pub cpu_load: CpuLoad,
    /// Whether it runs its idle task (`idle_cpu`).
    pub idle: bool,
    /// 6.6: its root runqueue's utilisation (`cpu_util_cfs`, 0–1024; 0 in earlier eras).
    pub util: u64,
    /// 6.6: its root runqueue's runnable average (`cpu_runnable`; 0 in earlier eras).
    pub runnable: u64,
}

/// What a pass moves, and so what its imbalance counts (6.6's `enum migration_type`;
/// earlier eras always move load).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migration {
    /// Load: the imbalance is in the root runqueue's load units.
    Load,
    /// Utilisation: the imbalance is spare capacity to fill.
    Util,
    /// Tasks: the imbalance is a number of tasks.
    Task,
}

/// Why a CPU balances (`enum cpu_idle_type`): it picks the load history read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleType {
    /// The periodic balance of a CPU that was idle at the tick.
    Idle,
    /// The periodic balance of a busy CPU.
    NotIdle,
    /// A CPU about to go idle (`idle_balance`).
    NewlyIdle,
}

/// What [`find_busiest_group`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing to pull.
    Balanced,
    /// Another CPU of this CPU's group balances this level and the ones above.
    NotTheBalancer,
    /// Pull `imbalance` (weighted load) from group `group`. The imbalance may be 0 (moving a task would not help), which the caller
    /// counts as a failed attempt.
    Pull {
        /// The busiest group, by its index among the domain's groups.
        group: usize,
        /// What to move (load before 6.6).
        migration: Migration,
        /// How much weighted load to move.
        imbalance: u64,
    },
}

/// `sg_div_cpu_power`: `x / power` as 2.6.24 computes it, by a reciprocal — `x` cut to 32
/// bits, times ⌈2^32 / power⌉, shifted down 32 — which is exact for powers of two.
pub fn div_power(x: u64, power: u64) -> u64 {
    let reciprocal = (1u64 << 32).div_ceil(power);
    (u64::from(x as u32) * reciprocal) >> 32
}

/// One group's sums (the loop over its CPUs, the same in 2.6.24 and 2.6.36).
pub(super) struct GroupSums {
    /// The sum of its CPUs' loads (low guesses for another group, high for this CPU's).
    pub(super) load: u64,
    pub(super) nr_running: u64,
    /// The sum of its CPUs' loads now.
    pub(super) weighted: u64,
    /// How far apart its CPUs' loads are, most less least (for this CPU's group, whose
    /// loads are not compared, 0 less `u64::MAX`, which wraps to 1).
    pub(super) spread: u64,
    /// The CPU that balances for it: its first idle one, else its first.
    pub(super) balancer: Option<usize>,
}

/// 2.6.24's "imbalanced inside" (`__group_imb`): its CPUs differ by more than a nice-0
/// task.
pub(super) fn imbalanced(s: &GroupSums) -> bool {
    s.spread > SCHED_LOAD_SCALE
}

/// Which load history a pass reads (`get_sd_load_idx`).
pub(super) fn load_index(domain: &Domain, why: IdleType) -> usize {
    let p = &domain.params;
    match why {
        IdleType::NotIdle => p.busy_idx,
        IdleType::NewlyIdle => p.newidle_idx,
        IdleType::Idle => p.idle_idx,
    }
}

pub(super) fn sum_group(
    g: &Group,
    local: bool,
    stats: &[CpuStat],
    cpus: CpuSet,
    index: usize,
) -> GroupSums {
    let mut s = GroupSums {
        load: 0,
        nr_running: 0,
        weighted: 0,
        spread: 0,
        balancer: g.cpus.lowest(),
    };
    let (mut max_cpu, mut min_cpu) = (0u64, u64::MAX);
    let mut idle_seen = false;
    for i in (g.cpus & cpus).iter() {
        let st = &stats[i];
        let load = if local {
            if st.idle && !idle_seen {
                idle_seen = true;
                s.balancer = Some(i);
            }
            st.cpu_load.target(st.load, index)
        } else {
            let load = st.cpu_load.source(st.load, index);
            max_cpu = max_cpu.max(load);
            min_cpu = min_cpu.min(load);
            load
        };
        s.load += load;
        s.nr_running += u64::from(st.nr_running);
        s.weighted += st.load;
    }
    s.spread = max_cpu.wrapping_sub(min_cpu);
    s
}

/// `find_busiest_group`: for `this_cpu` balancing `domain` (`why`), over the CPUs of `cpus`
/// (those not ruled out by an earlier pass), with `stats` indexed by CPU.
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
    let mut this: Option<(usize, u64, u64, u64)> = None; // group, load, nr, weighted
    let mut busiest: Option<(usize, u64, u64, bool)> = None; // group, nr, weighted, imb
    let mut max_load = 0u64;
    for (gi, g) in domain.groups.iter().enumerate() {
        let local = g.cpus.contains(this_cpu);
        let s = sum_group(g, local, stats, cpus, index);
        if local && why != IdleType::NewlyIdle && s.balancer != Some(this_cpu) {
            return Verdict::NotTheBalancer;
        }
        total_load += s.load;
        total_power += g.power;
        let avg_load = div_power(s.load * SCHED_LOAD_SCALE, g.power);
        let capacity = g.power / SCHED_LOAD_SCALE;
        if local {
            this = Some((gi, avg_load, s.nr_running, s.weighted));
        } else if avg_load > max_load && (s.nr_running > capacity || imbalanced(&s)) {
            max_load = avg_load;
            busiest = Some((gi, s.nr_running, s.weighted, imbalanced(&s)));
        }
    }
    let (
        Some((this_g, this_load, this_nr, this_weighted)),
        Some((busy_g, busy_nr, busy_weighted, imb)),
    ) = (this, busiest)
    else {
        return Verdict::Balanced;
    };
    if this_load >= max_load || busy_nr == 0 {
        return Verdict::Balanced;
    }
    let avg_load = SCHED_LOAD_SCALE * total_load / total_power;
    if this_load >= avg_load || 100 * max_load <= p.imbalance_pct * this_load {
        return Verdict::Balanced;
    }
    let mut busy_per_task = busy_weighted / busy_nr;
    if imb {
        busy_per_task = busy_per_task.min(avg_load);
    }
    if max_load <= busy_per_task {
        return Verdict::Balanced;
    }
    let (busy_power, this_power) = (domain.groups[busy_g].power, domain.groups[this_g].power);
    let mut imbalance = 0;
    if max_load >= avg_load {
        // Don't pull the busiest below the average, nor leave it less than a task's load;
        // don't push this group above the average.
        let max_pull = (max_load - avg_load).min(max_load - busy_per_task);
        imbalance =
            (max_pull * busy_power).min((avg_load - this_load) * this_power) / SCHED_LOAD_SCALE;
        if imbalance >= busy_per_task {
            return Verdict::Pull {
                migration: Migration::Load,
                group: busy_g,
                imbalance,
            };
        }
    }
    let small = Small {
        max_load,
        this_load,
        this_nr,
        this_weighted,
        busy_per_task,
        busy_power,
        this_power,
    };
    if small.one_task_helps() {
        imbalance = busy_per_task;
    }
    Verdict::Pull {
        group: busy_g,
        migration: Migration::Load,
        imbalance,
    }
}

/// The figures of the "small imbalance" case: the imbalance is less than one of the busiest
/// group's tasks.
struct Small {
    max_load: u64,
    this_load: u64,
    this_nr: u64,
    this_weighted: u64,
    busy_per_task: u64,
    busy_power: u64,
    this_power: u64,
}

impl Small {
    /// Whether moving one task is worth it: the gap is at least one task (two when this
    /// group's tasks are as heavy), or the move raises the two groups' summed "throughput"
    /// (each group's load, capped by one task's, times its power).
    fn one_task_helps(&self) -> bool {
        let (max, this, blpt) = (self.max_load, self.this_load, self.busy_per_task);
        // This group's load per task; an empty group counts as one nice-0 task's.
        let tlpt = self
            .this_weighted
            .checked_div(self.this_nr)
            .unwrap_or(SCHED_LOAD_SCALE);
        let imbn = if self.this_nr > 0 && blpt > tlpt {
            1
        } else {
            2
        };
        // SCHED_LOAD_SCALE_FUZZ: a nice-0 task's worth of slack.
        if max - this + SCHED_LOAD_SCALE >= blpt * imbn {
            return true;
        }
        let (bp, tp) = (self.busy_power, self.this_power);
        let pwr_now = (bp * blpt.min(max) + tp * tlpt.min(this)) / SCHED_LOAD_SCALE;
        let one_busy_task = div_power(blpt * SCHED_LOAD_SCALE, bp);
        let mut pwr_move = 0;
        if max > one_busy_task {
            pwr_move += bp * blpt.min(max - one_busy_task);
        }
        let arriving = if max * bp < blpt * SCHED_LOAD_SCALE {
            div_power(max * bp, tp)
        } else {
            div_power(blpt * SCHED_LOAD_SCALE, tp)
        };
        pwr_move += tp * tlpt.min(this + arriving);
        pwr_move /= SCHED_LOAD_SCALE;
        pwr_move > pwr_now
    }
}

/// `find_busiest_queue`: the CPU of `group` (among `cpus`) with the most load now — but
/// not one whose only task weighs more than `imbalance` (moving it would overshoot), nor
/// one with no load. Of equal loads, the first.
pub fn find_busiest_queue(
    group: &Group,
    stats: &[CpuStat],
    imbalance: u64,
    cpus: CpuSet,
) -> Option<usize> {
    let mut best: Option<(usize, u64)> = None;
    for i in (group.cpus & cpus).iter() {
        let st = &stats[i];
        if st.nr_running == 1 && st.load > imbalance {
            continue;
        }
        // Above the best so far, which starts at nothing: a CPU with no load is never
        // the busiest.
        if st.load > best.map_or(0, |(_, load)| load) {
            best = Some((i, st.load));
        }
    }
    best.map(|(cpu, _)| cpu)
}

/// CPUs with `tasks[i]` nice-0 tasks each, steady (every history at the load now): the
/// tests' machines.
#[cfg(test)]
pub(crate) fn steady(tasks: &[u32]) -> alloc::vec::Vec<CpuStat> {
    tasks
        .iter()
        .map(|&n| {
            let load = u64::from(n) * SCHED_LOAD_SCALE;
            CpuStat {
                load,
                nr_running: n,
                cpu_load: CpuLoad::steady(load),
                idle: n == 0,
                ..CpuStat::default()
            }
        })
        .collect()
}

/// The CPU of the balancing CPU's group that balances this domain (`should_we_balance`):
/// the first idle CPU of its balance mask, or the mask's first CPU. Any CPU about to go
/// idle may. (6.6's and 4.1's alike: a group's balance mask is the whole group in 4.1.)
pub(super) fn should_we_balance(
    domain: &Domain,
    this_cpu: usize,
    stats: &[CpuStat],
    why: IdleType,
) -> bool {
    if why == IdleType::NewlyIdle {
        return true;
    }
    let group = domain
        .groups
        .first()
        .expect("a domain has the CPU's own group first");
    let mask = group.balance;
    let first_idle = mask.iter().find(|&c| stats[c].idle);
    first_idle.or(mask.lowest()) == Some(this_cpu)
}

pub mod v2_6_36;
pub mod v4_1;
pub mod v6_6;

#[cfg(test)]
mod tests;
