//! How the lab reports a probe's samples: a cyclictest-style summary line, a schbench-style
//! percentile block, and one `RESULT` JSON line for tools and tests (DESIGN.md, "Output").

use crate::config::Config;
use crate::println;
use alloc::string::String;
use core::fmt::Write;

/// Summary of latency samples in ns.
pub struct Summary {
    pub n: usize,
    pub min: u64,
    pub avg: u64,
    pub last: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

/// Nearest-rank percentile (per mille) of sorted samples.
fn per_mille(sorted: &[u64], p: usize) -> u64 {
    sorted[((p * sorted.len()).div_ceil(1000)).clamp(1, sorted.len()) - 1]
}

impl Summary {
    /// Summarises `samples` (in arrival order); `None` if there are none.
    pub fn of(samples: &[u64]) -> Option<Summary> {
        let last = *samples.last()?;
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        Some(Summary {
            n: sorted.len(),
            min: sorted[0],
            avg: sorted.iter().sum::<u64>() / sorted.len() as u64,
            last,
            p50: per_mille(&sorted, 500),
            p90: per_mille(&sorted, 900),
            p99: per_mille(&sorted, 990),
            p999: per_mille(&sorted, 999),
            max: *sorted.last().unwrap(),
        })
    }
}

fn us(ns: u64) -> u64 {
    ns / 1_000
}

/// The features the user set, as `features=` would write them.
fn features(config: &Config) -> String {
    let mut out = String::new();
    for (i, f) in config.features.iter().enumerate() {
        let _ = write!(
            out,
            "{}{}{}",
            if i > 0 { "," } else { "" },
            if f.enabled { "" } else { "NO_" },
            f.feature.name()
        );
    }
    out
}

/// Prints the three reports of one latency probe (`thread` numbers it in the T: line,
/// `interval_ns` is its period).
pub fn latency(
    scenario: &str,
    probe: &str,
    thread: usize,
    interval_ns: u64,
    s: &Summary,
    missed: u64,
    config: &Config,
) {
    println!(
        "{scenario}: T:{thread:>2} ({:>5}) P: 0 I:{} C:{:>7} Min:{:>7} Act:{:>5} Avg:{:>5} Max:{:>8}",
        thread,
        us(interval_ns),
        s.n,
        us(s.min),
        us(s.last),
        us(s.avg),
        us(s.max)
    );
    println!(
        "{scenario}: {probe} Wakeup Latencies percentiles (usec) ({} total samples)",
        s.n
    );
    for (label, value) in [
        ("50.0th", s.p50),
        ("90.0th", s.p90),
        ("* 99.0th", s.p99),
        ("99.9th", s.p999),
    ] {
        println!("{scenario}: \t{label}: {}", us(value));
    }
    println!("{scenario}: \tmin={}, max={}", us(s.min), us(s.max));
    println!(
        "RESULT {{\"kind\":\"latency\",\"scenario\":\"{scenario}\",\"probe\":\"{probe}\",\"policy\":\"{}\",\"era\":\"{}\",\"features\":\"{}\",\"n\":{},\"min_us\":{},\"avg_us\":{},\"p50_us\":{},\"p90_us\":{},\"p99_us\":{},\"max_us\":{},\"missed\":{missed}}}",
        crate::config::policy_name(config.policy),
        config.effective_era().map_or("2.6.11", |e| e.name()),
        features(config),
        s.n,
        us(s.min),
        us(s.avg),
        us(s.p50),
        us(s.p90),
        us(s.p99),
        us(s.max)
    );
}

/// Prints every sample of a probe (µs, in arrival order) for the host lab's plots.
pub fn samples(scenario: &str, probe: &str, samples: &[u64]) {
    let mut list = String::new();
    for (i, s) in samples.iter().enumerate() {
        let _ = write!(list, "{}{}", if i == 0 { "" } else { "," }, us(*s));
    }
    println!(
        "RESULT {{\"kind\":\"samples\",\"scenario\":\"{scenario}\",\"probe\":\"{probe}\",\"us\":[{list}]}}"
    );
}

/// Prints the CPU line of one task.
pub fn cpu(scenario: &str, task: &str, uid: u32, nice: i8, cpu_ns: u64, total_ns: u64) {
    println!(
        "RESULT {{\"kind\":\"cpu\",\"scenario\":\"{scenario}\",\"task\":\"{task}\",\"uid\":{uid},\"nice\":{nice},\"runtime_us\":{},\"share\":{:.3}}}",
        us(cpu_ns),
        cpu_ns as f64 / total_ns.max(1) as f64
    );
}
