//! How the lab reports a scenario: a header saying what is measured and what the blocks
//! below it are; per probe a cyclictest-style summary line, a schbench-style percentile
//! block and one `RESULT` JSON line for tools and tests (DESIGN.md, "Output"); each task's
//! CPU time; and where the window's CPU time went.

use super::workloads::Probe;
use crate::config::Config;
use crate::config::scenarios::Scenario;
use crate::config::tasks::TaskKind;
use crate::println;
use alloc::string::String;
use core::fmt::Write;
use sched::stats::Summary;

fn us(ns: u64) -> u64 {
    ns / 1_000
}

/// The measured window of a scenario.
pub struct Window {
    /// Its length as it happened (the boot task wakes a little after the end).
    pub ns: u64,
    /// CPU time the idle task had in it.
    pub idle_ns: u64,
    /// The length asked for.
    pub duration_ns: u64,
}

/// Says what the scenario measures and how to read the lines that follow.
pub fn header(s: &Scenario) {
    let name = s.name;
    println!("{name}: measures {}", s.measures);
    println!(
        "{name}: then per probe: a cyclictest line (T: thread, I: period µs, C: samples, \
         Min/Act/Avg/Max µs) and schbench-style percentiles (µs); RESULT lines repeat them \
         as JSON, with each task's CPU time and its share of the window"
    );
    if s.tasks.iter().any(|t| t.kind == TaskKind::Lat3) {
        println!(
            "{name}: lat3 lines (seed 002's format): P: loop end (s.µs), time asleep before \
             it (µs), time spun (µs), longest gap (µs), gaps over 1 ms"
        );
    }
    if s.tasks.iter().any(|t| t.kind == TaskKind::Sleeper) {
        println!(
            "{name}: the ms lines (seed 000's sched.py): the median of the last 5 sleeps' lateness, every 0.5 s"
        );
    }
}

/// A probe that measured nothing says why, instead of printing no block at all.
pub fn no_samples(p: &Probe, interval_ns: u64, window: &Window) {
    println!(
        "{}: {}: no samples: the {} ms window ended before its first {} ms period did \
         (try a longer duration=)",
        p.scenario,
        p.name,
        window.duration_ns / 1_000_000,
        interval_ns / 1_000_000
    );
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

/// Prints the CPU line of one task: its CPU time and its share of the window's CPU time
/// (`window_ns`: every task's, children and jobs included, and idle time).
pub fn cpu(scenario: &str, task: &str, uid: u32, nice: i8, cpu_ns: u64, window_ns: u64) {
    println!(
        "RESULT {{\"kind\":\"cpu\",\"scenario\":\"{scenario}\",\"task\":\"{task}\",\"uid\":{uid},\"nice\":{nice},\"runtime_us\":{},\"share\":{:.3}}}",
        us(cpu_ns),
        cpu_ns as f64 / window_ns.max(1) as f64
    );
}

/// Prints where the window's CPU time went: the listed tasks, everything else (their
/// children, make's jobs, the boot task) and idle; the three add up to the window.
pub fn window(scenario: &str, window: &Window, tasks_ns: u64) {
    let other_ns = window
        .ns
        .saturating_sub(tasks_ns)
        .saturating_sub(window.idle_ns);
    println!(
        "RESULT {{\"kind\":\"window\",\"scenario\":\"{scenario}\",\"window_us\":{},\"tasks_us\":{},\"other_us\":{},\"idle_us\":{}}}",
        us(window.ns),
        us(tasks_ns),
        us(other_ns),
        us(window.idle_ns)
    );
}
