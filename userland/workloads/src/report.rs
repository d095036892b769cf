//! What a workload program prints when it ends (DESIGN.md, "Output"): per latency probe a
//! cyclictest-style summary line, a schbench-style percentile block and two `RESULT` lines
//! (`latency`, and `samples` with every sample for plots); per task a `cpu` line. The lines
//! are labelled by [`crate::lab`]: with the program's name on its own, with the scenario
//! and the scheduler's settings when cfslab's lab started it.
//!
//! Each block goes out in one `write` (up to the kernel's 64 KiB per call), so that programs
//! ending together — two lat3 loops at the end of a window — never interleave their lines.

use crate::lab;
use alloc::format;
use core::fmt::Write;
use sched::stats::Summary;

fn us(ns: u64) -> u64 {
    ns / 1_000
}

/// Writes `text` in one go (see the module's docs).
fn emit(text: &str) {
    let _ = rt::io::write_all(rt::io::STDOUT, text.as_bytes());
}

/// A latency probe's reports: the cyclictest line (`interval_ns` is its period), the
/// percentile block and the `RESULT` lines (µs; samples in arrival order). A probe with no
/// sample says why instead (`run_ns`: how long the program ran).
pub fn latency(program: &str, probe: &str, interval_ns: u64, samples_ns: &[u64], missed: u64) {
    let at = lab::line_prefix();
    let Some(&last) = samples_ns.last() else {
        emit(&format!(
            "{at}{probe}: no samples: the run ended before its first {} ms period did \
             (try a longer duration= or -t)\n",
            interval_ns / 1_000_000
        ));
        return;
    };
    let s = Summary::of(samples_ns);
    let mut text = format!(
        "{at}T: 0 ({:>5}) P: 0 I:{} C:{:>7} Min:{:>7} Act:{:>5} Avg:{:>5} Max:{:>8}\n",
        rt::process::gettid(),
        us(interval_ns),
        s.n,
        us(s.min),
        us(last),
        us(s.avg),
        us(s.max)
    );
    let _ = writeln!(
        text,
        "{at}{probe} Wakeup Latencies percentiles (usec) ({} total samples)",
        s.n
    );
    for (label, value) in [
        ("50.0th", s.p50),
        ("90.0th", s.p90),
        ("* 99.0th", s.p99),
        ("99.9th", s.p999),
    ] {
        let _ = writeln!(text, "{at}\t{label}: {}", us(value));
    }
    let _ = writeln!(text, "{at}\tmin={}, max={}", us(s.min), us(s.max));
    let origin = lab::origin(program);
    let _ = writeln!(
        text,
        "RESULT {{\"kind\":\"latency\",{origin},\"probe\":\"{probe}\"{},\"n\":{},\"min_us\":{},\"avg_us\":{},\"p50_us\":{},\"p90_us\":{},\"p99_us\":{},\"max_us\":{},\"missed\":{missed}}}",
        lab::settings(),
        s.n,
        us(s.min),
        us(s.avg),
        us(s.p50),
        us(s.p90),
        us(s.p99),
        us(s.max)
    );
    let _ = write!(
        text,
        "RESULT {{\"kind\":\"samples\",{origin},\"probe\":\"{probe}\",\"us\":["
    );
    for (i, sample) in samples_ns.iter().enumerate() {
        let _ = write!(text, "{}{}", if i == 0 { "" } else { "," }, us(*sample));
    }
    text.push_str("]}\n");
    emit(&text);
}

/// One task's CPU time and its share of the `window_ns` it ran in. In the lab the kernel
/// writes every task's `cpu` line itself, from its exact accounting over the scenario's
/// window (`kernel/src/lab/report.rs`), so a program started there writes none.
pub fn cpu(program: &str, task: &str, cpu_ns: u64, window_ns: u64) {
    if lab::scenario().is_some() {
        return;
    }
    emit(&format!(
        "RESULT {{\"kind\":\"cpu\",\"program\":\"{program}\",\"task\":\"{task}\",\"pid\":{},\"uid\":{},\"nice\":{},\"runtime_us\":{},\"share\":{:.3}}}\n",
        rt::process::getpid(),
        rt::process::getuid(),
        crate::nice(),
        us(cpu_ns),
        cpu_ns as f64 / window_ns.max(1) as f64
    ));
}
