//! What a domain's balancing passes count, as Linux's schedstats keep them per domain
//! (`struct sched_domain`'s `lb_*` and `alb_*` fields, CONFIG_SCHEDSTATS) and print in
//! `/proc/schedstat`'s version-15 domain lines: per kind of pass — idle at the tick, busy,
//! newly idle — how many ran, found the domain balanced, failed, the imbalance they found,
//! the tasks they pulled, and why they found nothing to pull from.

use super::busiest::IdleType;

/// A domain's counters, each kind of pass in [`IdleType`]'s order as Linux prints them
/// (`CPU_IDLE`, `CPU_NOT_IDLE`, `CPU_NEWLY_IDLE`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DomainStats {
    /// Passes (`lb_count`).
    pub count: [u64; 3],
    /// Passes that found the domain balanced (`lb_balanced`).
    pub balanced: [u64; 3],
    /// Passes that found an imbalance and moved nothing (`lb_failed`).
    pub failed: [u64; 3],
    /// The imbalances found, summed (`lb_imbalance`, in load units).
    pub imbalance: [u64; 3],
    /// Tasks pulled (`lb_gained`).
    pub gained: [u64; 3],
    /// Cache-hot tasks pulled anyway (`lb_hot_gained`; not counted: 0).
    pub hot_gained: [u64; 3],
    /// Passes whose busiest group had no queue to pull from (`lb_nobusyq`).
    pub no_busy_queue: [u64; 3],
    /// Passes that found no busiest group (`lb_nobusyg`).
    pub no_busy_group: [u64; 3],
    /// Active balances asked for (`alb_count`).
    pub active: u64,
}

/// The index of a kind of pass in the counters.
pub fn index(why: IdleType) -> usize {
    match why {
        IdleType::Idle => 0,
        IdleType::NotIdle => 1,
        IdleType::NewlyIdle => 2,
    }
}

impl DomainStats {
    /// The 36 numbers of a version-15 domain line after its CPU mask: the eight `lb_*`
    /// counters for each kind of pass, then `alb_count`, `alb_failed`, `alb_pushed`, the
    /// exec, fork and wake-up balancing counters (`sbe_*`, `sbf_*`, `ttwu_*`: not counted,
    /// 0 — cfslab's placement keeps no statistics yet).
    pub fn v15_fields(&self) -> [u64; 36] {
        let mut f = [0; 36];
        for i in 0..3 {
            let per_kind = [
                self.count[i],
                self.balanced[i],
                self.failed[i],
                self.imbalance[i],
                self.gained[i],
                self.hot_gained[i],
                self.no_busy_queue[i],
                self.no_busy_group[i],
            ];
            f[i * 8..i * 8 + 8].copy_from_slice(&per_kind);
        }
        f[24] = self.active;
        f
    }
}
