//! `boot lab` (`make lab`): every seed experiment × its variants (../shared/seeds/README.md),
//! run in the kernel in deterministic mode, a few at a time, with a progress line per run;
//! then `REPORT.md` with one table per seed in the seed's own shape, SVG plots and the traces,
//! all under `target/lab/`.

mod report;
mod svg;

use crate::qemu::{self, Machine};
use crate::status::Status;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The lab's default `-icount` shift: 4 ns per instruction, a 250 MIPS machine. Busy guest
/// time costs about a quarter of shift 0's emulation time, and the experiments' latencies
/// are milliseconds, far above the kernel paths' cost even at this speed.
pub const LAB_ICOUNT_SHIFT: u32 = 2;

/// One run of the matrix.
#[derive(Debug, Clone)]
pub struct Variant {
    /// "seed000", "seed002", "seed003".
    pub seed: &'static str,
    /// The scenario the run reports under (`run=`).
    pub scenario: &'static str,
    /// What the row of the seed's table says.
    pub label: String,
    /// The boot options.
    pub options: String,
    /// Write this run's trace.
    pub trace: bool,
}

/// What a run produced.
pub struct Outcome {
    pub variant: Variant,
    pub status: Status,
    /// Every RESULT line.
    pub results: Vec<Value>,
    pub trace: Option<String>,
    pub wall: Duration,
}

impl Outcome {
    /// The RESULT lines of `kind`.
    pub fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.results.iter().filter(|r| r["kind"] == kind).collect()
    }
}

/// The matrix, each run measuring `seconds` of virtual time.
pub fn matrix(seconds: u64) -> Vec<Variant> {
    let d = format!("duration={seconds}s");
    let mut runs = Vec::new();
    let mut add = |seed, scenario, label: String, options: String, trace| {
        runs.push(Variant {
            seed,
            scenario,
            label,
            options,
            trace,
        })
    };
    for (script, scenario) in [(1, "seed000-s1"), (2, "seed000-s2")] {
        for (label, extra) in [
            ("group=uid, group sleeper credit off", "group=uid"),
            (
                "group=uid, group sleeper credit on",
                "group=uid features=GROUP_SLEEPER_CREDIT",
            ),
            ("group=none", "group=none"),
        ] {
            // One run is traced, for the report's timeline.
            let trace = script == 2 && extra == "group=uid";
            let tracing = if trace { " trace=on" } else { "" };
            add(
                "seed000",
                scenario,
                format!("script {script}, {label}"),
                format!("run={scenario} era=2.6.24 {extra} {d}{tracing}"),
                trace,
            );
        }
    }
    for (run, scenario) in [
        ("A: 1 s + 1 s loops", "seed002-a"),
        ("B: 1 s + 10 s loops", "seed002-b"),
    ] {
        for policy in ["o1", "cfs"] {
            let trace = scenario == "seed002-a" && policy == "o1";
            let tracing = if trace { " trace=on" } else { "" };
            add(
                "seed002",
                scenario,
                format!("{policy}, {run}"),
                format!("run={scenario} policy={policy} {d}{tracing}"),
                trace,
            );
        }
    }
    for start_debit in [true, false] {
        for dyn_gran in [false, true] {
            for clamp in [false, true] {
                for vfork_credit in [true, false] {
                    let mut features = Vec::new();
                    let mut label = Vec::new();
                    for (on, default, name) in [
                        (start_debit, true, "START_DEBIT"),
                        (dyn_gran, false, "DYN_GRANULARITY"),
                        (clamp, false, "CLAMP_CHILD_RIGHTMOST"),
                        (vfork_credit, true, "VFORK_SLEEPER_CREDIT"),
                    ] {
                        if on != default {
                            let setting = format!("{}{name}", if on { "" } else { "NO_" });
                            label.push(setting.clone());
                            features.push(setting);
                        }
                    }
                    let label = if label.is_empty() {
                        "vanilla".to_string()
                    } else {
                        label.join(" + ")
                    };
                    let features = if features.is_empty() {
                        String::new()
                    } else {
                        format!(" features={}", features.join(","))
                    };
                    let trace = label == "vanilla";
                    let tracing = if trace { " trace=on" } else { "" };
                    add(
                        "seed003",
                        "seed003",
                        label,
                        format!("run=seed003 era=2.6.36{features} {d}{tracing}"),
                        trace,
                    );
                }
            }
        }
    }
    // Peter Zijlstra's tune (2.6.36's 0.75 ms minimum granularity, divided by 3).
    add(
        "seed003",
        "seed003",
        "min_granularity/3".into(),
        format!("run=seed003 era=2.6.36 min_granularity_ns=250000 {d}"),
        false,
    );
    add(
        "seed003",
        "seed003",
        "EEVDF (6.6)".into(),
        format!("run=seed003 policy=eevdf {d}"),
        false,
    );
    runs
}

/// Runs every variant on `kernel`, `jobs` at a time; returns the outcomes in matrix order.
pub fn run_all(
    kernel: &Path,
    variants: &[Variant],
    jobs: usize,
    shift: u32,
) -> Result<Vec<Outcome>, String> {
    let image = crate::image::build_image(kernel)?;
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let outcomes: Mutex<Vec<Option<Outcome>>> =
        Mutex::new((0..variants.len()).map(|_| None).collect());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(variant) = variants.get(i) else {
                        break;
                    };
                    let mut machine = Machine::new(image.clone());
                    machine.options = variant.options.clone();
                    machine.icount_shift = Some(shift);
                    let t0 = Instant::now();
                    let result = qemu::run(&machine, Some(Duration::from_secs(1800)), false);
                    let (status, output) = match result {
                        Ok((status, _, output)) => (status, output),
                        Err(e) => {
                            eprintln!("lab: {}: {e}", variant.label);
                            (Status::HostError, String::new())
                        }
                    };
                    let results = output
                        .lines()
                        .filter_map(|l| l.strip_prefix("RESULT "))
                        .filter_map(|json| serde_json::from_str(json).ok())
                        .collect();
                    let outcome = Outcome {
                        variant: variant.clone(),
                        status,
                        results,
                        trace: variant
                            .trace
                            .then(|| qemu::extract_trace(&output))
                            .flatten(),
                        wall: t0.elapsed(),
                    };
                    let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                    eprintln!(
                        "lab: [{n:>2}/{}] {:<8} {:<52} {} in {:.1} s ({:.0} s so far)",
                        variants.len(),
                        variant.seed,
                        variant.label,
                        if status == Status::Success {
                            "ok".to_string()
                        } else {
                            format!("FAILED ({status})")
                        },
                        outcome.wall.as_secs_f64(),
                        started.elapsed().as_secs_f64()
                    );
                    outcomes.lock().unwrap()[i] = Some(outcome);
                }
            });
        }
    });
    Ok(outcomes
        .into_inner()
        .unwrap()
        .into_iter()
        .flatten()
        .collect())
}

/// `boot lab`: runs the matrix and writes the report under `out`.
pub fn lab(
    kernel: &Path,
    out: &Path,
    seconds: u64,
    jobs: usize,
    shift: u32,
) -> Result<Status, String> {
    let variants = matrix(seconds);
    eprintln!(
        "lab: {} runs of {seconds} s (virtual, -icount shift={shift}), {jobs} at a time",
        variants.len()
    );
    let outcomes = run_all(kernel, &variants, jobs, shift)?;
    // Traces of earlier runs would otherwise linger beside this run's.
    let _ = std::fs::remove_dir_all(out.join("traces"));
    std::fs::create_dir_all(out.join("traces"))
        .map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let written = report::write(out, &outcomes, seconds, shift)?;
    for path in written {
        eprintln!("lab: wrote {}", path.display());
    }
    let failed = outcomes
        .iter()
        .filter(|o| o.status != Status::Success)
        .count();
    Ok(if failed == 0 {
        Status::Success
    } else {
        Status::Failure
    })
}

/// The lab's output directory: `target/lab`.
pub fn default_out() -> PathBuf {
    crate::build::target_dir().join("lab")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrix_covers_every_seed_variant() {
        let m = matrix(10);
        assert_eq!(m.iter().filter(|v| v.seed == "seed000").count(), 6);
        assert_eq!(m.iter().filter(|v| v.seed == "seed002").count(), 4);
        // 2^4 feature combinations, the min_granularity tune and EEVDF.
        assert_eq!(m.iter().filter(|v| v.seed == "seed003").count(), 18);
        assert!(m.iter().any(|v| v.options == "run=seed003 era=2.6.36 features=NO_START_DEBIT duration=10s"));
        // One traced run per seed.
        assert_eq!(m.iter().filter(|v| v.trace).count(), 3);
        assert!(
            m.iter()
                .filter(|v| v.trace)
                .all(|v| v.options.ends_with(" trace=on"))
        );
    }
}
