//! The demo `make run` shows until the lab (milestone 4) replaces it: seed 000's setting in
//! miniature — a sleeper that sleeps 100 ms at a time and measures how late it wakes, beside
//! two CPU hogs — under whatever policy the boot options chose. It prints the sleeper's
//! latency as cyclictest and schbench would, and `RESULT` lines for tools and tests.

use crate::config::Config;
use crate::sched;
use crate::time::clock;
use crate::{print, println};
use alloc::vec::Vec;
use core::fmt::Write;
use spin::Mutex;

const PERIOD_NS: u64 = 100_000_000;
const DEFAULT_DURATION_NS: u64 = 1_000_000_000;

static SAMPLES: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// Sleeps `PERIOD_NS` at a time until `end`, recording each wake-up's lateness; then sleeps
/// to the end, so that it is still there when its statistics are read.
fn sleeper(end: u64) {
    let mut deadline = clock::now() + PERIOD_NS;
    while deadline < end {
        sched::sleep_until(deadline);
        let late = clock::now() - deadline;
        x86_64::instructions::interrupts::without_interrupts(|| SAMPLES.lock().push(late));
        deadline += PERIOD_NS;
    }
    sched::sleep_until(end);
}

fn hog(end: u64) {
    clock::spin_until(end);
}

/// Nearest-rank percentile of sorted samples.
fn percentile(sorted: &[u64], p: usize) -> u64 {
    sorted[((p * sorted.len()).div_ceil(100)).clamp(1, sorted.len()) - 1]
}

/// Runs the demo and prints its report.
pub fn run(config: &Config) {
    let duration = config.duration_ns.unwrap_or(DEFAULT_DURATION_NS);
    let trace_from = config
        .trace
        .then(|| sched::trace_start(sched::TRACE_EVENTS));
    println!(
        "demo: a sleeper (100 ms) and two hogs for {} ms",
        duration / 1_000_000
    );
    let start = clock::now();
    let end = start + duration;
    let tasks = [
        ("sleeper", sched::spawn(sleeper, end, "sleeper", 1, 0)),
        ("hog1", sched::spawn(hog, end, "hog1", 2, 0)),
        ("hog2", sched::spawn(hog, end, "hog2", 2, 0)),
    ];
    // Read the CPU times before the end, while the tasks still exist (10 ms early: a policy
    // may make the waking reader wait for its turn).
    sched::sleep_until(end - 10_000_000);
    let stats: Vec<_> = tasks
        .iter()
        .map(|(_, id)| id.as_ref().ok().and_then(|&id| sched::task_stats(id)))
        .collect();
    for (_, id) in &tasks {
        if let Ok(id) = id {
            sched::join(*id);
        }
    }
    let mut samples = core::mem::take(&mut *SAMPLES.lock());
    samples.sort_unstable();
    report_latency(config, &samples);
    let total: u64 = stats.iter().flatten().map(|s| s.3.cpu_ns).sum();
    for ((name, _), stat) in tasks.iter().zip(&stats) {
        let Some((_, uid, nice, s)) = stat else {
            println!("demo: {name} did not run (no memory for its stack)");
            continue;
        };
        println!(
            "RESULT {{\"kind\":\"cpu\",\"scenario\":\"demo\",\"task\":\"{name}\",\"uid\":{uid},\"nice\":{nice},\"runtime_us\":{},\"share\":{:.3}}}",
            s.cpu_ns / 1_000,
            s.cpu_ns as f64 / total.max(1) as f64
        );
    }
    if trace_from.is_some()
        && let (Some(trace), _) = sched::trace_stop()
    {
        sched::print_trace(&trace);
    }
}

fn report_latency(config: &Config, sorted: &[u64]) {
    if sorted.is_empty() {
        println!("demo: no sleeper samples");
        return;
    }
    let us = |ns: u64| ns / 1_000;
    let (min, max) = (sorted[0], *sorted.last().unwrap());
    let avg = sorted.iter().sum::<u64>() / sorted.len() as u64;
    println!(
        "demo: T: 0 ({:>5}) P: 0 I:{} C:{:>7} Min:{:>7} Act:{:>5} Avg:{:>5} Max:{:>8}",
        1,
        PERIOD_NS / 1_000,
        sorted.len(),
        us(min),
        us(sorted[sorted.len() - 1]),
        us(avg),
        us(max)
    );
    println!(
        "demo: Wakeup Latencies percentiles (usec) runtime {} (s) ({} total samples)",
        config.duration_ns.unwrap_or(DEFAULT_DURATION_NS) / 1_000_000_000,
        sorted.len()
    );
    for (label, p) in [
        ("50.0th", 50),
        ("90.0th", 90),
        ("* 99.0th", 99),
        ("99.9th", 999),
    ] {
        let value = if p == 999 {
            sorted[((999 * sorted.len()).div_ceil(1000)).clamp(1, sorted.len()) - 1]
        } else {
            percentile(sorted, p)
        };
        println!("demo: \t{label}: {}", us(value));
    }
    println!("demo: \tmin={}, max={}", us(min), us(max));
    let mut features = alloc::string::String::new();
    for (i, f) in config.features.iter().enumerate() {
        let _ = write!(
            features,
            "{}{}{}",
            if i > 0 { "," } else { "" },
            if f.enabled { "" } else { "NO_" },
            f.feature.name()
        );
    }
    print!(
        "RESULT {{\"kind\":\"latency\",\"scenario\":\"demo\",\"probe\":\"sleeper\",\"policy\":\"{}\",\"era\":\"{}\",\"features\":\"{features}\",",
        crate::config::policy_name(config.policy),
        config.effective_era().map_or("2.6.11", |e| e.name())
    );
    println!(
        "\"n\":{},\"min_us\":{},\"avg_us\":{},\"p50_us\":{},\"p90_us\":{},\"p99_us\":{},\"max_us\":{},\"missed\":0}}",
        sorted.len(),
        us(min),
        us(avg),
        us(percentile(sorted, 50)),
        us(percentile(sorted, 90)),
        us(percentile(sorted, 99)),
        us(max)
    );
}
