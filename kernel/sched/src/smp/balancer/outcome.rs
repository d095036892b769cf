//! How a pass ends, and what it leaves for the next (`load_balance`'s exits: a move, a
//! failure and perhaps a push, `out_balanced`, `out_one_pinned`): the failure count and
//! the interval.

use super::{DomainState, MAX_PINNED_INTERVAL_MS, Machine, Outcome, runs_4_1};
use crate::smp::busiest::IdleType;
use crate::smp::cpuset::CpuSet;
use crate::smp::domains::{Domain, Rules};
use crate::smp::schedstat::index;

/// A periodic pass found an imbalance and moved nothing: one more failure. After more than
/// `cache_nice_tries + 2` in a row the busiest CPU is asked to push its running task here
/// (active balancing) — if `may_push` — unless its affinity forbids this CPU. The interval
/// goes back to its minimum; once a push is asked for, until 6.6, it doubles instead and
/// the failure count goes back to `cache_nice_tries + 1`.
pub(super) fn failed(
    state: &mut DomainState,
    domain: &Domain,
    busiest: usize,
    this_cpu: usize,
    may_push: bool,
    m: &mut impl Machine,
    mut outcome: Outcome,
) -> Outcome {
    let p = domain.params;
    state.nr_balance_failed += 1;
    if state.nr_balance_failed <= p.cache_nice_tries + 2 || !may_push {
        state.balance_interval_ms = p.min_interval_ms;
        return outcome;
    }
    if !m.running_allowed(busiest).contains(this_cpu) {
        // Its running task may not come here either: as if all pinned (the failure count
        // stays).
        return pinned(state, domain, outcome);
    }
    outcome.push_from = Some(busiest);
    state.stats.active += 1;
    if domain.rules == Rules::V6_6 && !runs_4_1(domain) {
        // 6.6 keeps the failures (the push itself clears them, once it has moved the
        // task), so the test that asked for it still holds, and the interval goes back to
        // its minimum (2021's "Reduce cases for active balance" and the patch that stopped
        // resetting the count).
        state.balance_interval_ms = p.min_interval_ms;
        return outcome;
    }
    // Backing off while the push is under way.
    state.nr_balance_failed = p.cache_nice_tries + 1;
    if state.balance_interval_ms < p.max_interval_ms {
        state.balance_interval_ms *= 2;
    }
    outcome
}

/// `out_balanced`: nothing to do, no failure counted; a periodic pass doubles its interval.
/// A newly-idle pass leaves it alone in 2.6.24 (`load_balance_newidle` has no such step)
/// and in 6.6 (newly-idle passes ignore the interval, so they would grow it fast); 2.6.36's
/// and 4.1's double it as a periodic pass does. The tasks that could move have had their
/// chance: the mark on the group above (`mark`, in the eras that keep one) is cleared — in
/// 6.6 unless every task looked at was pinned (`all_pinned`).
pub(super) fn balanced(
    state: &mut DomainState,
    domain: &Domain,
    why: IdleType,
    (all_pinned, mark): (bool, Option<(usize, CpuSet)>),
    m: &mut impl Machine,
    outcome: Outcome,
) -> Outcome {
    if let Some((level, group)) = mark
        && (!all_pinned || runs_4_1(domain))
    {
        m.mark_group_imbalanced(level, group, false);
    }
    state.stats.balanced[index(why)] += 1;
    state.nr_balance_failed = 0;
    if why != IdleType::NewlyIdle || domain.rules == Rules::V2_6_36 || runs_4_1(domain) {
        grow(state, domain, all_pinned);
    }
    outcome
}

/// `out_one_pinned`: as balanced, but the failure count is kept.
fn pinned(state: &mut DomainState, domain: &Domain, outcome: Outcome) -> Outcome {
    // Linux's `out_one_pinned` label is past `out_balanced`'s count: the pass stays a
    // failure only.
    grow(state, domain, true);
    outcome
}

fn grow(state: &mut DomainState, domain: &Domain, all_pinned: bool) {
    let i = state.balance_interval_ms;
    if (all_pinned && i < MAX_PINNED_INTERVAL_MS) || i < domain.params.max_interval_ms {
        state.balance_interval_ms = i * 2;
    }
}
