//! Load weights: how nice levels become shares of the CPU, and how wall-clock time becomes
//! virtual time. Mirrors `prio_to_weight[]`, `prio_to_wmult[]`, `calc_delta_mine()` and
//! `calc_delta_fair()` of Linux 2.6.24–2.6.36 (kernel/sched.c, kernel/sched_fair.c).
//!
//! Each nice step changes the weight by about 1.25×, so that one nice level is about 10% of
//! CPU between two neighbours: nice 0 against nice 5 gets 1024 / (1024 + 335) = 75.3%.

/// The weight of a nice-0 task (Linux's NICE_0_LOAD / SCHED_LOAD_SCALE).
pub const NICE_0_LOAD: u64 = 1024;

/// 64-bit Linux keeps weights with 10 more bits of resolution than the table (since 4.7,
/// `scale_load`), and its debug files print them so: a nice-0 task weighs 1 048 576 there.
/// cfslab computes with the table's values, as the eras it mirrors did, and scales only
/// what it prints.
pub fn scale_load(weight: u64) -> u64 {
    weight << 10
}

/// A nice value, −20 (most CPU) to 19 (least).
pub type Nice = i8;

/// Weight per nice level, index `nice + 20` (Linux's `prio_to_weight`, bit-exact).
pub const PRIO_TO_WEIGHT: [u32; 40] = [
    88761, 71755, 56483, 46273, 36291, // −20 … −16
    29154, 23254, 18705, 14949, 11916, // −15 … −11
    9548, 7620, 6100, 4904, 3906, // −10 … −6
    3121, 2501, 1991, 1586, 1277, // −5 … −1
    1024, 820, 655, 526, 423, // 0 … 4
    335, 272, 215, 172, 137, // 5 … 9
    110, 87, 70, 56, 45, // 10 … 14
    36, 29, 23, 18, 15, // 15 … 19
];

/// 2^32 / weight per nice level (Linux's `prio_to_wmult`, bit-exact), so that dividing by a
/// weight becomes a multiplication and a shift.
pub const PRIO_TO_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, // −20 … −16
    147320, 184698, 229616, 287308, 360437, // −15 … −11
    449829, 563644, 704093, 875809, 1099582, // −10 … −6
    1376151, 1717300, 2157191, 2708050, 3363326, // −5 … −1
    4194304, 5237765, 6557202, 8165337, 10153587, // 0 … 4
    12820798, 15790321, 19976592, 24970740, 31350126, // 5 … 9
    39045157, 49367440, 61356676, 76695844, 95443717, // 10 … 14
    119304647, 148102320, 186737708, 238609294, 286331153, // 15 … 19
];

/// The lowest (most CPU) nice value.
pub const NICE_MIN: Nice = -20;
/// The highest (least CPU) nice value.
pub const NICE_MAX: Nice = 19;

/// The load weight of a task at `nice` (clamped to −20..=19).
pub fn nice_to_weight(nice: Nice) -> u64 {
    u64::from(PRIO_TO_WEIGHT[index(nice)])
}

/// The inverse weight (≈ 2^32 / weight) of a task at `nice`.
pub fn nice_to_wmult(nice: Nice) -> u64 {
    u64::from(PRIO_TO_WMULT[index(nice)])
}

fn index(nice: Nice) -> usize {
    (nice.clamp(NICE_MIN, NICE_MAX) + 20) as usize
}

/// `delta × weight / total`, exactly, with a 128-bit intermediate (so no overflow for any
/// u64 inputs); `total` 0 is treated as 1.
///
/// Linux's `calc_delta_mine()` computes the same quotient through a 32-bit inverse of
/// `total` and a split shift, which differs from the exact value by at most about one
/// nanosecond per call (docs/scheduler.md §1.2); cfslab keeps the exact form because a reader
/// can check it by hand.
pub fn scale(delta: u64, weight: u64, total: u64) -> u64 {
    let q = u128::from(delta) * u128::from(weight) / u128::from(total.max(1));
    u64::try_from(q).unwrap_or(u64::MAX)
}

/// Wall time → virtual time for an entity of weight `weight`: `delta × 1024 / weight`
/// (Linux's `calc_delta_fair()`; identity for nice-0 weight).
pub fn calc_delta_fair(delta: u64, weight: u64) -> u64 {
    if weight == NICE_0_LOAD {
        delta
    } else {
        scale(delta, NICE_0_LOAD, weight)
    }
}

/// Signed distance `a − b` between two virtual times, wrap-safe: virtual time is a u64 that
/// may wrap (Linux even starts `min_vruntime` just below the wrap, at −2^20 ns, to catch
/// unsafe comparisons early), so order is decided by the sign of the wrapping difference.
pub fn vdiff(a: u64, b: u64) -> i64 {
    a.wrapping_sub(b) as i64
}

/// Is virtual time `a` before `b`? (Linux's `entity_before`.)
pub fn before(a: u64, b: u64) -> bool {
    vdiff(a, b) < 0
}

/// The later of two virtual times, wrap-safe (Linux's `max_vruntime`).
pub fn max_vruntime(a: u64, b: u64) -> u64 {
    if vdiff(b, a) > 0 { b } else { a }
}

/// The earlier of two virtual times, wrap-safe (Linux's `min_vruntime`).
pub fn min_vruntime(a: u64, b: u64) -> u64 {
    if vdiff(b, a) < 0 { b } else { a }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_match_linux() {
        assert_eq!(nice_to_weight(0), 1024);
        assert_eq!(nice_to_weight(-20), 88761);
        assert_eq!(nice_to_weight(19), 15);
        assert_eq!(nice_to_weight(5), 335);
        assert_eq!(nice_to_wmult(0), 1 << 22);
        // wmult is 2^32 / weight, rounded, for every level.
        for nice in NICE_MIN..=NICE_MAX {
            let exact = (1u64 << 32) as f64 / nice_to_weight(nice) as f64;
            assert!(
                (exact - nice_to_wmult(nice) as f64).abs() <= 1.0,
                "nice {nice}"
            );
        }
        // Each step is ~1.25x.
        for nice in NICE_MIN..NICE_MAX {
            let ratio = nice_to_weight(nice) as f64 / nice_to_weight(nice + 1) as f64;
            assert!((1.19..1.31).contains(&ratio), "nice {nice}: {ratio}");
        }
        assert_eq!(nice_to_weight(-100), 88761);
        assert_eq!(nice_to_weight(100), 15);
    }

    #[test]
    fn nice_0_against_nice_5_is_75_3_percent() {
        let share = scale(
            1000,
            nice_to_weight(0),
            nice_to_weight(0) + nice_to_weight(5),
        );
        assert_eq!(share, 753);
    }

    #[test]
    fn virtual_time_runs_slower_for_heavier_tasks() {
        assert_eq!(calc_delta_fair(1_000_000, 1024), 1_000_000);
        assert_eq!(calc_delta_fair(1_000_000, 2048), 500_000);
        assert_eq!(calc_delta_fair(1_000_000, 15), 68_266_666);
        assert_eq!(
            scale(u64::MAX, 3, 2),
            u64::MAX,
            "saturates instead of overflowing"
        );
    }

    #[test]
    fn comparisons_survive_the_wrap() {
        let just_before_wrap = u64::MAX - 10;
        let just_after_wrap = 5;
        assert!(before(just_before_wrap, just_after_wrap));
        assert_eq!(vdiff(just_after_wrap, just_before_wrap), 16);
        assert_eq!(
            max_vruntime(just_before_wrap, just_after_wrap),
            just_after_wrap
        );
        assert_eq!(
            min_vruntime(just_before_wrap, just_after_wrap),
            just_before_wrap
        );
    }
}
