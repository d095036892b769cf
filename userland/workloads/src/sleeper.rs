//! seed 000's sleeper, the heart of `sched.py`: sleeps a period in a loop and measures how
//! late each wake-up is; every 0.5 s it prints the median of its last five samples in ms
//! (`14.810944 ms`), as the script did. Each iteration also does the script's own bit of
//! interpreted work (20–200 µs, `sched::programs`), and it starts at a random point of its
//! first period: the phase variation `--seed` picks. Run by `sched_py` (the seed's two
//! scripts) and by `sleeper` (a lab scenario's sleeper task).

use crate::{MS, Rng, report, say, spin_until};
use alloc::vec::Vec;
use rt::time::now_ns;

/// Runs the sleeper until `end`: its medians, then its report as probe `probe` of `program`.
pub fn run(program: &str, probe: &str, period: u64, mut rng: Rng, end: u64) {
    let start = now_ns();
    let _ = rt::time::sleep_ns(rng.start_offset(period));
    let mut samples = Vec::new();
    let mut next_print = now_ns() + 500 * MS;
    while now_ns() + period < end {
        spin_until(now_ns() + rng.sleeper_loop_work());
        let due = now_ns() + period;
        let _ = rt::time::sleep_ns(period);
        let late = now_ns().saturating_sub(due);
        samples.push(late);
        if now_ns() >= next_print {
            let mut last_five = samples[samples.len().saturating_sub(5)..].to_vec();
            last_five.sort_unstable();
            let median = last_five[last_five.len() / 2];
            say!("{}.{:06} ms", median / MS, median % MS);
            next_print += 500 * MS;
        }
    }
    report::latency(program, probe, period, &samples, 0);
    report::cpu(program, probe, rt::time::thread_cpu_ns(), now_ns() - start);
}
