//! Per-entity load tracking (PELT), as Linux 6.6 keeps it (kernel/sched/pelt.c): how much
//! of the recent past an entity was runnable and running, in a geometric average whose
//! weight halves every 32 periods of 1024 × 1024 ns (about 1.05 ms each) — about 33.5 ms.
//! This is the arithmetic of one average; when the fair class's entities and runqueues
//! update theirs is `fair::load_avg`'s. 6.6's balancer reads a CPU's load as its root
//! runqueue's `load_avg`, and a group's entity weighs its part of the group's load.
//!
//! Time is counted in units of 1024 ns, a *period* is 1024 of them. Each past period's
//! contribution is multiplied by y for every period since, where y³² = ½. Three sums are
//! kept: time runnable (scaled by the entity's `load` flag or, for a runqueue, its weight),
//! time runnable in units of 1024 (`runnable`: how many tasks, for a runqueue), and time
//! running (`util`). An average is its sum divided by the most a sum can hold at that point
//! of the period, so that an entity runnable all the time averages its whole weight.
//!
//! Linux computes y^n with a table of 32 fixed-point powers and a halving per 32 periods,
//! and the sum of whole periods in closed form from `LOAD_AVG_MAX`, the largest value a
//! sum can reach; the same integer arithmetic is done here, so the figures are Linux's to
//! the unit. The averages are recomputed only when a period boundary passes (about once a
//! millisecond), the sums at every update.

/// `LOAD_AVG_PERIOD`: the half-life, in periods.
pub const LOAD_AVG_PERIOD: u32 = 32;
/// `LOAD_AVG_MAX`: the fixed point of `max = max × y + 1024` in this arithmetic — the most
/// a sum reaches with 1024 added every period (checked by a test).
pub const LOAD_AVG_MAX: u64 = 47742;
/// `PELT_MIN_DIVIDER`: the most a sum holds at the start of a period.
pub const PELT_MIN_DIVIDER: u64 = LOAD_AVG_MAX - 1024;
/// One period, in units of 1024 ns.
pub const PERIOD: u64 = 1024;

/// y^i for i in 0..32, as multipliers in 0.32 fixed point: ⌊(2³² − 1) · 2^(−i/32)⌋, the
/// values Linux's generator (`Documentation/scheduler/sched-pelt.c`) prints; a test
/// recomputes each.
const Y_INV: [u64; 32] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796,
    0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46,
    0xb504f333, 0xb123f581, 0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
    0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
];

/// `decay_load`: `val` × y^`n` — a halving per 32 periods, then the table; nothing is left
/// after 63 halvings.
pub fn decay_load(val: u64, n: u64) -> u64 {
    if n > u64::from(LOAD_AVG_PERIOD) * 63 {
        return 0;
    }
    let (halvings, rest) = (n / 32, n % 32);
    let val = val >> halvings;
    ((u128::from(val) * u128::from(Y_INV[rest as usize])) >> 32) as u64
}

/// `__accumulate_pelt_segments`: the contribution of time that crossed `periods` period
/// boundaries — `d1` units to finish the old period (decayed `periods` times), the
/// `periods − 1` whole periods between (1024 each, decayed 1 to `periods − 1` times, in
/// closed form), and `d3` units of the new one (not decayed).
fn accumulate_segments(periods: u64, d1: u64, d3: u64) -> u64 {
    let c1 = decay_load(d1, periods);
    let c2 = LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, periods) - 1024;
    c1 + c2 + d3
}

/// One entity's (or runqueue's) averages (`struct sched_avg`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Avg {
    /// The clock (ns) the sums are brought up to; 0: not yet attached anywhere.
    pub last_update_time: u64,
    /// Time runnable, scaled by the load flag or weight given at each update.
    pub load_sum: u64,
    /// Time runnable × 1024 × the number runnable.
    pub runnable_sum: u64,
    /// Time running × 1024.
    pub util_sum: u64,
    /// How far into the current period the sums reach (0–1023 units).
    pub period_contrib: u64,
    /// `load_sum` as an average, scaled by the weight given.
    pub load_avg: u64,
    /// `runnable_sum` as an average.
    pub runnable_avg: u64,
    /// `util_sum` as an average (0–1024).
    pub util_avg: u64,
}

/// What an entity was doing since its last update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Activity {
    /// Queued (1) or not (0) for an entity; its weight for a runqueue.
    pub load: u64,
    /// Runnable (1 or 0) for a task; how many tasks are runnable for a runqueue.
    pub runnable: u64,
    /// Running.
    pub running: bool,
}

impl Avg {
    /// `get_pelt_divider`: the most a sum can hold at this point of the period.
    pub fn divider(&self) -> u64 {
        PELT_MIN_DIVIDER + self.period_contrib
    }

    /// `___update_load_sum` then, if a period boundary passed, `___update_load_avg` with
    /// `weight` (an entity's weight; 1 for a runqueue, whose load sum carries its
    /// weight): brings the sums up to `now` (ns), the time since the last update spent as
    /// `what` says. Returns whether the averages were recomputed.
    pub fn update(&mut self, now: u64, what: Activity, weight: u64) -> bool {
        let Some(delta) = now.checked_sub(self.last_update_time) else {
            // A clock that went back: start again from it.
            self.last_update_time = now;
            return false;
        };
        let units = delta >> 10;
        if units == 0 {
            return false;
        }
        // The remainder below 1024 ns waits for the next update.
        self.last_update_time += units << 10;
        let what = if what.load == 0 {
            Activity {
                load: 0,
                runnable: 0,
                running: false,
            }
        } else {
            what
        };
        if self.accumulate(units, what) == 0 {
            return false;
        }
        let divider = self.divider();
        self.load_avg = weight * self.load_sum / divider;
        self.runnable_avg = self.runnable_sum / divider;
        self.util_avg = self.util_sum / divider;
        true
    }

    /// `accumulate_sum`: ages the sums by the periods `units` crosses and adds its
    /// contribution; returns the periods crossed.
    fn accumulate(&mut self, units: u64, what: Activity) -> u64 {
        let mut contrib = units;
        let reach = units + self.period_contrib;
        let periods = reach / PERIOD;
        let mut d3 = reach;
        if periods > 0 {
            self.load_sum = decay_load(self.load_sum, periods);
            self.runnable_sum = decay_load(self.runnable_sum, periods);
            self.util_sum = decay_load(self.util_sum, periods);
            d3 = reach % PERIOD;
            if what.load != 0 {
                contrib = accumulate_segments(periods, PERIOD - self.period_contrib, d3);
            }
        }
        self.period_contrib = d3;
        self.load_sum += what.load * contrib;
        self.runnable_sum += (what.runnable * contrib) << 10;
        if what.running {
            self.util_sum += contrib << 10;
        }
        periods
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const RUNNING: Activity = Activity {
        load: 1,
        runnable: 1,
        running: true,
    };
    const ASLEEP: Activity = Activity {
        load: 0,
        runnable: 0,
        running: false,
    };

    #[test]
    fn the_table_is_y_to_the_i_and_load_avg_max_its_fixed_point() {
        for (i, &entry) in Y_INV.iter().enumerate() {
            let exact = (4_294_967_295.0 * 2f64.powf(-(i as f64) / 32.0)).floor() as u64;
            assert_eq!(entry, exact, "y^{i}");
        }
        let mut max = 0;
        loop {
            let next = ((max * Y_INV[1]) >> 32) + 1024;
            if next == max {
                break;
            }
            max = next;
        }
        assert_eq!(max, LOAD_AVG_MAX);
    }

    #[test]
    fn thirty_two_periods_halve_a_load() {
        // (The table's y⁰ is just under 1, so the halved value loses a unit.)
        assert_eq!(decay_load(1024, 32), 511);
        assert_eq!(decay_load(1024, 64), 255);
        // y ≈ 0.97857: one period takes 2.1 % off.
        assert_eq!(decay_load(1_000_000, 1), 978_572);
        assert_eq!(decay_load(u64::MAX, 2017), 0);
    }

    #[test]
    fn a_task_that_always_runs_averages_its_weight() {
        // A nice-0 task runnable and running for a second (about 954 periods: y^954 is
        // nothing) has its sums at the most they hold, so each average is the whole: its
        // weight, and 1024 of utilisation (less a unit lost to rounding).
        let mut avg = Avg::default();
        for ms in 1..=1000 {
            avg.update(ms * MS, RUNNING, 1024);
        }
        assert!((1023..=1024).contains(&avg.load_avg), "{avg:?}");
        assert!((1023..=1024).contains(&avg.util_avg), "{avg:?}");
    }

    #[test]
    fn after_its_half_life_asleep_a_task_weighs_half() {
        // Then asleep for 32 periods (32 × 1024 × 1024 ns ≈ 33.6 ms): half of it is left.
        let mut avg = Avg::default();
        avg.update(1000 * MS, RUNNING, 1024);
        let before = avg.load_avg;
        let half_life = 32 * 1024 * 1024;
        avg.update(1000 * MS + half_life, ASLEEP, 1024);
        assert!(avg.load_avg.abs_diff(before / 2) <= 2, "{before} → {avg:?}");
    }

    #[test]
    fn a_task_runnable_half_the_time_averages_about_half_its_weight() {
        // 1 ms runnable, 1 ms asleep, for a second: the average swings around half the
        // weight, a little above just after running and below just after sleeping.
        let mut avg = Avg::default();
        for ms in 0..1000 {
            let what = if ms % 2 == 0 { RUNNING } else { ASLEEP };
            avg.update((ms + 1) * MS, what, 1024);
        }
        assert!((480..=545).contains(&avg.load_avg), "{avg:?}");
    }
}
