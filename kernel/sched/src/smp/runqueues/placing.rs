//! Where a task that forks, execs or wakes goes, read off the runqueues: the era's
//! `sched_balance_self` (2.6.24) or `find_idlest_cpu` (6.6), and `select_task_rq_fair`
//! (2.6.24's affine wake-up and `wake_idle`, 2.6.36's and 6.6's `wake_affine` and
//! `select_idle_sibling`), from [`crate::smp::placement`] — or, with `WAKE_LONGEST_IDLE`,
//! the Wasted Cores paper's wake-up fix ([`longest_idle`]). The caller moves the task.

use super::machine::{CpuFigures, Machine, ReadCpu};
use super::{CpuBalance, Runqueues, stats};
use crate::features::{Feature, Features};
use crate::policy::{Nanos, Policy, TaskId, Uid};
use crate::rq::Rq;
use crate::smp::cpuset::CpuSet;
use crate::smp::domains::{Flags, Rules};
use crate::smp::group_imbalance;
use crate::smp::move_tasks::MIGRATION_COST_NS;
use crate::smp::placement::v2_6_36::{self, GroupHere, effective_load};
use crate::smp::placement::v6_6::{self, Leaving};
use crate::smp::placement::{self, Figures, Wake};
use crate::smp::shares::SharesSplit;
use crate::weights::NICE_0_LOAD;

/// `sched_balance_self`: the CPU a task on `cpu` that may run on `allowed` goes to as it
/// forks (`flag` SD_BALANCE_FORK) or execs (SD_BALANCE_EXEC).
pub fn balance_self<R: Runqueues + ?Sized>(r: &R, cpu: usize, flag: u32, allowed: CpuSet) -> usize {
    let stats = stats(r);
    let domains_of = |c: usize| &*r.balance(c).domains;
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
/// woken from `waker_cpu` (synchronously if `sync_waker` is about to sleep or go). For a
/// holder of every runqueue (the simulator, the kernel's slow path): it reads what
/// [`choose_wake_cpu`] needs, then asks it.
pub fn wake_cpu<R: Runqueues + ?Sized>(
    r: &R,
    task: TaskId,
    prev: usize,
    waker_cpu: usize,
    sync_waker: Option<SyncWaker>,
) -> usize {
    let (rules, split) = (r.rules(), r.split());
    let wakee = Wakee::read(
        r.rq(prev),
        r.balance(prev),
        task,
        (r.allowed(prev, task), r.uid(prev, task)),
        r.now(),
    );
    // No CPU's load is read for a task with no choice: a snapshot of every CPU's would
    // cost each wake-up of a pinned task more the more CPUs there are.
    if !wakee.has_choice() {
        return prev;
    }
    let waker_rq = r.rq(waker_cpu);
    let waker = Waker::read(
        waker_rq,
        r.balance(waker_cpu),
        (rules, split),
        sync_waker,
        &wakee,
    );
    let held = Held(r);
    let machine = Machine::new(r.len(), &held);
    choose_wake_cpu(&wakee, &waker, &machine, rules)
}

/// Runqueues held whole, read CPU by CPU as a [`Machine`].
struct Held<'a, R: Runqueues + ?Sized>(&'a R);

impl<R: Runqueues + ?Sized> ReadCpu for Held<'_, R> {
    fn figures(&self, cpu: usize) -> CpuFigures {
        CpuFigures::read(self.0.rq(cpu), self.0.balance(cpu), self.0.split())
    }
}

/// The wakee as its placement reads it, under the lock of its CPU (`prev`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wakee {
    /// The task, and the CPU it slept on.
    pub task: TaskId,
    /// See `task`.
    pub prev: usize,
    /// The online CPUs it may run on.
    pub allowed: CpuSet,
    /// Its uid (its group, with per-uid groups).
    pub uid: Uid,
    /// Its weight, and its load as 6.6 counts it (`task_h_load`).
    pub weight: u64,
    /// See `weight`.
    pub h_load: u64,
    /// It ran less than the migration cost ago (2.6.24's `task_hot`): cache-hot.
    pub hot: bool,
    /// The balancing switches of its CPU's domains (`WAKE_LONGEST_IDLE` among them), and
    /// whether that CPU has hyperthread siblings.
    pub switches: Features,
    /// See `switches`.
    pub smt: bool,
}

impl Wakee {
    /// Task `task` on the runqueue `rq`, balanced by `b`, allowed the online CPUs of
    /// `allowed` and running as `uid`, at `now`.
    pub fn read<P: Policy + ?Sized>(
        rq: &Rq<P>,
        b: &CpuBalance,
        task: TaskId,
        (allowed, uid): (CpuSet, Uid),
        now: Nanos,
    ) -> Wakee {
        let info = rq.policy().task_info(task);
        Wakee {
            task,
            prev: rq.cpu(),
            allowed,
            uid,
            weight: info.map_or(NICE_0_LOAD, |i| i.weight),
            h_load: info.map_or(NICE_0_LOAD, |i| i.h_load),
            hot: info.is_some_and(|i| now.saturating_sub(i.exec_start) < MIGRATION_COST_NS),
            switches: b.switches(),
            smt: b.smt,
        }
    }

    /// Whether it may wake anywhere but on its own CPU: one allowed its own CPU alone has
    /// no choice to make, as Linux's `select_task_rq` asks the class only when
    /// `nr_cpus_allowed > 1`.
    pub fn has_choice(&self) -> bool {
        self.allowed != CpuSet::one(self.prev)
    }
}

/// The waker's side of a wake-up, read under the lock of the waker's CPU: what a
/// synchronous waker (about to give the CPU up) weighs there, by the era's measure, and
/// what the wakee would add there (2.6.36).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waker {
    /// The waker's CPU.
    pub cpu: usize,
    /// 2.6.24: a synchronous waker's weight.
    pub sync_weight: Option<u64>,
    /// 6.6: a synchronous waker's load (`task_h_load`), unless it is exiting.
    pub sync_load: Option<u64>,
    /// 2.6.36: what the synchronous waker's leaving, and the wakee's coming, would change
    /// at the root of the waker's CPU (`effective_load` through their groups).
    pub sync_effect: Option<i64>,
    /// See `sync_effect`.
    pub wakee_effect: i64,
}

impl Waker {
    /// The waker's CPU, whose runqueue is `rq` balanced by `b`, under `rules` and `split`.
    pub fn read<P: Policy + ?Sized>(
        rq: &Rq<P>,
        b: &CpuBalance,
        (rules, split): (Rules, SharesSplit),
        sync_waker: Option<SyncWaker>,
        wakee: &Wakee,
    ) -> Waker {
        let mut waker = Waker {
            cpu: rq.cpu(),
            sync_weight: sync_waker.map(|w| w.weight),
            sync_load: None,
            sync_effect: None,
            wakee_effect: 0,
        };
        match rules {
            Rules::V2_6_24 => {}
            Rules::V6_6 => {
                // A synchronous waker is the task running on the waker's CPU; one that is
                // exiting is not taken for one (`PF_EXITING`).
                let info = rq.policy().task_info(rq.current());
                waker.sync_load = sync_waker
                    .filter(|w| !w.exiting)
                    .map(|w| info.map_or(w.weight, |i| i.h_load));
            }
            Rules::V2_6_36 => {
                let effect = |uid: Uid, w: i64| {
                    let group = group_here(rq.policy(), b, split, uid);
                    effective_load(group.as_ref(), w, w)
                };
                waker.sync_effect = sync_waker.map(|w| effect(w.uid, -(w.weight as i64)));
                waker.wakee_effect = effect(wakee.uid, wakee.weight as i64);
            }
        }
        waker
    }
}

/// The era's choice for a wake-up (`select_task_rq_fair`), from what was read of the
/// wakee, its waker and the machine.
pub fn choose_wake_cpu(wakee: &Wakee, waker: &Waker, machine: &Machine, rules: Rules) -> usize {
    if !wakee.has_choice() {
        return wakee.prev;
    }
    let stats = machine;
    let domains_of = |c: usize| machine.domains(c);
    if wakee.switches.has(Feature::WakeLongestIdle)
        && let Some(cpu) = longest_idle(wakee.prev, wakee.allowed, machine)
    {
        return cpu;
    }
    let (prev, this_cpu, allowed) = (wakee.prev, waker.cpu, wakee.allowed);
    match rules {
        Rules::V2_6_24 => {
            let wake = Wake {
                prev,
                this_cpu,
                allowed,
                weight: wakee.weight,
                sync_waker_weight: waker.sync_weight,
                hot: wakee.hot,
            };
            placement::select_wake_cpu(&wake, stats, wakee.smt, domains_of)
        }
        Rules::V6_6 => {
            let w = v6_6::Wake {
                prev,
                this_cpu,
                allowed,
                task_load: wakee.h_load,
                sync_waker_load: waker.sync_load,
            };
            v6_6::select_wake_cpu(&w, stats, domains_of)
        }
        Rules::V2_6_36 => {
            let w = v2_6_36::Wake {
                prev,
                this_cpu,
                allowed,
                sync_waker_effect: waker.sync_effect,
                task_effect: waker.wakee_effect,
            };
            v2_6_36::select_wake_cpu(&w, stats, domains_of)
        }
    }
}

/// The Wasted Cores paper's fix to Overload-on-Wakeup (`WAKE_LONGEST_IDLE`): a wakee's
/// previous CPU if it is idle, else the allowed CPU that has idled longest, anywhere in the
/// machine — not only in the previous CPU's cache (§3.3). `None` if no CPU idles: then
/// the usual placement decides.
fn longest_idle(prev: usize, allowed: CpuSet, machine: &Machine) -> Option<usize> {
    // The flag first: a CPU found busy is not read further.
    let idle = |c: usize| machine.idle(c) && machine[c].nr_running == 0;
    if allowed.contains(prev) && idle(prev) {
        return Some(prev);
    }
    // A CPU idle since before it first balanced counts as idle longest (stamp 0).
    allowed
        .iter()
        .filter(|&c| c < machine.cpus() && idle(c))
        .min_by_key(|&c| machine.idle_stamp(c).unwrap_or(0))
}

/// Uid `uid`'s group on the CPU whose policy is `policy` and balancing state `b`, as
/// `effective_load` reads it; `None` without split shares or groups (the task's weight
/// counts whole).
fn group_here<P: Policy + ?Sized>(
    policy: &P,
    b: &CpuBalance,
    split: SharesSplit,
    uid: Uid,
) -> Option<GroupHere> {
    if split.load_is_tasks() {
        return None;
    }
    let queues = policy.balance_queues();
    if queues.iter().all(|q| q.uid.is_none()) {
        return None;
    }
    let weight = queues
        .iter()
        .find(|q| q.uid == Some(uid))
        .map_or(0, |q| q.load);
    let last = b.last_share(uid);
    Some(GroupHere {
        tg_shares: policy.fair_params()?.shares_of(uid),
        shares: last.map_or(0, |s| s.shares),
        rq_weight: last.map_or(0, |s| s.rq_weight),
        weight,
    })
}
