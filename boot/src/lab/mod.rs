//! `boot lab` (`make lab`): every seed experiment × its variants (../shared/seeds/README.md),
//! run in the kernel in deterministic mode, a few at a time, with a progress line per run;
//! then `REPORT.md` with one table per seed in the seed's own shape, SVG plots and the traces,
//! all under `target/lab/`.

pub(crate) mod axis;
pub mod publish;
mod report;
pub(crate) mod svg;
pub mod tables;

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

/// One run of the matrix: a row of a seed's table (`bootopts::scenarios::matrix`, the one
/// definition of the seed experiments and their variants) under one `seed=`.
#[derive(Debug, Clone)]
pub struct Variant {
    /// The row: experiment, scenario, label, the options without window or seed.
    pub row: bootopts::scenarios::Variant,
    /// The phase-variation seed of this run (`seed=`).
    pub seed: u64,
    /// The full boot options.
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

/// The matrix: every row of the seeds' tables, each under seeds 1 to `seeds`, each run
/// measuring `seconds` of virtual time. Only seed 1 of a traced row is traced.
pub fn matrix(seconds: u64, seeds: u64) -> Vec<Variant> {
    let mut runs = Vec::new();
    for row in bootopts::scenarios::matrix() {
        let seconds = seconds.max(row.min_seconds);
        for seed in 1..=seeds {
            let trace = row.traced && seed == 1;
            let tracing = if trace { " trace=on" } else { "" };
            runs.push(Variant {
                options: format!("{} duration={seconds}s seed={seed}{tracing}", row.options),
                row: row.clone(),
                seed,
                trace,
            });
        }
    }
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
    // The scenarios' workloads are user programs.
    let initramfs = crate::initramfs::build(&[])?;
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
                    machine.initramfs = Some(initramfs.clone());
                    let t0 = Instant::now();
                    let result = qemu::run(
                        &machine,
                        Some(Duration::from_secs(1800)),
                        qemu::Echo::Nothing,
                    );
                    let (status, output) = match result {
                        Ok((status, _, output)) => (status, output),
                        Err(e) => {
                            eprintln!("lab: {}: {e}", variant.row.label);
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
                        "lab: [{n:>2}/{}] {:<8} {:<52} seed {} {} in {:.1} s ({:.0} s so far)",
                        variants.len(),
                        variant.row.experiment,
                        variant.row.label,
                        variant.seed,
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

/// `boot lab`: runs the matrix and writes the report under `out`; then refreshes what the
/// documents show (`docs/lab/`: the plots and `results.json`, and the tables between the
/// `lab:seedNNN` markers, in docs/experiments.md).
pub fn lab(
    kernel: &Path,
    out: &Path,
    seconds: u64,
    seeds: u64,
    jobs: usize,
    shift: u32,
) -> Result<Status, String> {
    let variants = matrix(seconds, seeds);
    eprintln!(
        "lab: {} runs ({} rows x seeds 1-{seeds}) of {seconds} s (virtual, -icount shift={shift}), {jobs} at a time",
        variants.len(),
        variants.len() as u64 / seeds
    );
    let outcomes = run_all(kernel, &variants, jobs, shift)?;
    // Traces of earlier runs would otherwise linger beside this run's.
    let _ = std::fs::remove_dir_all(out.join("traces"));
    std::fs::create_dir_all(out.join("traces"))
        .map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let tables = tables::Tables::from_outcomes(&outcomes, seconds, seeds, shift);
    let written = report::write(out, &outcomes, &tables)?;
    for path in written {
        eprintln!("lab: wrote {}", path.display());
    }
    let failed = outcomes
        .iter()
        .filter(|o| o.status != Status::Success)
        .count();
    if failed > 0 {
        eprintln!("lab: {failed} runs failed; the documents and docs/lab/ left as they were");
        return Ok(Status::Failure);
    }
    for path in publish::publish(out, &tables)? {
        eprintln!("lab: refreshed {}", path.display());
    }
    Ok(Status::Success)
}

/// `boot lab --check`: do the documents' tables say what `docs/lab/results.json` (the last
/// `make lab`) measured?
pub fn check() -> Result<Status, String> {
    match publish::check()? {
        None => {
            eprintln!("lab: the documents' tables match docs/lab/results.json");
            Ok(Status::Success)
        }
        Some(problem) => {
            eprintln!("lab: {problem}");
            Ok(Status::Failure)
        }
    }
}

/// The lab's output directory: `target/lab`.
pub fn default_out() -> PathBuf {
    crate::build::target_dir().join("lab")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrix_runs_every_row_under_every_seed() {
        let rows = bootopts::scenarios::matrix().len();
        let m = matrix(10, 3);
        assert_eq!(m.len(), rows * 3);
        assert!(
            m.iter().any(|v| v.options
                == "run=seed003 era=2.6.36 features=NO_START_DEBIT duration=10s seed=2")
        );
        // seed 002's stall needs its 30 s.
        assert!(
            m.iter()
                .any(|v| v.options == "run=seed002-b policy=o1 duration=30s seed=1")
        );
        // One traced run per seed experiment, under seed 1.
        assert_eq!(m.iter().filter(|v| v.trace).count(), 3);
        assert!(
            m.iter()
                .filter(|v| v.trace)
                .all(|v| v.seed == 1 && v.options.ends_with(" trace=on"))
        );
    }
}
