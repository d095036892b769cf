//! Where 6.6 puts a task that wakes, forks or execs (`select_task_rq_fair`, `wake_affine`,
//! `select_idle_sibling`, `select_idle_cpu`, `find_idlest_cpu`, `find_idlest_group`,
//! kernel/sched/fair.c), on symmetric CPUs.
//!
//! - **A wake-up** takes the fast path (no x86 domain balances at wake-up). In the lowest
//!   domain of the waker's CPU that allows affine wake-ups and holds the task's previous
//!   CPU, `wake_affine` chooses between the two: an idle waker's CPU sharing the cache
//!   with the previous one (the previous if that is idle too), the waker's CPU if the
//!   waker is about to sleep and runs alone, an idle previous CPU; failing those, the
//!   waker's CPU if its load with the task is below the previous CPU's without it, the
//!   latter raised by half the domain's margin. Then `select_idle_sibling` looks around
//!   the choice, in its last-level cache: the choice if idle, the previous CPU if idle and
//!   sharing it, a whole idle core (with hyperthreads), an idle thread of the previous
//!   CPU's core, or the first idle CPU after the choice — scanning fewer CPUs the busier
//!   the cache is (SIS_UTIL: none past about 85 % of it used).
//! - **A fork or an exec** takes the slow path from the highest domain with the flag: the
//!   idlest group (by type, then idle CPUs or load per capacity, the task's own part taken
//!   away), its idlest CPU, and again one level down from there.
//!
//! Not modelled: `wake_wide` (a waker of many wakees; every wake-up may be affine here),
//! `recent_used_cpu`, a stale `has_idle_cores` hint (the hint is read off the CPUs now),
//! SIS_UTIL's figure from the last balancing pass (computed from the utilisation now), and
//! an idle CPU's exit latency and idle time stamp (the first idle CPU wins).

use crate::smp::cpuset::CpuSet;
use crate::smp::domains::{Domain, Flags, SCHED_LOAD_SCALE};
use crate::smp::placement::Figures;

/// One CPU's capacity.
const CAPACITY: u64 = SCHED_LOAD_SCALE;

/// What a wake-up knows.
#[derive(Debug, Clone, Copy)]
pub struct Wake {
    /// The CPU the task last ran on.
    pub prev: usize,
    /// The waker's CPU.
    pub this_cpu: usize,
    /// The CPUs the task may run on.
    pub allowed: CpuSet,
    /// The task's load as its previous CPU's root sees it (`task_h_load`).
    pub task_load: u64,
    /// A synchronous wake-up (the waker is about to sleep): the waker's `task_h_load`.
    pub sync_waker_load: Option<u64>,
}

/// `available_idle_cpu`: running its idle task, nothing queued.
fn idle(stats: &(impl Figures + ?Sized), cpu: usize) -> bool {
    // The flag first: a CPU found busy is not read further.
    stats.idle(cpu) && stats[cpu].nr_running == 0
}

/// `sd_llc`: `cpu`'s last-level-cache domain's span (the highest with
/// SD_SHARE_PKG_RESOURCES), or the CPU alone.
fn llc(domains: &[Domain], cpu: usize) -> CpuSet {
    domains
        .iter()
        .rev()
        .find(|d| d.params.flags.has(Flags::SHARE_PKG_RESOURCES))
        .map_or(CpuSet::one(cpu), |d| d.span)
}

/// `cpu`'s hyperthread siblings (its SMT domain's span), or the CPU alone.
fn siblings(domains: &[Domain], cpu: usize) -> CpuSet {
    domains
        .iter()
        .find(|d| d.params.flags.has(Flags::SHARE_CPUPOWER))
        .map_or(CpuSet::one(cpu), |d| d.span)
}

/// `wake_affine_idle` (WA_IDLE).
fn affine_idle(w: &Wake, stats: &(impl Figures + ?Sized), share_cache: bool) -> Option<usize> {
    if idle(stats, w.this_cpu) && share_cache {
        return Some(if idle(stats, w.prev) {
            w.prev
        } else {
            w.this_cpu
        });
    }
    if w.sync_waker_load.is_some() && stats[w.this_cpu].nr_running == 1 {
        return Some(w.this_cpu);
    }
    idle(stats, w.prev).then_some(w.prev)
}

/// `wake_affine_weight` (WA_WEIGHT, WA_BIAS): the waker's CPU with the task against the
/// previous CPU without it, the latter raised by half the domain's margin.
fn affine_weight(sd: &Domain, w: &Wake, stats: &(impl Figures + ?Sized)) -> Option<usize> {
    let mut this_eff = stats[w.this_cpu].load as i64;
    if let Some(waker) = w.sync_waker_load {
        let waker = waker as i64;
        if waker > this_eff {
            return Some(w.this_cpu);
        }
        this_eff -= waker;
    }
    let task = w.task_load as i64;
    let this_eff = (this_eff + task) * 100 * CAPACITY as i64;
    let half_pct = 100 + (sd.params.imbalance_pct as i64 - 100) / 2;
    let mut prev_eff = (stats[w.prev].load as i64 - task) * half_pct * CAPACITY as i64;
    if w.sync_waker_load.is_some() {
        prev_eff += 1;
    }
    (this_eff < prev_eff).then_some(w.this_cpu)
}

/// `wake_affine`: the waker's CPU, or the previous one.
fn wake_affine(sd: &Domain, w: &Wake, stats: &(impl Figures + ?Sized), share_cache: bool) -> usize {
    let target = affine_idle(w, stats, share_cache).or_else(|| affine_weight(sd, w, stats));
    if target == Some(w.this_cpu) {
        w.this_cpu
    } else {
        w.prev
    }
}

/// `nr_idle_scan` (SIS_UTIL): how many CPUs of a cache of `span` a wake-up may look at —
/// fewer the more of it is used, none past 1024 × 100 / `pct` per CPU.
fn idle_scan(span: CpuSet, stats: &(impl Figures + ?Sized), pct: u64) -> u64 {
    let weight = span.len() as u64;
    let util: u64 = span.iter().map(|c| stats[c].util).sum();
    let x = util / weight;
    let used = (x * x * pct * pct / (10_000 * CAPACITY)).min(CAPACITY);
    (CAPACITY - used) * weight / CAPACITY
}

/// `select_idle_cpu` (with `select_idle_core` when a whole core may be idle): in `llc`, the
/// first idle CPU the task may use after `target`, wrapping.
fn select_idle_cpu<'a>(
    w: &Wake,
    llc: (CpuSet, u64),
    has_idle_core: bool,
    target: usize,
    stats: &(impl Figures + ?Sized),
    domains_of: &impl Fn(usize) -> &'a [Domain],
) -> Option<usize> {
    let (span, pct) = llc;
    let mut cpus = span & w.allowed;
    let mut nr = idle_scan(span, stats, pct) + 1;
    if !has_idle_core && nr == 1 {
        return None;
    }
    let n = 64;
    let mut fallback = None;
    for i in 1..=n {
        let c = (target + i) % n;
        if !cpus.contains(c) {
            continue;
        }
        if has_idle_core {
            let core = siblings(domains_of(c), c);
            if core.iter().all(|s| idle(stats, s)) {
                return Some(c);
            }
            if fallback.is_none() {
                fallback = (core & w.allowed).iter().find(|&s| idle(stats, s));
            }
            cpus = CpuSet::from_bits(cpus.bits() & !core.bits());
        } else {
            nr -= 1;
            if nr == 0 {
                return None;
            }
            if idle(stats, c) {
                return Some(c);
            }
        }
    }
    fallback
}

/// `select_idle_sibling`: an idle CPU near `target`, sharing its cache.
fn select_idle_sibling<'a>(
    w: &Wake,
    target: usize,
    stats: &(impl Figures + ?Sized),
    domains_of: &impl Fn(usize) -> &'a [Domain],
) -> usize {
    if idle(stats, target) {
        return target;
    }
    let target_domains = domains_of(target);
    let span = llc(target_domains, target);
    if w.prev != target && span.contains(w.prev) && idle(stats, w.prev) {
        return w.prev;
    }
    let Some(sd) = target_domains
        .iter()
        .rev()
        .find(|d| d.params.flags.has(Flags::SHARE_PKG_RESOURCES))
    else {
        return target;
    };
    let smt = target_domains
        .iter()
        .any(|d| d.params.flags.has(Flags::SHARE_CPUPOWER));
    let mut has_idle_core = false;
    if smt {
        has_idle_core = span
            .iter()
            .any(|c| siblings(domains_of(c), c).iter().all(|s| idle(stats, s)));
        if !has_idle_core && span.contains(w.prev) {
            let core = siblings(domains_of(w.prev), w.prev) & w.allowed;
            if let Some(c) = core.iter().find(|&c| c != w.prev && idle(stats, c)) {
                return c;
            }
        }
    }
    let llc = (sd.span, sd.params.imbalance_pct);
    select_idle_cpu(w, llc, has_idle_core, target, stats, domains_of).unwrap_or(target)
}

/// `select_task_rq_fair` at a wake-up.
pub fn select_wake_cpu<'a>(
    w: &Wake,
    stats: &(impl Figures + ?Sized),
    domains_of: impl Fn(usize) -> &'a [Domain],
) -> usize {
    let mut target = w.prev;
    if w.allowed.contains(w.this_cpu) {
        let this_domains = domains_of(w.this_cpu);
        let share_cache = llc(this_domains, w.this_cpu).contains(w.prev);
        let affine = this_domains
            .iter()
            .find(|d| d.params.flags.has(Flags::WAKE_AFFINE) && d.span.contains(w.prev));
        if let Some(sd) = affine
            && w.this_cpu != w.prev
        {
            target = wake_affine(sd, w, stats, share_cache);
        }
    }
    select_idle_sibling(w, target, stats, &domains_of)
}

mod idlest;
pub use idlest::{Leaving, find_idlest_cpu};

#[cfg(test)]
mod tests;
