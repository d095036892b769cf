//! 2.6.24's balancing passes (`load_balance`, `load_balance_newidle`, `rebalance_domains`,
//! `idle_balance`, kernel/sched.c): when each of a CPU's domains is balanced, what a pass
//! does with [`busiest`](super::busiest)'s verdict and [`move_tasks`](super::move_tasks)'
//! choice, and how it adapts its interval.
//!
//! - **When** ([`walk`]). At each tick a CPU walks its domains bottom up and balances each one
//!   whose interval has passed: `balance_interval` milliseconds, times the domain's `busy_factor`
//!   (64 below NUMA) when the CPU was busy at the tick — a busy CPU balances rarely, an idle one at
//!   once. A CPU about to go idle balances the domains with SD_BALANCE_NEWIDLE first, until one
//!   gives it a task.
//! - **The interval** goes back to its minimum when a pass finds an imbalance (whether or
//!   not it moved anything), and doubles, up to its maximum, when it finds none.
//! - **Failures.** A pass that finds an imbalance and moves nothing counts a failure. After
//!   more than `cache_nice_tries` of them cache-hot tasks may move; after more than
//!   `cache_nice_tries + 2` the balancing CPU asks the busiest one to *push* its running
//!   task (active balancing, by its migration thread: the caller's part), and the count
//!   is set back to `cache_nice_tries + 1`.
//! - **All pinned.** If every task looked at on the busiest CPU is kept there by its
//!   affinity, the pass tries the other CPUs of the busiest group, and if none is left it
//!   doubles its interval up to 512 ms. 4.1 and 6.6 first try another CPU of the
//!   balancing CPU's group for such tasks, and mark the group above when affinity left an
//!   imbalance ([`pinned`]).
//!
//! The machine is the caller's ([`Machine`]): the CPUs' loads, the busiest CPU's tasks, the
//! moves. The pass decides; it never touches a runqueue.

use super::busiest::{
    CpuStat, IdleType, Migration, Verdict, find_busiest_group, find_busiest_queue, v2_6_36, v4_1,
    v6_6,
};
use super::cpuset::CpuSet;
use super::domains::{Domain, Flags, Rules};
use super::move_tasks::{Env, Queues, move_tasks};
use super::schedstat::{DomainStats, index};
use super::shares::{GroupSpan, Share, SharesSplit, ratelimit_ns, split};
use crate::features::Feature;
use crate::policy::TaskId;
use alloc::vec::Vec;

/// `MAX_PINNED_INTERVAL`: how far an all-pinned domain's interval may grow, in ms.
pub const MAX_PINNED_INTERVAL_MS: u64 = 512;

/// What a balancing pass needs of the machine. (A method that reads takes `&mut self`: the
/// machine may lock the runqueues it reads as it reads them.)
pub trait Machine {
    /// Every CPU's load, indexed by CPU.
    fn stats(&mut self) -> Vec<CpuStat>;
    /// How many CPUs are online.
    fn cpus(&self) -> usize;
    /// `busiest`'s fair tasks — group by group, with groups — beside `this_cpu`'s loads in
    /// the same groups (see [`Queues`]), for `this_cpu` to pull from: what [`Machine::pull`]
    /// then moves, the two runqueues held from one to the other.
    fn queues(&mut self, busiest: usize, this_cpu: usize) -> Queues;
    /// `cpu`'s clock (what `task_hot` compares with).
    fn clock(&self, cpu: usize) -> u64;
    /// The CPUs the task running on `cpu` may run on (none if it runs its idle task).
    fn running_allowed(&mut self, cpu: usize) -> CpuSet;
    /// Moves `tasks` from `from` to `to` (`pull_task`).
    fn pull(&mut self, from: usize, to: usize, tasks: &[TaskId]);
    /// How the era splits a group's shares across CPUs (2.6.24's full shares everywhere
    /// unless said otherwise).
    fn shares_split(&self) -> SharesSplit {
        SharesSplit::Full
    }
    /// Every group with a runqueue on `span`'s CPUs, each CPU's part of it.
    fn groups_on(&mut self, _span: CpuSet) -> Vec<GroupSpan> {
        Vec::new()
    }
    /// Gives group `uid`'s entity on `share.cpu` its new share.
    fn reweight_group(&mut self, _uid: u32, _share: Share) {}
    /// 4.1 and 6.6: whether the group of `cpus` at topology level `level` is marked
    /// imbalanced ([`group_imbalance`](super::group_imbalance)).
    fn group_imbalanced(&mut self, _level: usize, _cpus: CpuSet) -> bool {
        false
    }
    /// Marks that group (`on`), or clears its mark.
    fn mark_group_imbalanced(&mut self, _level: usize, _cpus: CpuSet, _on: bool) {}
    /// Whether `cpu` has a task to run now: a CPU about to idle whose pass let go of its
    /// runqueue may have been given one meanwhile (a wake-up).
    fn has_work(&mut self, _cpu: usize) -> bool {
        false
    }
    /// How many tasks `busiest` runs now, after [`Machine::queues`] of it (`None`: as the
    /// pass's figures said).
    fn nr_running(&mut self, _busiest: usize) -> Option<usize> {
        None
    }
}

/// What one CPU keeps of one of its domains between passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DomainState {
    /// The interval now, in milliseconds.
    pub balance_interval_ms: u64,
    /// When it was last balanced, in jiffies.
    pub last_balance: u64,
    /// Consecutive passes that found an imbalance and moved nothing.
    pub nr_balance_failed: u64,
    /// When its groups' shares were last split, in ns (`sd->last_update`, 2.6.27–2.6.37).
    pub shares_updated: u64,
    /// Its passes' counters (schedstats).
    pub stats: DomainStats,
}

impl DomainState {
    /// A domain's state as it is built at `jiffies`.
    pub fn new(domain: &Domain, jiffies: u64) -> DomainState {
        DomainState {
            balance_interval_ms: domain.params.balance_interval_ms,
            last_balance: jiffies,
            nr_balance_failed: 0,
            shares_updated: 0,
            stats: DomainStats::default(),
        }
    }
}

/// What a pass did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The tasks moved, and from which CPU: pulled here, or — 4.1's and 6.6's retry for
    /// another CPU of this one's group — pushed there.
    pub pulled: Option<(usize, Vec<TaskId>)>,
    /// Load moved (Linux's `ld_moved`): the pass balanced something.
    pub moved: bool,
    /// Some of it came to this CPU (not all to another CPU of its group).
    pub moved_here: bool,
    /// The busiest CPU asked to push its running task here (active balancing).
    pub push_from: Option<usize>,
    /// Another CPU of this CPU's group balances this level and the ones above.
    pub not_the_balancer: bool,
}

/// `update_shares` (2.6.27–2.6.37): at most once per ratelimit, each group's shares are
/// split again between `domain`'s CPUs (`smp::shares`); `top_level` when the domain has
/// no balancing parent, where the whole of each group's shares is split.
fn update_shares(
    state: &mut DomainState,
    domain: &Domain,
    top_level: bool,
    now: u64,
    m: &mut impl Machine,
) {
    let era = m.shares_split();
    if !matches!(era, SharesSplit::AtBalance { .. })
        || now.saturating_sub(state.shares_updated) < ratelimit_ns(era, m.cpus())
    {
        return;
    }
    state.shares_updated = now;
    for group in m.groups_on(domain.span) {
        for share in split(era, group.shares, top_level, &group.on) {
            m.reweight_group(group.uid, share);
        }
    }
}

/// `load_balance` (periodic, `why` Idle or NotIdle) or `load_balance_newidle` (NewlyIdle)
/// of `domain` by `this_cpu`; `parent` is the domain above it, if any.
pub fn load_balance(
    state: &mut DomainState,
    domain: &Domain,
    parent: Option<&Domain>,
    this_cpu: usize,
    why: IdleType,
    m: &mut impl Machine,
) -> Outcome {
    let p = domain.params;
    let top_level = parent.is_none_or(|d| !d.params.flags.has(Flags::LOAD_BALANCE));
    let periodic = why != IdleType::NewlyIdle;
    let mut outcome = Outcome {
        pulled: None,
        moved: false,
        moved_here: false,
        push_from: None,
        not_the_balancer: false,
    };
    let mut cpus = domain.span;
    let (mut all_pinned, mut some_pinned) = (false, false);
    let mark = pinned::parents_group(domain, parent);
    let kind = index(why);
    state.stats.count[kind] += 1;
    loop {
        // From 2.6.27 the shares are split first (`redo:`), and again after a move.
        let now = m.clock(this_cpu);
        update_shares(state, domain, top_level, now, m);
        let stats = m.stats();
        let verdict = match domain.rules {
            Rules::V2_6_24 => find_busiest_group(domain, this_cpu, &stats, why, cpus),
            Rules::V2_6_36 => v2_6_36::find_busiest_group(domain, this_cpu, &stats, why, cpus),
            Rules::V6_6 => {
                let marked = pinned::marks(domain, m);
                match runs_4_1(domain) {
                    true => v4_1::find_busiest_group(domain, this_cpu, &stats, why, cpus, &marked),
                    false => v6_6::find_busiest_group(domain, this_cpu, &stats, why, cpus, &marked),
                }
            }
        };
        let (group, migration, imbalance) = match verdict {
            Verdict::Pull {
                group,
                migration,
                imbalance,
            } => (group, migration, imbalance),
            Verdict::NotTheBalancer => {
                outcome.not_the_balancer = true;
                return balanced(state, domain, why, (all_pinned, mark), m, outcome);
            }
            Verdict::Balanced => {
                state.stats.no_busy_group[kind] += 1;
                return balanced(state, domain, why, (all_pinned, mark), m, outcome);
            }
        };
        let busiest = match domain.rules {
            Rules::V2_6_24 => find_busiest_queue(&domain.groups[group], &stats, imbalance, cpus),
            Rules::V2_6_36 => v2_6_36::find_busiest_queue(domain, group, &stats, imbalance, cpus),
            Rules::V6_6 => {
                v6_6::find_busiest_queue(domain, group, &stats, migration, imbalance, cpus)
            }
        };
        let Some(busiest) = busiest else {
            state.stats.no_busy_queue[kind] += 1;
            return balanced(state, domain, why, (all_pinned, mark), m, outcome);
        };
        state.stats.imbalance[kind] += imbalance;
        if stats[busiest].nr_running > 1 {
            let env = Env {
                this_cpu,
                now: m.clock(busiest),
                nr_balance_failed: state.nr_balance_failed,
                cache_nice_tries: p.cache_nice_tries,
                favour_best_prio: m.shares_split() == SharesSplit::Full,
                repeat_look: m.shares_split().repeats_look(),
                dst_group: CpuSet::EMPTY,
            };
            let pulled = match domain.rules {
                Rules::V6_6 => {
                    let what = pinned::ToMove {
                        migration,
                        imbalance,
                        why,
                        nr_running: stats[busiest].nr_running as usize,
                    };
                    // The CPUs that balance for this CPU's group (`group_balance_mask`).
                    let local_group = domain.groups[0].balance;
                    pinned::detach_here_or_beside(m, busiest, &what, env, local_group, &mut cpus)
                }
                _ => {
                    let pulled = move_tasks(&m.queues(busiest, this_cpu), imbalance, &env);
                    m.pull(busiest, this_cpu, &pulled.tasks);
                    pulled
                }
            };
            // Linux's `ld_moved`: load moved, in the imbalance's units. With split shares
            // tasks can move and count for nothing (their group holds no share there yet,
            // its `h_load` is 0): the pass then counts as a failure, as in Linux.
            let moved = pulled.load > 0;
            outcome.moved_here = moved && pulled.tasks.len() > pulled.elsewhere;
            if !pulled.tasks.is_empty() {
                state.stats.gained[kind] += pulled.tasks.len() as u64;
                outcome.pulled = Some((busiest, pulled.tasks));
            }
            // Affinity kept part of the imbalance here: the level above hears of it.
            some_pinned |= pulled.some_pinned;
            if let Some((level, group)) = mark
                && some_pinned
                && pulled.left > 0
            {
                m.mark_group_imbalanced(level, group, true);
            }
            // As Linux, whatever moved: the last look found every task pinned. Another
            // busiest CPU is looked for among the rest — 6.6 only while some are outside
            // this CPU's group.
            if pulled.all_pinned {
                all_pinned = true;
                cpus = cpus.without(busiest);
                let others_left = match domain.rules == Rules::V6_6 && !runs_4_1(domain) {
                    true => !cpus.is_subset(domain.groups[0].balance),
                    false => !cpus.is_empty(),
                };
                if others_left {
                    continue;
                }
                if !periodic && domain.rules == Rules::V2_6_24 {
                    // Newly idle, every CPU tried: 2.6.24 counts a failure; later eras go
                    // to `out_balanced` (6.6: `out_all_pinned`), a pass balanced.
                    state.stats.failed[kind] += 1;
                    return outcome;
                }
                return balanced(state, domain, why, (true, mark), m, outcome);
            }
            if moved {
                // (`update_shares` again: rate-limited, it does nothing at the same time.)
                update_shares(state, domain, top_level, now, m);
                outcome.moved = true;
                state.nr_balance_failed = 0;
                if periodic || newidle_tunes_interval(domain.rules) {
                    state.balance_interval_ms = p.min_interval_ms;
                }
                return outcome;
            }
        }
        // An imbalance, and nothing moved.
        state.stats.failed[kind] += 1;
        if !periodic {
            if newidle_tunes_interval(domain.rules) {
                state.balance_interval_ms = p.min_interval_ms;
            }
            return outcome;
        }
        // 6.6 pushes a running task only when it is tasks that are to move
        // (`imbalanced_active_balance`): a load or utilisation imbalance never does on CPUs
        // of equal capacity. 4.1 pushed after enough failures, whatever was to move.
        let may_push =
            domain.rules != Rules::V6_6 || migration == Migration::Task || runs_4_1(domain);
        return failed(state, domain, busiest, this_cpu, may_push, m, outcome);
    }
}

/// Whether `domain` is balanced by cfslab's 4.1: 6.6's balancer with `NO_LB_GROUP_TYPES`
/// (`busiest::v4_1`), which also ends its passes as 4.1 did.
fn runs_4_1(domain: &Domain) -> bool {
    domain.rules == Rules::V6_6 && !domain.features.has(Feature::LbGroupTypes)
}

/// Whether a newly-idle pass that finds an imbalance sets the interval back to its minimum,
/// as a periodic one does: not 2.6.24's `load_balance_newidle`, which never touches the
/// interval; yes once it was folded into `load_balance` (2.6.36, and still 6.6).
fn newidle_tunes_interval(rules: Rules) -> bool {
    rules != Rules::V2_6_24
}

mod outcome;
mod pinned;
mod walk;
use outcome::{balanced, failed};
pub use walk::{idle_balance, interval_jiffies, rebalance_domains};

#[cfg(test)]
mod tests;
