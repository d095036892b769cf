//! The seed experiments' programs in numbers: what they do besides being scheduled, shared
//! by the workload programs the lab runs (`userland/workloads`) and the host simulator's
//! models, so that both run the same programs. Two kinds of numbers live here.
//!
//! **Shapes.** How long a compile job burns, what `exec` costs, how a job sleeps on I/O.
//!
//! **Phase variation**, with the generator that draws it. A periodic program beside a
//! periodic scheduler can phase-lock: a model in which every cycle starts at the same point
//! of the scheduler's cycles gives a figure decided by that starting phase. The real
//! programs drift: the Python loop's own run time, timer slack, a start typed by hand.
//! cfslab models exactly those, drawn from a generator seeded with the `seed=` boot option,
//! so that runs explore phases and the same seed gives the same figures (the lab aggregates
//! several seeds). What it does *not* model: other tasks of the 2008 desktop waking up
//! (the terminal printing the script's lines, daemons), which shift the hogs' slices
//! between two of the sleeper's wake-ups (see the README's account of seed 000).

/// How much CPU one of seed 003's compile jobs burns: 5 to 50 ms (cc1 on a small file).
pub const JOB_CPU_NS: (u64, u64) = (5_000_000, 50_000_000);

/// What `exec` costs a vfork child before its parent is released.
pub const EXEC_COST_NS: u64 = 100_000;

/// A job with I/O (`makej:N/io`) runs in bursts of 1 to 5 ms of CPU...
pub const JOB_IO_BURST_NS: (u64, u64) = (1_000_000, 5_000_000);

/// ...each followed by a sleep of 0.2 to 2 ms: a pipe between cpp, cc1 and as, a disk read
/// or make waiting. Each wake-up re-enters with sleeper credit.
pub const JOB_IO_SLEEP_NS: (u64, u64) = (200_000, 2_000_000);

/// Linux's default `timer_slack_ns` for ordinary tasks: a `nanosleep` or `select` timeout
/// may expire up to 50 µs late, so that nearby timers can fire together.
pub const TIMER_SLACK_NS: u64 = 50_000;

/// The run time of one iteration of seed 000's `sched.py` loop besides its sleep
/// (`time.time()` twice, a list append, the median of five every half second), in ns: a
/// few tens to a couple of hundred microseconds of interpreted Python on 2008 hardware.
pub const SLEEPER_LOOP_WORK_NS: (u64, u64) = (20_000, 200_000);

/// The default `seed=`.
pub const DEFAULT_SEED: u64 = 1;

/// The `--seed` the lab gives the program of its task number `index`, from the run's
/// `seed=`: each task draws its own phases, and the same `seed=` gives the same ones.
pub fn task_seed(seed: u64, index: u64) -> u64 {
    Rng::for_stream(seed, index).next_u64()
}

/// A small deterministic PRNG (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (0 is taken as 1).
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    /// The generator for stream `stream` of run seed `seed` (e.g. one per task): the two
    /// are mixed (splitmix64) so that neighbouring seeds and streams are unrelated.
    pub fn for_stream(seed: u64, stream: u64) -> Self {
        let mut z = seed
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(stream.wrapping_add(1).wrapping_mul(0xbf58_476d_1ce4_e5b9));
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng::new(z ^ (z >> 31))
    }

    /// The next pseudo-random number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `lo..=hi`.
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// How late a sleep with timer slack ends: uniform in `0..=TIMER_SLACK_NS`.
    pub fn timer_slack(&mut self) -> u64 {
        self.between(0, TIMER_SLACK_NS)
    }

    /// When a periodic program starts within its first period: uniform in `0..period`
    /// (it was started by hand, at no particular point of the scheduler's cycles).
    pub fn start_offset(&mut self, period: u64) -> u64 {
        self.between(0, period.max(1) - 1)
    }

    /// One iteration's work of seed 000's sleeper loop.
    pub fn sleeper_loop_work(&mut self) -> u64 {
        self.within(SLEEPER_LOOP_WORK_NS)
    }

    /// Uniform in the inclusive range `(lo, hi)`.
    pub fn within(&mut self, (lo, hi): (u64, u64)) -> u64 {
        self.between(lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_deterministic_and_distinct() {
        let draw = |seed, stream| Rng::for_stream(seed, stream).next_u64();
        assert_eq!(draw(1, 0), draw(1, 0));
        assert_ne!(draw(1, 0), draw(1, 1));
        assert_ne!(draw(1, 0), draw(2, 0));
        let mut rng = Rng::for_stream(7, 3);
        for _ in 0..1000 {
            assert!(rng.timer_slack() <= TIMER_SLACK_NS);
            assert!(rng.start_offset(100) < 100);
            let w = rng.sleeper_loop_work();
            assert!((SLEEPER_LOOP_WORK_NS.0..=SLEEPER_LOOP_WORK_NS.1).contains(&w));
        }
    }
}
