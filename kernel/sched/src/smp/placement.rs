//! Where 2.6.24 puts a task that starts, execs or wakes (`sched_balance_self`,
//! `find_idlest_group`, `find_idlest_cpu`, `try_to_wake_up`'s affine test and `wake_idle`,
//! kernel/sched.c).
//!
//! - **Fork and exec.** From the highest of the CPU's domains with the flag
//!   (SD_BALANCE_FORK: only NODE on x86_64; SD_BALANCE_EXEC: every level), the least loaded
//!   group the task may run in — if it is less loaded than this CPU's group by half the
//!   domain's `imbalance_pct` (112 % for 125) — and its least loaded CPU; then again from
//!   there, one level lower, down to the bottom. Loads are the domain's `forkexec_idx`
//!   guesses, leaning towards staying (this CPU's group low, the others high).
//!
//! 2.6.36 runs the same walk from `select_task_rq_fair` (SD_BALANCE_FORK at every level below NUMA
//! there, and `forkexec_idx` 0: loads now), and divides a group's load by its power exactly
//! (2.6.24's reciprocal multiply can be one off), its group power summed from the group's CPUs (the
//! domains' own). Its first walk up passes over a domain that does not balance; every level
//! balances in both eras' parameters, so that is moot. A forked child is set up on its parent's
//! queue and moved only then (`wake_up_new_task`), which is how both the kernel and the simulator
//! start a child whatever the era.
//! - **Wake-up.** A task woken from another CPU (the waker's) goes to the waker's CPU if
//!   the domain they share allows affine wake-ups and either the waker's CPU is no busier
//!   than the wakee's and the two together hold less than a task's worth, or the waker's
//!   CPU with the task added stays within half the `imbalance_pct` of the wakee's; a
//!   synchronous wake-up (the waker is about to sleep) of a cache-cold task goes there at
//!   once. Otherwise a NODE domain may still move it (SD_WAKE_BALANCE) if the waker's CPU
//!   is less loaded by that margin. Else it stays on its previous CPU.
//! - **An idle sibling.** With hyperthreads configured, a task placed on a CPU that is
//!   busy with exactly one task goes instead to the first idle CPU of that CPU's SMT, then
//!   MC, span (`wake_idle`, while the domains have SD_WAKE_IDLE).

use super::busiest::div_power;
use super::cpuset::CpuSet;
use super::domains::{Domain, Flags, Rules, SCHED_LOAD_SCALE};
pub use figures::Figures;

/// Half a domain's `imbalance_pct` above 100 (`100 + (pct − 100) / 2`).
fn half_pct(domain: &Domain) -> u64 {
    100 + (domain.params.imbalance_pct - 100) / 2
}

/// `find_idlest_group`: the index of `domain`'s least loaded group that `allowed` reaches,
/// if it is enough less loaded than `this_cpu`'s group.
pub fn find_idlest_group(
    domain: &Domain,
    this_cpu: usize,
    allowed: CpuSet,
    stats: &(impl Figures + ?Sized),
) -> Option<usize> {
    let idx = domain.params.forkexec_idx;
    let mut this_load = None;
    let mut idlest: Option<(usize, u64)> = None;
    for (gi, g) in domain.groups.iter().enumerate() {
        if (g.cpus & allowed).is_empty() {
            continue;
        }
        let local = g.cpus.contains(this_cpu);
        let sum: u64 = g
            .cpus
            .iter()
            .map(|i| {
                let st = &stats[i];
                if local {
                    st.cpu_load.source(st.load, idx)
                } else {
                    st.cpu_load.target(st.load, idx)
                }
            })
            .sum();
        let avg = match domain.rules {
            Rules::V2_6_24 => div_power(sum * SCHED_LOAD_SCALE, g.power),
            _ => sum * SCHED_LOAD_SCALE / g.power,
        };
        if local {
            this_load = Some(avg);
        } else if idlest.is_none_or(|(_, min)| avg < min) {
            idlest = Some((gi, avg));
        }
    }
    let (group, min_load) = idlest?;
    if 100 * this_load.unwrap_or(0) < half_pct(domain) * min_load {
        return None;
    }
    Some(group)
}

/// `find_idlest_cpu`: the CPU of `group` that `allowed` reaches with the least load now —
/// `this_cpu` among equals, else the first.
pub fn find_idlest_cpu(
    group: CpuSet,
    this_cpu: usize,
    allowed: CpuSet,
    stats: &(impl Figures + ?Sized),
) -> usize {
    let mut best: Option<(usize, u64)> = None;
    for i in (group & allowed).iter() {
        let load = stats[i].load;
        if best.is_none_or(|(_, min)| load < min || (load == min && i == this_cpu)) {
            best = Some((i, load));
        }
    }
    best.map_or(this_cpu, |(cpu, _)| cpu)
}

/// `sched_balance_self`: the CPU a task starting on `cpu` (fork: SD_BALANCE_FORK; exec:
/// SD_BALANCE_EXEC, `flag`) is placed on. `domains(c)` are CPU `c`'s domains, bottom up.
pub fn balance_self<'a>(
    cpu: usize,
    flag: u32,
    allowed: CpuSet,
    stats: &(impl Figures + ?Sized),
    domains: impl Fn(usize) -> &'a [Domain],
) -> usize {
    // The highest of `cpu`'s domains with the flag among those narrower than `weight`.
    let highest = |cpu: usize, weight: usize| {
        domains(cpu)
            .iter()
            .enumerate()
            .take_while(|(_, d)| d.span.len() < weight)
            .filter(|(_, d)| d.params.flags.has(flag))
            .map(|(i, _)| i)
            .last()
    };
    let mut cpu = cpu;
    let mut level = highest(cpu, usize::MAX);
    while let Some(i) = level {
        let sd = &domains(cpu)[i];
        if !sd.params.flags.has(flag) {
            level = i.checked_sub(1);
            continue;
        }
        let new = find_idlest_group(sd, cpu, allowed, stats)
            .map(|g| find_idlest_cpu(sd.groups[g].cpus, cpu, allowed, stats));
        match new {
            Some(new) if new != cpu => {
                // Again from the new CPU, strictly below the level just used.
                let weight = sd.span.len();
                cpu = new;
                level = highest(cpu, weight);
            }
            _ => level = i.checked_sub(1),
        }
    }
    cpu
}

/// What a wake-up knows (`try_to_wake_up`).
#[derive(Debug, Clone, Copy)]
pub struct Wake {
    /// The CPU the task last ran on.
    pub prev: usize,
    /// The waker's CPU.
    pub this_cpu: usize,
    /// The CPUs the task may run on.
    pub allowed: CpuSet,
    /// The task's weight.
    pub weight: u64,
    /// A synchronous wake-up: the waker is about to sleep (its weight, to leave out).
    pub sync_waker_weight: Option<u64>,
    /// The task ran less than the migration cost ago (`task_hot`).
    pub hot: bool,
}

/// `try_to_wake_up`'s choice of CPU in 2.6.24; `domains` are the waker's CPU's, `smt`
/// whether hyperthreads are configured (`wake_idle` exists only then), and
/// `domains_of(c)` any CPU's (for `wake_idle`).
pub fn select_wake_cpu<'a>(
    w: &Wake,
    stats: &(impl Figures + ?Sized),
    smt: bool,
    domains_of: impl Fn(usize) -> &'a [Domain],
) -> usize {
    let chosen = affine_or_prev(w, stats, domains_of(w.this_cpu));
    if smt {
        wake_idle(chosen, w.allowed, stats, domains_of(chosen))
    } else {
        chosen
    }
}

/// The affine and passive-balance tests: the waker's CPU, or the task's previous one.
fn affine_or_prev(w: &Wake, stats: &(impl Figures + ?Sized), this_domains: &[Domain]) -> usize {
    if w.prev == w.this_cpu || !w.allowed.contains(w.this_cpu) {
        return w.prev;
    }
    let Some(sd) = this_domains.iter().find(|d| d.span.contains(w.prev)) else {
        return w.prev;
    };
    let idx = sd.params.wake_idx;
    let pct = half_pct(sd);
    let (prev, this) = (&stats[w.prev], &stats[w.this_cpu]);
    let load = prev.cpu_load.source(prev.load, idx);
    let this_load = this.cpu_load.target(this.load, idx);
    if sd.params.flags.has(Flags::WAKE_AFFINE) {
        if w.sync_waker_weight.is_some() && !w.hot {
            return w.this_cpu;
        }
        let per_task = if this.nr_running > 0 {
            this.load / u64::from(this.nr_running)
        } else {
            SCHED_LOAD_SCALE
        };
        // The waker about to sleep takes its weight away (unsigned, as 2.6.24 wraps).
        let tl = this_load.wrapping_sub(w.sync_waker_weight.unwrap_or(0));
        let together = tl.wrapping_add(prev.cpu_load.target(prev.load, idx));
        if (tl <= load && together <= per_task)
            || 100u64.wrapping_mul(tl.wrapping_add(w.weight)) <= pct * load
        {
            return w.this_cpu;
        }
    }
    if sd.params.flags.has(Flags::WAKE_BALANCE) && pct * this_load <= 100 * load {
        return w.this_cpu;
    }
    w.prev
}

/// `wake_idle`: `cpu` if it is idle or has more than one task; else the first idle CPU the
/// task may use in `cpu`'s domains with SD_WAKE_IDLE, bottom up; else `cpu`.
pub fn wake_idle(
    cpu: usize,
    allowed: CpuSet,
    stats: &(impl Figures + ?Sized),
    domains: &[Domain],
) -> usize {
    if stats.idle(cpu) || stats[cpu].nr_running > 1 {
        return cpu;
    }
    for d in domains
        .iter()
        .take_while(|d| d.params.flags.has(Flags::WAKE_IDLE))
    {
        if let Some(idle) = (d.span & allowed).iter().find(|&i| stats.idle(i)) {
            return idle;
        }
    }
    cpu
}

mod figures;
pub mod v2_6_36;
pub mod v6_6;

#[cfg(test)]
mod tests;
