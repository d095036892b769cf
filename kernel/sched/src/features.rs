//! The scheduler features (Linux's `sched_features`, /sys/kernel/debug/sched_features):
//! each switch with the release that introduced or dropped it, and the set a policy runs
//! with. Which era ships which is `params.rs`'s business.

use core::fmt;

/// A scheduler feature, named as Linux's `sched_features` (or, for cfslab's additions, in
/// the same style). Which era honours which is said on each variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// 2.6.32–34: waking tasks are placed up to `sched_latency` before min_vruntime.
    FairSleepers,
    /// 2.6.24/25: the same credit under its older name.
    NewFairSleepers,
    /// 2.6.32+: the sleeper credit is halved.
    GentleFairSleepers,
    /// New tasks start one virtual slice after min_vruntime.
    StartDebit,
    /// A waking task may preempt the running one.
    WakeupPreempt,
    /// 2.6.32: wakeup granularity scaled by the wakee's weight (else the current task's).
    AsymGran,
    /// 2.6.30–2.6.34: the wakeup granularity shrinks once the running task has run longer
    /// than twice the wakee's average run between wake-ups (× nr_running).
    AdaptiveGran,
    /// 2.6.28+: prefer the wakee at the next pick (off by default).
    NextBuddy,
    /// 2.6.28+: give the CPU back to the task a wake-up preempted.
    LastBuddy,
    /// cfslab: group entities earn sleeper credit too (the Jan 2008 fix, 2.6.25+).
    GroupSleeperCredit,
    /// cfslab: past nr_latency tasks, shrink the granularities to latency / nr_running (the
    /// Sep 2010 RFC, see `fair::cfs::effective_granularity`).
    DynGranularity,
    /// cfslab: a new child starts no further right than the rightmost entity.
    ClampChildRightmost,
    /// cfslab: a vfork parent waking up gets the usual sleeper credit (as Linux does).
    VforkSleeperCredit,
    /// EEVDF: keep a task's lag across sleep.
    PlaceLag,
    /// EEVDF: a new task's first deadline is half a slice away.
    PlaceDeadlineInitial,
    /// EEVDF: the running task keeps the CPU until it has had its slice, while eligible.
    RunToParity,
    /// 5.5+: `find_busiest_group` sorts groups by type (spare capacity, fully busy,
    /// overloaded) before it weighs their loads. Off: 4.1's, which compares average loads —
    /// the Wasted Cores paper's Group Imbalance bug (docs/wasted-cores.md).
    LbGroupTypes,
    /// cfslab, the Wasted Cores paper's fix to Group Imbalance: with `NO_LB_GROUP_TYPES`,
    /// groups are compared by their least loaded CPU, not their average (off by default).
    LbMinLoad,
    /// 4.13+: a CPU builds its overlapping NUMA groups starting from itself. Off: 4.1's walk
    /// from the lowest CPU, every CPU's groups as CPU 0 sees them — the Scheduling Group
    /// Construction bug.
    NumaGroupsFromSelf,
    /// cfslab, the Wasted Cores paper's fix to Overload-on-Wakeup: a wakee whose previous
    /// CPU is busy goes to the CPU idle the longest, anywhere it may run (off by default,
    /// as in every Linux).
    WakeLongestIdle,
    /// 4.9+: a CPU brought back online keeps the NUMA levels. Off: 4.1's hotplug, after
    /// which the rebuilt domains stop at the node — the Missing Scheduling Domains bug.
    HotplugKeepsNuma,
    /// 5.16+: a CPU about to idle balances however short its idle spells have been. Off:
    /// 4.1's newly-idle pass, skipped while they average under the migration cost
    /// (`avg_idle`, `smp::avg_idle`) — why the Overload-on-Wakeup bug's overload lasts.
    NewidleOnShortIdle,
    /// 3.0+: a wake-up of a task whose CPU is another one is put on that CPU's wake list
    /// and finished there, by the reschedule IPI's handler (Linux's `ttwu_queue`), so that
    /// the waker never takes a remote runqueue's lock. Off: the waker takes it, as 2.6
    /// did. A mechanism of the kernel's: the simulator, which has no locks, runs the same
    /// either way.
    TtwuQueue,
}

impl Feature {
    /// Every feature with its name.
    pub const ALL: [(&'static str, Feature); 23] = [
        ("FAIR_SLEEPERS", Feature::FairSleepers),
        ("NEW_FAIR_SLEEPERS", Feature::NewFairSleepers),
        ("GENTLE_FAIR_SLEEPERS", Feature::GentleFairSleepers),
        ("START_DEBIT", Feature::StartDebit),
        ("WAKEUP_PREEMPT", Feature::WakeupPreempt),
        ("ASYM_GRAN", Feature::AsymGran),
        ("ADAPTIVE_GRAN", Feature::AdaptiveGran),
        ("NEXT_BUDDY", Feature::NextBuddy),
        ("LAST_BUDDY", Feature::LastBuddy),
        ("GROUP_SLEEPER_CREDIT", Feature::GroupSleeperCredit),
        ("DYN_GRANULARITY", Feature::DynGranularity),
        ("CLAMP_CHILD_RIGHTMOST", Feature::ClampChildRightmost),
        ("VFORK_SLEEPER_CREDIT", Feature::VforkSleeperCredit),
        ("PLACE_LAG", Feature::PlaceLag),
        ("PLACE_DEADLINE_INITIAL", Feature::PlaceDeadlineInitial),
        ("RUN_TO_PARITY", Feature::RunToParity),
        ("LB_GROUP_TYPES", Feature::LbGroupTypes),
        ("LB_MIN_LOAD", Feature::LbMinLoad),
        ("NUMA_GROUPS_FROM_SELF", Feature::NumaGroupsFromSelf),
        ("WAKE_LONGEST_IDLE", Feature::WakeLongestIdle),
        ("HOTPLUG_KEEPS_NUMA", Feature::HotplugKeepsNuma),
        ("NEWIDLE_ON_SHORT_IDLE", Feature::NewidleOnShortIdle),
        ("TTWU_QUEUE", Feature::TtwuQueue),
    ];

    /// The feature's name, e.g. "START_DEBIT".
    pub fn name(self) -> &'static str {
        Feature::ALL
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("?", |(n, _)| n)
    }

    /// The feature named `name` (without a `NO_` prefix).
    pub fn from_name(name: &str) -> Option<Feature> {
        Feature::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
    }

    /// Which fair policies honour the feature: CFS's placement, granularity and buddy
    /// features mean nothing to EEVDF (6.6 removed them), and EEVDF's lag and deadline
    /// features did not exist in CFS. WAKEUP_PREEMPT is in both. The load balancer's
    /// switches (the Wasted Cores lab's) act on 6.6's balancer, which only EEVDF runs, and
    /// the CFS eras are 2.6's, before the wake list (3.0).
    pub fn applies_to(self, eevdf: bool) -> bool {
        use Feature::*;
        match self {
            WakeupPreempt => true,
            PlaceLag | PlaceDeadlineInitial | RunToParity | TtwuQueue => eevdf,
            _ if self.is_balancing() => eevdf,
            _ => !eevdf,
        }
    }

    /// The balancer switches that, all off, give Linux 4.1's behaviour inside 6.6's
    /// balancer: the mechanisms of the Wasted Cores paper's four bugs (docs/wasted-cores.md;
    /// Overload-on-Wakeup's are two, the wake-up's placement and the skipped newly-idle pass).
    pub const LINUX_4_1_OFF: [Feature; 5] = [
        Feature::LbGroupTypes,
        Feature::NumaGroupsFromSelf,
        Feature::WakeLongestIdle,
        Feature::HotplugKeepsNuma,
        Feature::NewidleOnShortIdle,
    ];

    /// A switch of the load balancer's or the wake-up placement's, not of one CPU's
    /// policy: the Wasted Cores lab's four bugs and their fixes.
    pub fn is_balancing(self) -> bool {
        use Feature::*;
        matches!(
            self,
            LbGroupTypes
                | LbMinLoad
                | NumaGroupsFromSelf
                | WakeLongestIdle
                | HotplugKeepsNuma
                | NewidleOnShortIdle
        )
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// A set of features (Linux's `sysctl_sched_features` bitmask).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Features(u32);

impl Features {
    /// The set holding `features`.
    pub fn of(features: &[Feature]) -> Self {
        Features(features.iter().fold(0, |bits, f| bits | f.bit()))
    }

    /// Is `feature` set (Linux's `sched_feat()`)?
    pub fn has(self, feature: Feature) -> bool {
        self.0 & feature.bit() != 0
    }

    /// Sets (`on`) or clears a feature.
    pub fn set(&mut self, feature: Feature, on: bool) {
        if on {
            self.0 |= feature.bit();
        } else {
            self.0 &= !feature.bit();
        }
    }
}

impl fmt::Debug for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_set();
        for (name, feature) in Feature::ALL {
            if self.has(feature) {
                list.entry(&name);
            }
        }
        list.finish()
    }
}
