//! When a CPU balances each of its domains (`rebalance_domains` at the tick,
//! `idle_balance` before it idles, kernel/sched.c of 2.6.24 and their heirs): the walk
//! bottom up, each domain's interval in jiffies, and where a walk stops.

use super::{DomainState, Machine, Outcome, load_balance};
use crate::policy::TaskId;
use crate::smp::busiest::IdleType;
use crate::smp::domains::{Domain, Flags, Rules};
use alloc::vec::Vec;

/// The jiffies of a domain's interval (`rebalance_domains`): `balance_interval`, times its
/// `busy_factor` for a busy CPU, in jiffies of `hz` rounded up, at least one, at most
/// `hz × nr_cpus / 10` (`NR_CPUS`, the kernel's configured count).
pub fn interval_jiffies(
    state: &DomainState,
    domain: &Domain,
    busy: bool,
    hz: u64,
    nr_cpus: u64,
) -> u64 {
    let mut ms = state.balance_interval_ms;
    if busy {
        ms *= domain.params.busy_factor;
    }
    let jiffies = (ms * hz).div_ceil(1000).max(1);
    jiffies.min(hz * nr_cpus / 10)
}

/// `rebalance_domains`: `cpu`'s periodic pass at tick `jiffies`, idle at the tick or not.
/// Each domain whose interval has passed is balanced, bottom up; once a pass pulls
/// something the CPU counts as busy for the levels above, and once another CPU of its
/// group is the balancer the walk stops. Returns the passes' outcomes and the jiffy at
/// which the next domain is due (`rq->next_balance`).
#[allow(clippy::too_many_arguments)]
pub fn rebalance_domains(
    cpu: usize,
    idle_at_tick: bool,
    jiffies: u64,
    domains: &[Domain],
    states: &mut [DomainState],
    hz: u64,
    nr_cpus: u64,
    m: &mut impl Machine,
) -> (Vec<Outcome>, u64) {
    let mut why = if idle_at_tick {
        IdleType::Idle
    } else {
        IdleType::NotIdle
    };
    let mut next_balance = jiffies + 60 * hz;
    let mut outcomes = Vec::new();
    for (i, (d, st)) in domains.iter().zip(states.iter_mut()).enumerate() {
        if !d.params.flags.has(Flags::LOAD_BALANCE) {
            continue;
        }
        let interval = interval_jiffies(st, d, why != IdleType::Idle, hz, nr_cpus);
        let mut stop = false;
        if jiffies >= st.last_balance + interval {
            let o = load_balance(st, d, domains.get(i + 1), cpu, why, m);
            if o.moved_here {
                // Busy now — unless all it moved went to another CPU of its group (4.1's
                // and 6.6's retry): as Linux, which asks again whether the CPU is idle.
                why = IdleType::NotIdle;
            }
            st.last_balance = jiffies;
            stop = o.not_the_balancer;
            outcomes.push(o);
        }
        next_balance = next_balance.min(st.last_balance + interval);
        if stop {
            break;
        }
    }
    (outcomes, next_balance)
}

/// `idle_balance`: `cpu` is about to go idle; it balances its domains with
/// SD_BALANCE_NEWIDLE, bottom up, until one gives it a task. In 2.6.24 a lowest balancing
/// domain without the flag ends the walk at once; later, it is passed over. Returns what
/// was pulled.
pub fn idle_balance(
    cpu: usize,
    domains: &[Domain],
    states: &mut [DomainState],
    m: &mut impl Machine,
) -> Option<(usize, Vec<TaskId>)> {
    for (i, (d, st)) in domains.iter().zip(states.iter_mut()).enumerate() {
        if !d.params.flags.has(Flags::LOAD_BALANCE) {
            continue;
        }
        if !d.params.flags.has(Flags::BALANCE_NEWIDLE) {
            // 2.6.24 starts with "pulled = −1", which ends the walk here; from 2.6.36 the
            // walk goes on to the levels above.
            if d.rules == Rules::V2_6_24 {
                return None;
            }
            continue;
        }
        let o = load_balance(st, d, domains.get(i + 1), cpu, IdleType::NewlyIdle, m);
        if o.moved {
            return o.pulled;
        }
        // A task came here meanwhile: the CPU will not idle (Linux from 3.x ends the walk on
        // `this_rq->nr_running`; it held this CPU's runqueue through most of a pass before,
        // as cfslab's simulator does, where nothing comes).
        if m.has_work(cpu) {
            return None;
        }
    }
    None
}
