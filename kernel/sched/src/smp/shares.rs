//! A group's shares split across CPUs, as 2.6.27–2.6.37 split them (`update_shares`,
//! `tg_shares_up`, `update_group_shares_cpu`, kernel/sched.c), and the hierarchical load
//! the balancer reads through them (`update_h_load`).
//!
//! In 2.6.24–2.6.26 a group's entity weighs the group's full shares on *every* CPU where
//! the group has tasks: a user whose tasks spread over two CPUs weighs twice as much as one
//! whose task stays on one (the era's known unfairness; docs/scheduler.md §16). From
//! 2.6.27 a balancing pass first splits each group's shares between the CPUs of the domain
//! it balances, in proportion to the weight of the group's tasks on each:
//!
//! ```text
//! shares_i = pool × weight_i / Σ weight        (weight_i: the group's tasks on CPU i)
//! ```
//!
//! - The pool is the shares the span's CPUs hold now, at most the group's shares — all of
//!   them at the top-level domain — so a lower level only redistributes what its CPUs
//!   already have.
//! - A CPU where the group has no task is *boosted*: it is given the share of a nice-0 task
//!   (weight 1024 in the formula), so that a task waking there is not starved before the
//!   next split; it holds no shares of the pool (0), so the balancer sees no load there.
//!   2.6.28–2.6.32 count the boost in the sum too; 2.6.33–2.6.37 leave it out unless the
//!   group has no task at all in the span.
//! - A share is clamped to [2, 2^18] (`MIN_SHARES`, `MAX_SHARES`), and a CPU's entity is
//!   reweighted only when the new share differs from its weight by more than 4
//!   (`sysctl_sched_shares_thresh`), which spares the runqueue locks.
//! - A domain's split runs at most once per `sysctl_sched_shares_ratelimit` (0.25 ms ×
//!   the CPU-count factor).
//!
//! 2.6.38 replaced the split at balancing by one at every enqueue and tick from windowed
//! load averages, and 3.8 by one from PELT. 6.6 reweights a group's entity on a CPU
//! whenever its runqueue there is enqueued to, dequeued from or ticked
//! (`calc_group_shares`, in `fair::load_avg`): the CPU's part is its runqueue's load over
//! the group's total, each read as PELT's average (`pelt`) — or the weight queued now, if
//! that is more, so that a CPU the group just reached is not starved while its average
//! grows.

use crate::params::Era;
use alloc::vec::Vec;

/// `MIN_SHARES`: the least weight a group's entity takes on a CPU.
pub const MIN_SHARES: u64 = *crate::knobs::SHARES.start();
/// `MAX_SHARES`.
pub const MAX_SHARES: u64 = *crate::knobs::SHARES.end();
/// `sysctl_sched_shares_thresh`: a CPU's entity is reweighted only when its share moves by
/// more than this.
pub const SHARES_THRESH: u64 = 4;
/// `sysctl_sched_shares_ratelimit` before scaling, in ns.
pub const SHARES_RATELIMIT_NS: u64 = 250_000;
/// `NICE_0_LOAD`: the weight a boosted CPU stands for.
const NICE_0_LOAD: u64 = 1024;

/// How an era gives a group's shares to its CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharesSplit {
    /// 2.6.24–2.6.26: the full shares on every CPU.
    Full,
    /// 2.6.27–2.6.37: split at each balancing pass (`tg_shares_up`); whether a boosted
    /// CPU's 1024 counts in the sum (2.6.28–2.6.32) or not (2.6.33–).
    AtBalance {
        /// The boost counts in the sum.
        boost_in_sum: bool,
    },
    /// 6.6: each CPU's queues weigh their group's entity themselves at every update, from
    /// their load average against the group's over every CPU (`calc_group_shares`,
    /// `fair::load_avg`); the balancer reads loads as those averages.
    FromLoadAvg,
}

impl SharesSplit {
    /// The split of `era` (`None`: an era without a fair class's groups to split).
    pub fn of(era: Era) -> Option<SharesSplit> {
        match era {
            Era::V2_6_24 | Era::V2_6_25 => Some(SharesSplit::Full),
            Era::V2_6_32 => Some(SharesSplit::AtBalance { boost_in_sum: true }),
            Era::V2_6_35 | Era::V2_6_36 => Some(SharesSplit::AtBalance {
                boost_in_sum: false,
            }),
            Era::V6_6 => Some(SharesSplit::FromLoadAvg),
        }
    }

    /// Whether the balancer looks again over the busiest CPU's tasks while it moves
    /// something (2.6.34's loop in `move_tasks`): of the eras with split shares, all but
    /// 2.6.32's — the one that counts the boost in the sum.
    pub fn repeats_look(self) -> bool {
        self == SharesSplit::AtBalance {
            boost_in_sum: false,
        }
    }

    /// Whether a CPU's load is its tasks' weight (2.6.24–2.6.26's `rq->load`, bumped per
    /// task) rather than its top-level entities' (from 2.6.27, where a group counts with
    /// its share).
    pub fn load_is_tasks(self) -> bool {
        self == SharesSplit::Full
    }
}

/// `sysctl_sched_shares_ratelimit` on `cpus` CPUs: scaled by 1 + log2 of the CPU count
/// — up to 8 CPUs from 2.6.33 (`update_sysctl`), without a cap in 2.6.32
/// (`sched_init_granularity`).
pub fn ratelimit_ns(split: SharesSplit, cpus: usize) -> u64 {
    let cap = match split {
        SharesSplit::AtBalance { boost_in_sum: true } => usize::MAX,
        _ => 8,
    };
    let factor = 1 + u64::from(cpus.clamp(1, cap).ilog2());
    SHARES_RATELIMIT_NS * factor
}

/// A group's state over a domain's CPUs, for [`split`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupSpan {
    /// The group's uid.
    pub uid: crate::policy::Uid,
    /// Its shares as set (`tg->shares`).
    pub shares: u64,
    /// Each CPU of the span.
    pub on: Vec<GroupOnCpu>,
}

/// One group on one CPU of the span, as the split reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupOnCpu {
    /// The CPU.
    pub cpu: usize,
    /// The weight of the group's tasks queued there (its `cfs_rq->load.weight`).
    pub weight: u64,
    /// The part of the group's shares the CPU holds (`cfs_rq->shares`; 0 when boosted).
    pub shares: u64,
    /// The weight of the group's entity there now.
    pub entity_weight: u64,
}

/// What the split gives one CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// The CPU.
    pub cpu: usize,
    /// The weight its entity takes.
    pub entity_weight: u64,
    /// The part of the pool it holds (0 when boosted).
    pub shares: u64,
    /// The weight the group had queued there (`cfs_rq->rq_weight`; 0 when boosted).
    pub rq_weight: u64,
}

/// `tg_shares_up` for one group of `tg_shares` over a domain's CPUs `on`; `top_level` when
/// the domain has no balancing parent. Returns the CPUs whose entity is to be reweighted
/// (those whose share moved by more than [`SHARES_THRESH`]).
pub fn split(split: SharesSplit, tg_shares: u64, top_level: bool, on: &[GroupOnCpu]) -> Vec<Share> {
    let SharesSplit::AtBalance { boost_in_sum } = split else {
        return Vec::new();
    };
    let boosted = |w: u64| if w == 0 { NICE_0_LOAD } else { w };
    let raw: u64 = on.iter().map(|g| g.weight).sum();
    let with_boosts: u64 = on.iter().map(|g| boosted(g.weight)).sum();
    let sum = if boost_in_sum || raw == 0 {
        with_boosts
    } else {
        raw
    };
    let held: u64 = on.iter().map(|g| g.shares).sum();
    let pool = if top_level || held == 0 || held > tg_shares {
        tg_shares
    } else {
        held
    };
    on.iter()
        .filter_map(|g| {
            let s = (pool * boosted(g.weight) / sum).clamp(MIN_SHARES, MAX_SHARES);
            (s.abs_diff(g.entity_weight) > SHARES_THRESH).then_some(Share {
                cpu: g.cpu,
                entity_weight: s,
                shares: if g.weight == 0 { 0 } else { s },
                rq_weight: g.weight,
            })
        })
        .collect()
}

/// `update_h_load` for a group on one CPU: its load as the root sees it — the CPU's load
/// (`root_load`, its top-level entities) in the proportion the group's share is of it.
pub fn h_load(root_load: u64, shares: u64) -> u64 {
    root_load * shares / (root_load + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(cpu: usize, weight: u64, shares: u64) -> GroupOnCpu {
        GroupOnCpu {
            cpu,
            weight,
            shares,
            entity_weight: if shares == 0 { 1024 } else { shares },
        }
    }

    const LATE: SharesSplit = SharesSplit::AtBalance {
        boost_in_sum: false,
    };

    #[test]
    fn four_tasks_three_here_one_there_split_the_shares_three_to_one() {
        // 1024 × 3072 / 4096 = 768 and 1024 × 1024 / 4096 = 256.
        let got = split(LATE, 1024, true, &[on(0, 3072, 1024), on(1, 1024, 1024)]);
        let weights: Vec<(usize, u64)> = got.iter().map(|s| (s.cpu, s.entity_weight)).collect();
        assert_eq!(weights, [(0, 768), (1, 256)]);
    }

    #[test]
    fn an_empty_cpu_is_boosted_and_holds_nothing() {
        // 2.6.33–: the sum is the tasks' 2048 alone; the empty CPU's entity gets
        // 1024 × 1024 / 2048 = 512 but holds no shares. 2.6.32 counts the boost:
        // 1024 × 2048 / 3072 = 682 and 1024 × 1024 / 3072 = 341.
        let cpus = [on(0, 2048, 600), on(1, 0, 0)];
        let late = split(LATE, 1024, true, &cpus);
        assert_eq!(late[0].entity_weight, 1024 * 2048 / 2048);
        assert!(late.len() == 2 && late[1].entity_weight == 512 && late[1].shares == 0);
        let early = split(
            SharesSplit::AtBalance { boost_in_sum: true },
            1024,
            true,
            &cpus,
        );
        assert_eq!((early[0].entity_weight, early[1].entity_weight), (682, 341));
    }

    #[test]
    fn small_moves_are_left_and_a_lower_level_shares_only_its_pool() {
        // 1024 × 1030 / 2054 = 513: within 4 of 512, so CPU 0 is left alone; CPU 1's 600
        // becomes 1024 × 1024 / 2054 = 510.
        let got = split(LATE, 1024, true, &[on(0, 1030, 512), on(1, 1024, 600)]);
        assert_eq!(got.iter().map(|s| s.cpu).collect::<Vec<_>>(), [1]);
        // Below the top, the pool is what the span holds: 300 of the 1024, split evenly.
        let got = split(LATE, 1024, false, &[on(0, 1024, 100), on(1, 1024, 200)]);
        assert_eq!(
            got.iter().map(|s| s.entity_weight).collect::<Vec<_>>(),
            [150, 150]
        );
    }

    #[test]
    fn before_2_6_27_nothing_is_split() {
        assert!(split(SharesSplit::Full, 1024, true, &[on(0, 3072, 1024)]).is_empty());
        assert!(SharesSplit::of(Era::V2_6_24).unwrap().load_is_tasks());
        assert!(!SharesSplit::of(Era::V2_6_36).unwrap().load_is_tasks());
    }

    #[test]
    fn the_ratelimit_grows_with_the_log_of_the_cpus() {
        let early = SharesSplit::AtBalance { boost_in_sum: true };
        assert_eq!(ratelimit_ns(LATE, 1), 250_000);
        assert_eq!(ratelimit_ns(LATE, 2), 500_000);
        assert_eq!(ratelimit_ns(LATE, 64), 1_000_000);
        assert_eq!(ratelimit_ns(early, 64), 1_750_000);
    }

    #[test]
    fn a_group_is_seen_from_the_root_in_proportion_to_its_share() {
        // A CPU of load 1280 (a 1024 group and a 256 group): the 256 group is 256 of it.
        assert_eq!(h_load(1280, 256), 255);
    }
}
