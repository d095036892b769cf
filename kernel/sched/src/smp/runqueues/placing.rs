//! Where a task that forks, execs or wakes goes, read off the runqueues: the era's
//! `sched_balance_self` (2.6.24) or `find_idlest_cpu` (6.6), and `select_task_rq_fair`
//! (2.6.24's affine wake-up and `wake_idle`, 2.6.36's and 6.6's `wake_affine` and
//! `select_idle_sibling`), from [`crate::smp::placement`] — or, with `WAKE_LONGEST_IDLE`,
//! the Wasted Cores paper's wake-up fix ([`longest_idle`]). The caller moves the task.

use super::{Runqueues, stats};
use crate::features::Feature;
use crate::policy::{Policy, TaskId, Uid};
use crate::smp::busiest::CpuStat;
use crate::smp::cpuset::CpuSet;
use crate::smp::domains::{Flags, Rules};
use crate::smp::group_imbalance;
use crate::smp::move_tasks::MIGRATION_COST_NS;
use crate::smp::placement::v2_6_36::{self, GroupHere, effective_load};
use crate::smp::placement::v6_6::{self, Leaving};
use crate::smp::placement::{self, Wake};
use crate::weights::NICE_0_LOAD;

/// `sched_balance_self`: the CPU a task on `cpu` that may run on `allowed` goes to as it
/// forks (`flag` SD_BALANCE_FORK) or execs (SD_BALANCE_EXEC).
pub fn balance_self<R: Runqueues + ?Sized>(r: &R, cpu: usize, flag: u32, allowed: CpuSet) -> usize {
    let stats = stats(r);
    let domains_of = |c: usize| r.balance(c).domains.as_slice();
    if r.rules() != Rules::V6_6 {
        return placement::balance_self(cpu, flag, allowed, &stats, domains_of);
    }
    // 6.6 sizes the CPUs up without the task: an exec's, running here, leaves with it.
    let rq = r.rq(cpu);
    let leaving = (flag == Flags::BALANCE_EXEC && rq.current() != rq.idle())
        .then(|| rq.policy().task_info(rq.current()))
        .flatten()
        .map(|info| Leaving {
            cpu,
            load: info.h_load,
            util: info.util,
        });
    let marked = |level, cpus| group_imbalance::marked(r, level, cpus);
    v6_6::find_idlest_cpu(cpu, flag, allowed, leaving, &stats, domains_of, marked)
}

/// A waker about to give its CPU up (a synchronous wake-up, WF_SYNC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncWaker {
    /// Its weight.
    pub weight: u64,
    /// Its uid (its group, with per-uid groups).
    pub uid: Uid,
    /// It is ending, not going to sleep (6.6 then ignores the hint).
    pub exiting: bool,
}

/// `select_task_rq` at a wake-up: the CPU sleeping task `task`, last on `prev`, wakes on,
/// woken from `waker_cpu` (synchronously if `sync_waker` is about to sleep or go).
pub fn wake_cpu<R: Runqueues + ?Sized>(
    r: &R,
    task: TaskId,
    prev: usize,
    waker_cpu: usize,
    sync_waker: Option<SyncWaker>,
) -> usize {
    // A task allowed its own CPU alone has no choice to make: Linux's `select_task_rq`
    // asks the class only when `nr_cpus_allowed > 1`. No CPU's load is read — a snapshot
    // of every CPU's would cost each wake-up of a pinned task more the more CPUs there are.
    let allowed = r.allowed(task);
    if allowed == CpuSet::one(prev) {
        return prev;
    }
    let now = r.now();
    let info = r.rq(prev).policy().task_info(task);
    let wake = Wake {
        prev,
        this_cpu: waker_cpu,
        allowed,
        weight: info.map_or(NICE_0_LOAD, |i| i.weight),
        sync_waker_weight: sync_waker.map(|w| w.weight),
        hot: info.is_some_and(|i| now.saturating_sub(i.exec_start) < MIGRATION_COST_NS),
    };
    let stats = stats(r);
    let domains_of = |c: usize| r.balance(c).domains.as_slice();
    if r.balance(prev).switches().has(Feature::WakeLongestIdle)
        && let Some(cpu) = longest_idle(r, prev, wake.allowed, &stats)
    {
        return cpu;
    }
    match r.rules() {
        Rules::V2_6_24 => {
            let smt = r.balance(prev).smt;
            placement::select_wake_cpu(&wake, &stats, smt, domains_of)
        }
        Rules::V6_6 => {
            // A synchronous waker is the task running on the waker's CPU; one that is
            // exiting is not taken for one (`PF_EXITING`).
            let waker = r.rq(waker_cpu).current();
            let waker_load = sync_waker.filter(|w| !w.exiting).map(|w| {
                let info = r.rq(waker_cpu).policy().task_info(waker);
                info.map_or(w.weight, |i| i.h_load)
            });
            let w = v6_6::Wake {
                prev,
                this_cpu: waker_cpu,
                allowed: wake.allowed,
                task_load: info.map_or(wake.weight, |i| i.h_load),
                sync_waker_load: waker_load,
            };
            v6_6::select_wake_cpu(&w, &stats, domains_of)
        }
        Rules::V2_6_36 => {
            // What the waker and the task would change at the root of the waker's CPU.
            let effect =
                |uid: Uid, w: i64| effective_load(group_here(r, waker_cpu, uid).as_ref(), w, w);
            let weight = wake.weight as i64;
            let w = v2_6_36::Wake {
                prev,
                this_cpu: waker_cpu,
                allowed: wake.allowed,
                sync_waker_effect: sync_waker.map(|w| effect(w.uid, -(w.weight as i64))),
                task_effect: effect(r.uid(task), weight),
            };
            v2_6_36::select_wake_cpu(&w, &stats, domains_of)
        }
    }
}

/// The Wasted Cores paper's fix to Overload-on-Wakeup (`WAKE_LONGEST_IDLE`): a wakee's
/// previous CPU if it is idle, else the allowed CPU that has idled longest, anywhere in the
/// machine — not only in the previous CPU's cache (§3.3). `None` if no CPU idles: then
/// the usual placement decides.
fn longest_idle<R: Runqueues + ?Sized>(
    r: &R,
    prev: usize,
    allowed: CpuSet,
    stats: &[CpuStat],
) -> Option<usize> {
    let idle = |c: usize| stats[c].idle && stats[c].nr_running == 0;
    if allowed.contains(prev) && idle(prev) {
        return Some(prev);
    }
    // A CPU idle since before it first balanced counts as idle longest (stamp 0).
    allowed
        .iter()
        .filter(|&c| c < stats.len() && idle(c))
        .min_by_key(|&c| r.balance(c).idle_stamp.unwrap_or(0))
}

/// Uid `uid`'s group on `cpu` as `effective_load` reads it; `None` without split shares or
/// groups (the task's weight counts whole).
pub fn group_here<R: Runqueues + ?Sized>(r: &R, cpu: usize, uid: Uid) -> Option<GroupHere> {
    if r.split().load_is_tasks() {
        return None;
    }
    let policy = r.rq(cpu).policy();
    let queues = policy.balance_queues();
    if queues.iter().all(|q| q.uid.is_none()) {
        return None;
    }
    let weight = queues
        .iter()
        .find(|q| q.uid == Some(uid))
        .map_or(0, |q| q.load);
    let last = r.balance(cpu).last_share(uid);
    Some(GroupHere {
        tg_shares: policy.fair_params()?.shares_of(uid),
        shares: last.map_or(0, |s| s.shares),
        rq_weight: last.map_or(0, |s| s.rq_weight),
        weight,
    })
}
