//! The fair class's run-time knobs, as Linux lets root turn them while tasks run: the
//! sysctls (`/proc/sys/kernel/sched_*_ns`, CONFIG_SCHED_DEBUG), the feature bits
//! (`/sys/kernel/debug/sched_features`, 2.6.26+) and a uid group's weight
//! (`/sys/kernel/uids/UID/cpu_share`, 2.6.24's FAIR_USER_SCHED). Their names and bounds are
//! Linux's, written once here for both the boot options (`latency_ns=...`) and the files.
//!
//! What this module does not do: parse text or check who writes. The kernel's file layer
//! turns "NO_START_DEBIT\n" into a call here, and answers EACCES to non-root writers.

use crate::params::{FairParams, Tunables};
use core::ops::RangeInclusive;

/// A tunable of the fair class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tunable {
    /// `sched_latency_ns`: the period in which every runnable task runs once (CFS).
    Latency,
    /// `sched_min_granularity_ns`: the shortest slice (CFS).
    MinGranularity,
    /// `sched_wakeup_granularity_ns`: how far ahead a wakee must be to preempt (CFS).
    WakeupGranularity,
    /// `sched_base_slice_ns`: every task's request (EEVDF). 6.6 moved it to debugfs
    /// (`/sys/kernel/debug/sched/base_slice_ns`); cfslab keeps it beside the others.
    BaseSlice,
}

/// The shortest and longest slice tunables Linux's sysctl table accepts
/// (`min_sched_granularity_ns`, `max_sched_granularity_ns` in kernel/sysctl.c, 2.6.24 to
/// 2.6.36): 100 µs and one second.
const GRANULARITY_NS: RangeInclusive<u64> = 100_000..=1_000_000_000;

/// `min_wakeup_granularity_ns` and `max_wakeup_granularity_ns`: zero (every wake-up may
/// preempt) to one second.
const WAKEUP_GRANULARITY_NS: RangeInclusive<u64> = 0..=1_000_000_000;

/// Linux's MIN_SHARES and MAX_SHARES: the weights a task group may have. 2.6.24 raised a
/// weight below 2 to 2 ("a weight of 0 or 1 can cause arithmetics problems"); 2.6.36 clamps
/// to both ends.
pub const SHARES: RangeInclusive<u64> = 2..=(1 << 18);

impl Tunable {
    /// Every tunable.
    pub const ALL: [Tunable; 4] = [
        Tunable::Latency,
        Tunable::MinGranularity,
        Tunable::WakeupGranularity,
        Tunable::BaseSlice,
    ];

    /// Its name as a boot option (the sysctl's without the `sched_` prefix).
    pub fn option_name(self) -> &'static str {
        &self.sysctl_name()["sched_".len()..]
    }

    /// Its file name under `/proc/sys/kernel/`.
    pub fn sysctl_name(self) -> &'static str {
        match self {
            Tunable::Latency => "sched_latency_ns",
            Tunable::MinGranularity => "sched_min_granularity_ns",
            Tunable::WakeupGranularity => "sched_wakeup_granularity_ns",
            Tunable::BaseSlice => "sched_base_slice_ns",
        }
    }

    /// The tunable whose file is `name`.
    pub fn from_sysctl_name(name: &str) -> Option<Tunable> {
        Tunable::ALL.into_iter().find(|t| t.sysctl_name() == name)
    }

    /// The values Linux accepts; others are refused (EINVAL from the file).
    pub fn bounds(self) -> RangeInclusive<u64> {
        match self {
            Tunable::WakeupGranularity => WAKEUP_GRANULARITY_NS,
            _ => GRANULARITY_NS,
        }
    }

    /// Does the policy (EEVDF or CFS) have it? 6.6 replaced the three CFS tunables with the
    /// base slice.
    pub fn applies_to(self, eevdf: bool) -> bool {
        (self == Tunable::BaseSlice) == eevdf
    }

    /// Its value in `tunables`.
    pub fn get(self, tunables: &Tunables) -> u64 {
        match self {
            Tunable::Latency => tunables.latency_ns,
            Tunable::MinGranularity => tunables.min_granularity_ns,
            Tunable::WakeupGranularity => tunables.wakeup_granularity_ns,
            Tunable::BaseSlice => tunables.base_slice_ns,
        }
    }
}

/// Why a knob was not turned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnobError {
    /// The value is outside Linux's bounds.
    OutOfRange,
    /// The running policy has no such knob (a CFS tunable under EEVDF, any under O(1),
    /// group shares without per-uid groups).
    NotThisPolicy,
}

impl FairParams {
    /// Writes a tunable as its sysctl does: within its bounds, and for this policy only.
    /// Writing the latency or the minimum granularity recomputes `nr_latency`, as 2.6.36's
    /// `sched_proc_update_handler` does.
    pub fn set_tunable(&mut self, tunable: Tunable, value: u64) -> Result<(), KnobError> {
        if !tunable.applies_to(self.era.is_eevdf()) {
            return Err(KnobError::NotThisPolicy);
        }
        if !tunable.bounds().contains(&value) {
            return Err(KnobError::OutOfRange);
        }
        match tunable {
            Tunable::Latency => self.set_latency(Some(value), None),
            Tunable::MinGranularity => self.set_latency(None, Some(value)),
            Tunable::WakeupGranularity => self.tunables.wakeup_granularity_ns = value,
            Tunable::BaseSlice => self.tunables.base_slice_ns = value,
        }
        Ok(())
    }

    /// Records `shares` (clamped to [`SHARES`], as Linux clamps) as uid `uid`'s group weight;
    /// returns the weight recorded.
    pub fn set_shares(&mut self, uid: u32, shares: u64) -> u64 {
        let shares = shares.clamp(*SHARES.start(), *SHARES.end());
        self.shares.retain(|&(u, _)| u != uid);
        self.shares.push((uid, shares));
        shares
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Era;

    #[test]
    fn tunables_keep_linux_bounds_and_names() {
        let mut p = FairParams::preset(Era::V2_6_36);
        assert_eq!(
            p.set_tunable(Tunable::Latency, 99_999),
            Err(KnobError::OutOfRange)
        );
        assert_eq!(
            p.set_tunable(Tunable::Latency, 1_000_000_001),
            Err(KnobError::OutOfRange)
        );
        assert_eq!(p.set_tunable(Tunable::WakeupGranularity, 0), Ok(()));
        assert_eq!(
            p.set_tunable(Tunable::BaseSlice, 3_000_000),
            Err(KnobError::NotThisPolicy)
        );
        // 12 ms over 0.75 ms: nr_latency follows the write, 16.
        assert_eq!(p.set_tunable(Tunable::Latency, 12_000_000), Ok(()));
        assert_eq!(
            (p.tunables.latency_ns, p.tunables.nr_latency),
            (12_000_000, 16)
        );
        let mut e = FairParams::preset(Era::V6_6);
        assert_eq!(e.set_tunable(Tunable::BaseSlice, 3_000_000), Ok(()));
        assert_eq!(e.tunables.base_slice_ns, 3_000_000);
        assert_eq!(
            e.set_tunable(Tunable::Latency, 6_000_000),
            Err(KnobError::NotThisPolicy)
        );
        for t in Tunable::ALL {
            assert_eq!(Tunable::from_sysctl_name(t.sysctl_name()), Some(t));
        }
        assert_eq!(Tunable::Latency.option_name(), "latency_ns");
    }

    #[test]
    fn shares_are_clamped_as_linux_clamps_them() {
        let mut p = FairParams::preset(Era::V2_6_24);
        assert_eq!(p.set_shares(1000, 0), 2);
        assert_eq!(p.set_shares(1000, 1 << 20), 1 << 18);
        assert_eq!(p.set_shares(1000, 512), 512);
        assert_eq!(p.shares_of(1000), 512);
    }
}
