//! How the lab reports a probe's samples: a cyclictest-style summary line, a schbench-style
//! percentile block, and one `RESULT` JSON line for tools and tests (DESIGN.md, "Output").

use super::workloads::Probe;
use crate::config::Config;
use crate::println;
use alloc::string::String;
use core::fmt::Write;
use sched::stats::Summary;

fn us(ns: u64) -> u64 {
    ns / 1_000
}

/// Prints the reports of one latency probe with samples (`thread` numbers it in the T:
/// line, `interval_ns` is its period): cyclictest, schbench, `RESULT` and the samples.
pub fn latency(p: &Probe, thread: usize, interval_ns: u64, config: &Config) {
    let Some(&last) = p.samples.last() else {
        return;
    };
    let (scenario, probe, missed) = (p.scenario, p.name.as_str(), p.missed);
    let s = &Summary::of(&p.samples);
    println!(
        "{scenario}: T:{thread:>2} ({:>5}) P: 0 I:{} C:{:>7} Min:{:>7} Act:{:>5} Avg:{:>5} Max:{:>8}",
        thread,
        us(interval_ns),
        s.n,
        us(s.min),
        us(last),
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
        config.features_value(),
        s.n,
        us(s.min),
        us(s.avg),
        us(s.p50),
        us(s.p90),
        us(s.p99),
        us(s.max)
    );
    samples(scenario, probe, &p.samples);
}

/// Prints every sample of a probe (µs, in arrival order) for the host lab's plots.
fn samples(scenario: &str, probe: &str, samples: &[u64]) {
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
