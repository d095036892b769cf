//! The policy's run-time knobs from task context (`sched::knobs`): what the files under
//! /proc/sys/kernel/ and /sys/kernel/ read and write. Each write takes effect at the policy's
//! next decision (the next tick, wake-up or switch), as a sysctl write does in Linux. Each
//! CPU's runqueue has its own policy instance; a write changes them all (a sysctl is one
//! value for the machine), and a read asks the running CPU's.

use super::with_sched;
use crate::time::clock;
use alloc::vec::Vec;
use sched::{FairParams, Feature, KnobError, Tunable};

/// The fair class's parameters now (`None` under O(1), which has no knobs).
pub fn fair_params() -> Option<FairParams> {
    with_sched(|s| s.this_rq().policy().fair_params().cloned())
}

/// Writes a tunable.
pub fn set_tunable(tunable: Tunable, value: u64) -> Result<(), KnobError> {
    // Every instance has the same parameters, so a value one refuses the first refuses,
    // before any has changed.
    with_sched(|s| {
        s.rqs
            .iter_mut()
            .try_for_each(|rq| rq.set_tunable(tunable, value))
    })
}

/// Turns a feature on or off. A switch of the balancer's (the Wasted Cores lab's) rebuilds
/// every CPU's domains at once, as at boot: the domains carry the switches they were built
/// with (their groups' construction among them), and start balancing afresh. `TTWU_QUEUE`
/// is the wakers' (`wakelist`), read at every wake-up.
pub fn set_feature(feature: Feature, on: bool) -> Result<(), KnobError> {
    with_sched(|s| {
        s.rqs
            .iter_mut()
            .try_for_each(|rq| rq.set_feature(feature, on))?;
        if feature.is_balancing() {
            s.build_balancer();
        }
        if feature == Feature::TtwuQueue {
            super::wakelist::set_enabled(on);
        }
        Ok(())
    })
}

/// Each uid group's weight (per-uid grouping only).
pub fn group_shares() -> Vec<(u32, u64)> {
    with_sched(|s| s.this_rq().policy().group_shares())
}

/// Gives uid `uid`'s group weight `shares` (clamped to Linux's bounds); the weight given.
pub fn set_group_shares(uid: u32, shares: u64) -> Result<u64, KnobError> {
    with_sched(|s| {
        let now = clock::now();
        let mut given = 0;
        for rq in s.rqs.iter_mut() {
            given = rq.set_group_shares(uid, shares, now)?;
        }
        Ok(given)
    })
}
