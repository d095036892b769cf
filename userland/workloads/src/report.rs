//! The `RESULT` lines the workload programs end with, in the kernel lab's shapes (its
//! `latency`, `samples` and `cpu` kinds) with the program's name in place of the scenario:
//! a program does not know which kernel, policy or tunables it runs under — whoever started
//! it does.

use alloc::string::String;
use core::fmt::Write;
use sched::stats::Summary;

fn us(ns: u64) -> u64 {
    ns / 1_000
}

/// A latency probe's summary and every sample (µs, in arrival order).
pub fn latency(program: &str, probe: &str, samples_ns: &[u64], missed: u64) {
    let s = Summary::of(samples_ns);
    rt::println!(
        "RESULT {{\"kind\":\"latency\",\"program\":\"{program}\",\"probe\":\"{probe}\",\"n\":{},\"min_us\":{},\"avg_us\":{},\"p50_us\":{},\"p90_us\":{},\"p99_us\":{},\"max_us\":{},\"missed\":{missed}}}",
        s.n,
        us(s.min),
        us(s.avg),
        us(s.p50),
        us(s.p90),
        us(s.p99),
        us(s.max)
    );
    let mut list = String::new();
    for (i, sample) in samples_ns.iter().enumerate() {
        let _ = write!(list, "{}{}", if i == 0 { "" } else { "," }, us(*sample));
    }
    rt::println!(
        "RESULT {{\"kind\":\"samples\",\"program\":\"{program}\",\"probe\":\"{probe}\",\"us\":[{list}]}}"
    );
}

/// One task's CPU time and its share of the `window_ns` it ran in.
pub fn cpu(program: &str, task: &str, cpu_ns: u64, window_ns: u64) {
    rt::println!(
        "RESULT {{\"kind\":\"cpu\",\"program\":\"{program}\",\"task\":\"{task}\",\"pid\":{},\"uid\":{},\"nice\":{},\"runtime_us\":{},\"share\":{:.3}}}",
        rt::process::getpid(),
        rt::process::getuid(),
        crate::nice(),
        us(cpu_ns),
        cpu_ns as f64 / window_ns.max(1) as f64
    );
}
