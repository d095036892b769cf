//! Where 2.6.36 puts a task that wakes (`select_task_rq_fair`'s wake-up path,
//! `wake_affine`, `effective_load` and `select_idle_sibling`, kernel/sched_fair.c), for
//! domains built by `build_2_6_36`.
//!
//! - **Affine or not.** In the lowest domain of the waker's CPU that allows affine
//!   wake-ups and holds the task's previous CPU, the task may go to the waker's CPU if
//!   that CPU, with the task added, stays within half the domain's `imbalance_pct` of the
//!   previous one (each side weighed by the other's power: the same on QEMU's symmetric CPUs), or if it is no busier and the
//!   two hold less than a task's worth of its load. A synchronous waker (about to sleep)
//!   first takes its own weight away. With groups, a weight added to a CPU counts as what
//!   it changes at the root (`effective_load`): the group's share there grows by less than
//!   the weight.
//! - **An idle sibling.** The chosen CPU, if idle, is kept; else the first idle CPU the
//!   task may use in the chosen CPU's cache-sharing domains (SMT, then MC), scanning no
//!   higher than the first domain that holds both the waker's and the task's CPUs.
//!
//! No x86 domain balances at wake-up (`SD_BALANCE_WAKE`), so a task whose CPU shares no
//! affine domain with the waker's simply stays. 2.6.24's `wake_idle` and passive
//! `SD_WAKE_BALANCE` are gone. The split of shares that `select_task_rq_fair` runs first
//! (`update_shares`, `super::super::shares`) is left out here: the split of the last
//! balancing pass is read.

use super::super::cpuset::CpuSet;
use super::super::domains::{Domain, Flags};
use super::{Figures, half_pct};

/// A group's runqueue on one CPU as `effective_load` reads it (2.6.27–2.6.37's shares).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupHere {
    /// The group's shares (`tg->shares`).
    pub tg_shares: u64,
    /// The part of them this CPU holds (`cfs_rq->shares`; 0 if boosted).
    pub shares: u64,
    /// The weight queued at the last split (`cfs_rq->rq_weight`; 0 if boosted).
    pub rq_weight: u64,
    /// The weight queued now.
    pub weight: u64,
}

/// `effective_load`: how much the root's load on a CPU changes when `wl` is added to a
/// group's runqueue there and `wg` to the group's total weight (one level of groups:
/// cfslab's per-uid ones). Without a group (`None`) it is `wl`; with 2.6.36's
/// ASYM_EFF_LOAD a `wl` of 0 changes nothing.
pub fn effective_load(group: Option<&GroupHere>, wl: i64, wg: i64) -> i64 {
    let Some(q) = group else {
        return wl;
    };
    if wl == 0 {
        return 0;
    }
    // The weight queued since the last split counts as added too.
    let more = q.weight as i64 - q.rq_weight as i64;
    let (wl, wg) = (wl + more, wg + more);
    let (big_s, s, rw) = (q.tg_shares as i64, q.shares as i64, q.rq_weight as i64);
    let a = big_s * (rw + wl);
    let b = big_s * rw + s * wg;
    let wl = s * (a - b);
    if b != 0 { wl / b } else { wl }
}

/// What a wake-up knows.
#[derive(Debug, Clone, Copy)]
pub struct Wake {
    /// The CPU the task last ran on.
    pub prev: usize,
    /// The waker's CPU.
    pub this_cpu: usize,
    /// The CPUs the task may run on.
    pub allowed: CpuSet,
    /// A synchronous wake-up: the waker's effect on its CPU's root load, taken away
    /// (`effective_load` of minus its weight).
    pub sync_waker_effect: Option<i64>,
    /// The task's effect on the waker's CPU's root load if it went there
    /// (`effective_load` of its weight).
    pub task_effect: i64,
}

/// `wake_affine`: may the task go to the waker's CPU, by `sd`'s rules?
fn wake_affine(sd: &Domain, w: &Wake, stats: &(impl Figures + ?Sized)) -> bool {
    let idx = sd.params.wake_idx;
    let (prev, this) = (&stats[w.prev], &stats[w.this_cpu]);
    let load = prev.cpu_load.source(prev.load, idx);
    let mut this_load = this.cpu_load.target(this.load, idx);
    // Unsigned, as Linux adds a negative effect to an `unsigned long`.
    if let Some(effect) = w.sync_waker_effect {
        this_load = this_load.wrapping_add(effect as u64);
    }
    let power = sd.cpu_power;
    let balanced = this_load == 0 || {
        // Unsigned and wrapping, as Linux's: a negative effect may take the sum below 0.
        let this_eff = (100 * power).wrapping_mul(this_load.wrapping_add(w.task_effect as u64));
        let prev_eff = (half_pct(sd) * power).wrapping_mul(load);
        this_eff <= prev_eff
    };
    if w.sync_waker_effect.is_some() && balanced {
        return true;
    }
    let per_task = this
        .load
        .checked_div(u64::from(this.nr_running))
        .unwrap_or(0);
    let together = this_load.wrapping_add(prev.cpu_load.target(prev.load, idx));
    balanced || (this_load <= load && together <= per_task)
}

/// `select_idle_sibling` of `target` (see the module's docs); `domains_of(c)` are CPU `c`'s.
pub fn select_idle_sibling<'a>(
    target: usize,
    w: &Wake,
    stats: &(impl Figures + ?Sized),
    domains_of: impl Fn(usize) -> &'a [Domain],
) -> usize {
    if (target == w.this_cpu || target == w.prev) && stats.idle(target) {
        return target;
    }
    let mut chosen = target;
    for sd in domains_of(target) {
        if !sd.params.flags.has(Flags::SHARE_PKG_RESOURCES) {
            break;
        }
        if let Some(idle) = (sd.span & w.allowed).iter().find(|&i| stats.idle(i)) {
            chosen = idle;
        }
        if sd.span.contains(w.this_cpu) && sd.span.contains(w.prev) {
            break;
        }
    }
    chosen
}

/// `select_task_rq_fair` for a wake-up in 2.6.36 (see the module's docs).
pub fn select_wake_cpu<'a>(
    w: &Wake,
    stats: &(impl Figures + ?Sized),
    domains_of: impl Fn(usize) -> &'a [Domain] + Copy,
) -> usize {
    let affine_sd = w
        .allowed
        .contains(w.this_cpu)
        .then(|| {
            domains_of(w.this_cpu).iter().find(|d| {
                d.params.flags.has(Flags::LOAD_BALANCE)
                    && d.params.flags.has(Flags::WAKE_AFFINE)
                    && d.span.contains(w.prev)
            })
        })
        .flatten();
    let Some(sd) = affine_sd else {
        return w.prev;
    };
    let target = if w.this_cpu == w.prev || wake_affine(sd, w, stats) {
        w.this_cpu
    } else {
        w.prev
    };
    select_idle_sibling(target, w, stats, domains_of)
}

#[cfg(test)]
mod tests;
