//! Era presets: the tunables and `sched_features` each Linux release shipped with
//! (docs/scheduler.md §0, §3.3, §11), plus cfslab's own features, and the overrides a user
//! applies on top (`features=`, `latency_ns=`, ...). All values are for one CPU: the
//! ×(1 + log2 ncpus) scaling of SMP kernels is factor 1 on a uniprocessor.

pub use crate::features::{Feature, Features};
use core::fmt;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

/// A Linux release whose scheduler a preset reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Era {
    /// CFS with FAIR_USER_SCHED: flat slices, no sleeper credit for groups.
    V2_6_24,
    /// Group entities earn sleeper credit (Vaddagiri's fix), wakeup granularity 5 ms.
    V2_6_25,
    /// Latency re-tuned down to 5 ms; hierarchical slices; GENTLE_FAIR_SLEEPERS.
    V2_6_32,
    /// 6 ms latency, 2 ms min granularity.
    V2_6_35,
    /// 0.75 ms min granularity, nr_latency 8 (seed 003's kernel).
    V2_6_36,
    /// EEVDF.
    V6_6,
}

impl Era {
    /// Every era with its `era=` name.
    pub const ALL: [(&'static str, Era); 6] = [
        ("2.6.24", Era::V2_6_24),
        ("2.6.25", Era::V2_6_25),
        ("2.6.32", Era::V2_6_32),
        ("2.6.35", Era::V2_6_35),
        ("2.6.36", Era::V2_6_36),
        ("6.6", Era::V6_6),
    ];

    /// The release number, e.g. "2.6.24".
    pub fn name(self) -> &'static str {
        Era::ALL
            .iter()
            .find(|(_, e)| *e == self)
            .map_or("?", |(n, _)| n)
    }

    /// The era named `name`.
    pub fn from_name(name: &str) -> Option<Era> {
        Era::ALL.iter().find(|(n, _)| *n == name).map(|(_, e)| *e)
    }

    /// Is this an EEVDF era (rather than CFS)?
    pub fn is_eevdf(self) -> bool {
        self == Era::V6_6
    }

    /// The tick rate the release shipped by default: 250 in every CFS and EEVDF era (the
    /// Kconfig default since 2.6.13, and Debian's today). Only 2.6.11, the O(1) scheduler's
    /// era, ticked at 1000 on x86 ([`crate::o1::HZ`]).
    pub fn default_hz(self) -> u32 {
        250
    }

    /// Slices computed per level (2.6.24/25) rather than down the hierarchy (2.6.26+).
    pub fn flat_slices(self) -> bool {
        self <= Era::V2_6_25
    }
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The tunables of the fair class (sysctl names, nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tunables {
    /// `sched_latency_ns`: the period in which every runnable task should run once.
    pub latency_ns: u64,
    /// `sched_min_granularity_ns`: the shortest slice.
    pub min_granularity_ns: u64,
    /// `sched_wakeup_granularity_ns`: how far ahead a wakee must be to preempt.
    pub wakeup_granularity_ns: u64,
    /// `sched_nr_latency`: tasks beyond which the period stretches (latency / min_gran at
    /// boot; Linux only recomputes it when a sysctl is written, cfslab likewise on override).
    pub nr_latency: u64,
    /// `sched_child_runs_first`.
    pub child_runs_first: bool,
    /// EEVDF's `sched_base_slice_ns`.
    pub base_slice_ns: u64,
}

/// Which tasks form a scheduling group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// One group per uid (FAIR_USER_SCHED, 2.6.24; USER_SCHED, 2.6.25–2.6.33).
    Uid,
    /// No groups: every task is an entity of the root runqueue.
    None,
}

/// The weight of the root user's group under per-uid grouping: Linux gave init_task_group
/// twice the default (2 × NICE_0_LOAD) while USER_SCHED existed (up to 2.6.33).
pub fn root_user_shares(era: Era) -> u64 {
    if era <= Era::V2_6_32 { 2048 } else { 1024 }
}

/// Everything that decides how the fair class (CFS or EEVDF) behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FairParams {
    /// The Linux release whose behaviour to reproduce.
    pub era: Era,
    /// The tunables in force.
    pub tunables: Tunables,
    /// The features in force.
    pub features: Features,
    /// What tasks are grouped by.
    pub grouping: Grouping,
    /// Group weights by uid; uids not listed get 1024 (2048 for root, see
    /// [`root_user_shares`]).
    pub shares: alloc::vec::Vec<(u32, u64)>,
    /// The kernel's tick length (1 / HZ); EEVDF bounds lag by it.
    pub tick_ns: u64,
}

/// The `sched_features` each era shipped with (docs/scheduler.md §11), limited to those cfslab
/// models. 2.6.35 dropped the FAIR_SLEEPERS flag and always gave the credit; cfslab keeps the
/// flag on in those presets so that the credit can still be turned off.
fn era_features(era: Era) -> &'static [Feature] {
    use Feature::*;
    match era {
        Era::V2_6_24 => &[NewFairSleepers, WakeupPreempt, StartDebit],
        Era::V2_6_25 => &[
            NewFairSleepers,
            WakeupPreempt,
            StartDebit,
            GroupSleeperCredit,
        ],
        Era::V2_6_32 => &[
            FairSleepers,
            GentleFairSleepers,
            StartDebit,
            WakeupPreempt,
            AsymGran,
            AdaptiveGran,
            LastBuddy,
            GroupSleeperCredit,
        ],
        Era::V2_6_35 | Era::V2_6_36 => &[
            FairSleepers,
            GentleFairSleepers,
            StartDebit,
            WakeupPreempt,
            LastBuddy,
            GroupSleeperCredit,
        ],
        // TTWU_QUEUE has been on since 3.0. The balancer's: the two Wasted Cores bugs Linux fixed (4.9, 4.13), its 5.5
        // rework and 5.16's newly-idle pass; the paper's own fixes (LB_MIN_LOAD,
        // WAKE_LONGEST_IDLE) were never merged.
        Era::V6_6 => &[
            WakeupPreempt,
            PlaceLag,
            PlaceDeadlineInitial,
            RunToParity,
            LbGroupTypes,
            NumaGroupsFromSelf,
            HotplugKeepsNuma,
            NewidleOnShortIdle,
            TtwuQueue,
        ],
    }
}

/// The tunables each era shipped with on one CPU (docs/scheduler.md §0, §3.3).
fn era_tunables(era: Era) -> Tunables {
    // (latency, min_granularity, wakeup_granularity, nr_latency, child_runs_first)
    let (latency_ns, min_granularity_ns, wakeup_granularity_ns, nr_latency, child_runs_first) =
        match era {
            Era::V2_6_24 => (20 * MS, 4 * MS, 10 * MS, 5, true),
            Era::V2_6_25 => (20 * MS, 4 * MS, 5 * MS, 5, true),
            Era::V2_6_32 => (5 * MS, MS, MS, 5, false),
            Era::V2_6_35 => (6 * MS, 2 * MS, MS, 3, false),
            Era::V2_6_36 | Era::V6_6 => (6 * MS, 750 * US, MS, 8, false),
        };
    Tunables {
        latency_ns,
        min_granularity_ns,
        wakeup_granularity_ns,
        nr_latency,
        child_runs_first,
        base_slice_ns: 750 * US,
    }
}

impl FairParams {
    /// The preset of `era` with its default grouping (per-uid in 2.6.24 and 2.6.25).
    pub fn preset(era: Era) -> Self {
        let mut features = Features::of(era_features(era));
        // Linux gives a waking vfork parent the usual sleeper credit in every era.
        features.set(Feature::VforkSleeperCredit, true);
        FairParams {
            era,
            tunables: era_tunables(era),
            features,
            grouping: if era <= Era::V2_6_25 {
                Grouping::Uid
            } else {
                Grouping::None
            },
            shares: alloc::vec::Vec::new(),
            tick_ns: 1_000_000_000 / u64::from(era.default_hz()),
        }
    }

    /// Overrides the latency tunables as writing the sysctls would: nr_latency follows.
    pub fn set_latency(&mut self, latency_ns: Option<u64>, min_granularity_ns: Option<u64>) {
        if let Some(latency) = latency_ns {
            self.tunables.latency_ns = latency;
        }
        if let Some(min_gran) = min_granularity_ns {
            self.tunables.min_granularity_ns = min_gran;
        }
        if latency_ns.is_some() || min_granularity_ns.is_some() {
            let t = &mut self.tunables;
            t.nr_latency = t.latency_ns.div_ceil(t.min_granularity_ns.max(1)).max(1);
        }
    }

    /// The weight of uid `uid`'s group.
    pub fn shares_of(&self, uid: u32) -> u64 {
        self.shares.iter().find(|(u, _)| *u == uid).map_or_else(
            || {
                if uid == 0 {
                    root_user_shares(self.era)
                } else {
                    crate::weights::NICE_0_LOAD
                }
            },
            |&(_, w)| w,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_follow_the_version_map() {
        let p = FairParams::preset(Era::V2_6_24);
        assert_eq!(
            (
                p.tunables.latency_ns,
                p.tunables.min_granularity_ns,
                p.tunables.wakeup_granularity_ns
            ),
            (20 * MS, 4 * MS, 10 * MS)
        );
        assert!(p.tunables.child_runs_first);
        assert!(
            p.features.has(Feature::NewFairSleepers)
                && !p.features.has(Feature::GroupSleeperCredit)
        );
        assert_eq!(p.grouping, Grouping::Uid);
        let p = FairParams::preset(Era::V2_6_25);
        assert_eq!(p.tunables.wakeup_granularity_ns, 5 * MS);
        assert!(p.features.has(Feature::GroupSleeperCredit));
        let p = FairParams::preset(Era::V2_6_36);
        assert_eq!(
            (p.tunables.min_granularity_ns, p.tunables.nr_latency),
            (750 * US, 8)
        );
        assert!(!p.tunables.child_runs_first);
        assert_eq!(p.grouping, Grouping::None);
        assert_eq!(FairParams::preset(Era::V2_6_35).tunables.nr_latency, 3);
        assert!(
            FairParams::preset(Era::V2_6_32)
                .features
                .has(Feature::AsymGran)
        );
    }

    #[test]
    fn overriding_latency_recomputes_nr_latency() {
        let mut p = FairParams::preset(Era::V2_6_36);
        p.set_latency(None, Some(250 * US));
        assert_eq!(p.tunables.nr_latency, 24);
        p.set_latency(Some(7 * MS), None);
        assert_eq!(p.tunables.nr_latency, 28);
    }

    #[test]
    fn root_gets_double_shares_while_user_sched_existed() {
        let p = FairParams::preset(Era::V2_6_24);
        assert_eq!((p.shares_of(0), p.shares_of(1)), (2048, 1024));
        assert_eq!(FairParams::preset(Era::V2_6_36).shares_of(0), 1024);
    }

    #[test]
    fn names_round_trip() {
        for (name, era) in Era::ALL {
            assert_eq!(Era::from_name(name), Some(era));
        }
        for (name, feature) in Feature::ALL {
            assert_eq!(Feature::from_name(name), Some(feature));
            assert_eq!(feature.name(), name);
        }
        let mut f = Features::default();
        f.set(Feature::StartDebit, true);
        assert!(f.has(Feature::StartDebit) && !f.has(Feature::PlaceLag));
        f.set(Feature::StartDebit, false);
        assert_eq!(f, Features::default());
    }
}
