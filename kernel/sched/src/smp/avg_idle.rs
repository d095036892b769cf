//! How long a CPU's idle spells last (`rq->avg_idle`), and the newly-idle pass it lets a
//! CPU skip.
//!
//! A CPU about to idle balances first (`idle_balance`, `newidle_balance` in 6.x), and
//! pulling a task costs time and cache. A CPU whose idle spells are short will get work
//! back soon by itself, so late in 2009 Mike Galbraith's "sched: Rate-limit newidle" stopped
//! balancing on those: a wake-up onto an idle CPU measures the spell since it went idle
//! (`idle_stamp`), and a running average of those spells below
//! `sysctl_sched_migration_cost` (0.5 ms) skips the pass. (cfslab's 2.6.32 preset runs
//! 2.6.36's balancer, this rule included.)
//!
//! - **The average** (`update_avg`, at the wake-up in `try_to_wake_up`, `ttwu_do_wakeup`
//!   from 3.0): it moves an eighth of the way to each spell, and is capped at twice the
//!   migration cost — 2.6.36 sets it to the cap at once when a spell is longer; 4.1 and 6.6
//!   average first and then cap, against `2 × max_idle_balance_cost`, which starts at the
//!   migration cost and grows with the balancing costs the CPU measures. cfslab measures no
//!   cost: its cap stays 1 ms. It starts at the cap (`sched_init`).
//! - **The skip.** 2.6.36: the average below the migration cost. 4.1: the same, or no CPU
//!   of the root domain has two tasks (`rd->overload`: nothing to pull anyway, so cfslab
//!   does not model it). 5.16 dropped the migration cost from the test ("sched/fair: Remove
//!   sysctl_sched_migration_cost condition"): 6.6 skips only when the average is below the
//!   lowest domain's measured cost of a pass, which cfslab counts as nothing — so 6.6
//!   always balances a newly idle CPU that could pull. `NO_NEWIDLE_ON_SHORT_IDLE` gives 6.6's
//!   balancer 4.1's test back: one reason the Wasted Cores paper's Overload-on-Wakeup lasts
//!   (docs/wasted-cores.md).
//! - 2.6.24 has neither: every CPU about to idle balances.

use super::domains::Rules;
use super::move_tasks::MIGRATION_COST_NS;
use crate::features::{Feature, Features};
use crate::policy::Nanos;

/// Where the average starts, and its cap: twice the migration cost (cfslab's
/// `max_idle_balance_cost` is the migration cost: it measures no balancing cost).
pub const AVG_IDLE_MAX_NS: Nanos = 2 * MIGRATION_COST_NS;

/// The average after an idle spell of `spell` ns, in `rules`' era.
pub fn update(rules: Rules, avg: Nanos, spell: Nanos) -> Nanos {
    if rules == Rules::V2_6_36 && spell > AVG_IDLE_MAX_NS {
        return AVG_IDLE_MAX_NS;
    }
    // `update_avg`: an eighth of the difference, rounded toward minus infinity (a shift).
    let diff = spell as i64 - avg as i64;
    let moved = (avg as i64 + (diff >> 3)).max(0) as Nanos;
    moved.min(AVG_IDLE_MAX_NS)
}

/// Whether a CPU whose spells average `avg` skips its newly-idle pass, in `rules`' era with
/// the balancing switches `features`.
pub fn skips_newidle(rules: Rules, features: Features, avg: Nanos) -> bool {
    let short = avg < MIGRATION_COST_NS;
    match rules {
        Rules::V2_6_24 => false,
        Rules::V2_6_36 => short,
        Rules::V6_6 => short && !features.has(Feature::NewidleOnShortIdle),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_average_moves_an_eighth_of_the_way_and_stops_at_the_cap() {
        // From the cap (1 ms), a spell of 0.2 ms: 1 000 000 + (200 000 − 1 000 000) / 8
        // = 900 000. Eight more such spells: 900 000 → 812 500 → 735 937 → … each gap ⅞ of
        // the last; after n spells in all the gap is 800 000 × (7/8)^n, under 300 000 (the
        // average under 0.5 ms) from n = 8 on (800 000 × 0.3436 = 274 878).
        let mut avg = AVG_IDLE_MAX_NS;
        avg = update(Rules::V6_6, avg, 200_000);
        assert_eq!(avg, 900_000);
        for _ in 1..7 {
            avg = update(Rules::V6_6, avg, 200_000);
        }
        assert!(avg > MIGRATION_COST_NS, "{avg} after 7 spells");
        avg = update(Rules::V6_6, avg, 200_000);
        assert!(avg < MIGRATION_COST_NS, "{avg} after 8 spells");
        // A long spell moves it back up an eighth of the way, to the cap at most (4.1, 6.6);
        // 2.6.36 jumps to the cap.
        let up = update(Rules::V6_6, 300_000, 10_000_000);
        assert_eq!(up, AVG_IDLE_MAX_NS);
        assert_eq!(update(Rules::V6_6, 300_000, 1_100_000), 400_000);
        assert_eq!(update(Rules::V2_6_36, 300_000, 1_100_000), AVG_IDLE_MAX_NS);
        assert_eq!(update(Rules::V2_6_36, 300_000, 700_000), 350_000);
    }

    #[test]
    fn only_2_6_36_and_4_1_skip_a_short_idler_s_pass() {
        let modern = Features::of(&[Feature::NewidleOnShortIdle]);
        let linux_4_1 = Features::of(&[]);
        let short = MIGRATION_COST_NS - 1;
        assert!(!skips_newidle(Rules::V2_6_24, linux_4_1, short));
        assert!(skips_newidle(Rules::V2_6_36, modern, short));
        assert!(!skips_newidle(Rules::V2_6_36, modern, MIGRATION_COST_NS));
        assert!(skips_newidle(Rules::V6_6, linux_4_1, short));
        assert!(!skips_newidle(Rules::V6_6, modern, short));
        assert!(!skips_newidle(Rules::V6_6, linux_4_1, MIGRATION_COST_NS));
    }
}
