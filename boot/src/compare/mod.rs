//! `boot compare` (`make compare`): the same user programs on both kernels in the same
//! machine, side by side, in `target/compare/REPORT.md` with the exact kernels and commands:
//! - the seeds' scenarios ([`scenarios`]): the workload programs on Linux 6.1 and on cfslab,
//!   a table and a CDF plot per scenario;
//! - the system-call paths that `microbench` measures, on cfslab's optimised kernel and on
//!   Linux 6.1 (linux.rs), both at `-icount shift=0`, where one virtual nanosecond is one
//!   guest instruction. `boot compare --paths` runs only these (`make bench` does).
//!
//! Both refresh what the documents show (`publish.rs`).

mod figures;
pub mod paths_table;
pub mod publish;
pub mod scenarios;
pub mod smp;

use crate::linux;
use crate::qemu::{self, Machine};
use crate::status::Status;
use std::fmt::Write as _;
use std::time::Duration;

/// Both kernels run the program at one instruction per virtual nanosecond.
const ICOUNT_SHIFT: u32 = 0;
const PROGRAM: &str = "/bin/microbench";
const TIMEOUT: Duration = Duration::from_secs(600);

/// One measured path: its name as microbench prints it, and nanoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    pub name: String,
    pub ns: u64,
}

/// microbench's figures in `output`: `microbench: NAME: N ns per call` lines and the
/// overshoot line (`microbench: idle 100 ms nanosleep overshoot (worst of 5): N ns`).
pub fn parse(output: &str) -> Vec<Path> {
    output
        .lines()
        .filter_map(|l| l.trim().strip_prefix("microbench: "))
        .filter_map(|rest| {
            let (name, figure) = rest.rsplit_once(": ")?;
            let ns = figure
                .strip_suffix(" ns per call")
                .or_else(|| figure.strip_suffix(" ns"))?
                .parse()
                .ok()?;
            Some(Path {
                name: name.to_string(),
                ns,
            })
        })
        .collect()
}

/// The report's table: one row per path that both kernels measured.
pub fn table(linux: &[Path], cfslab: &[Path]) -> String {
    let mut out =
        String::from("| path | Linux 6.1 | cfslab | cfslab / Linux |\n|---|---:|---:|---:|\n");
    for l in linux {
        let Some(c) = cfslab.iter().find(|c| c.name == l.name) else {
            continue;
        };
        let ratio = if l.ns == 0 {
            "-".to_string()
        } else {
            format!("{:.2}", c.ns as f64 / l.ns as f64)
        };
        let _ = writeln!(out, "| {} | {} | {} | {ratio} |", l.name, l.ns, c.ns);
    }
    out
}

/// Which part of the comparison runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The seeds' scenarios, microbench and the scenarios of several CPUs.
    All,
    /// microbench only (`make bench`).
    Paths,
    /// The scenarios of several CPUs only ([`smp`]); `quick`: each once, nothing stored.
    Smp { quick: bool },
}

/// Runs the seeds' scenarios, microbench and the scenarios of several CPUs (or `part` of
/// them) on cfslab (optimised) and on Linux; prints the tables and writes the report and
/// its plots.
pub fn run(memory_mib: u32, verbose: bool, part: Part) -> Result<Status, String> {
    let kernel = crate::build::build_kernel(crate::build::Profile::Release)?;
    let image = crate::image::build_image(&kernel)?;
    if let Part::Smp { quick } = part {
        return several_cpus(&image, memory_mib, quick).map(|_| Status::Success);
    }
    let paths_only = part == Part::Paths;
    let dir = crate::build::target_dir().join("compare");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let save = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    let mut report = String::from("# cfslab against Linux 6.1, in the same QEMU\n\n");
    if !paths_only {
        report.push_str(&format!(
            "Each scenario runs the same user programs (userland/workloads) for {} s of \
             virtual time on both kernels: QEMU with `-icount shift={}`, {memory_mib} MiB, one \
             CPU, HZ 250. Latencies in ms; the CPU column sums each uid's tasks' shares.\n\n",
            scenarios::SECONDS,
            scenarios::ICOUNT_SHIFT
        ));
        let all = scenarios::all();
        let mut measured = Vec::new();
        for (i, scenario) in all.iter().enumerate() {
            eprintln!("compare: [{}/{}] {}", i + 1, all.len(), scenario.name);
            let outcomes = scenarios::run(scenario, &image, scenarios::SECONDS, memory_mib)?;
            let plot = format!("{}-cdf.svg", scenario.name);
            let series: Vec<(String, Vec<u64>)> = outcomes
                .iter()
                .map(|o| (o.label.clone(), o.figures.samples.clone()))
                .collect();
            let title = format!(
                "{}: {} s on each kernel, same QEMU",
                scenario.heading,
                scenarios::SECONDS
            );
            save(
                &plot,
                &crate::lab::svg::cdf(&title, "latency (µs)", &series),
            )?;
            let section = scenarios::section(scenario, &outcomes, scenarios::SECONDS, &plot);
            print!("{section}");
            report.push_str(&section);
            measured.push(publish::Measured {
                name: scenario.name.to_string(),
                outcomes,
            });
        }
        publish::publish(&dir, &measured)?;
        eprintln!("boot: compare: the documents' tables and docs/compare/ refreshed");
    }
    report.push_str(&paths(&image, memory_mib, verbose)?);
    if part == Part::All {
        report.push_str(&several_cpus(&image, memory_mib, false)?);
    }
    save("REPORT.md", &report)?;
    eprintln!(
        "boot: compare: report written to {}",
        dir.join("REPORT.md").display()
    );
    Ok(Status::Success)
}

/// The scenarios of several CPUs on both kernels ([`smp`]): the table is printed, and
/// unless `quick`, stored as docs/data/compare-smp.json and rendered into docs/compare.md.
/// Returns the report's section.
fn several_cpus(image: &std::path::Path, memory_mib: u32, quick: bool) -> Result<String, String> {
    let data = smp::generate(image, memory_mib, quick)?;
    let table = smp::render(&data)?;
    print!("{table}");
    if !quick {
        crate::docs::store(smp::DATA, &data)?;
        crate::docs::render_blocks(Some(smp::DATA))?;
    }
    Ok(format!(
        "## On several CPUs
{table}"
    ))
}

/// `compare --check`: are the documents' tables those of `docs/compare/results.json`?
pub fn check() -> Result<Status, String> {
    match publish::check()? {
        None => {
            eprintln!("compare: the documents' tables match docs/compare/results.json");
            Ok(Status::Success)
        }
        Some(problem) => {
            eprintln!("compare: {problem}");
            Ok(Status::Failure)
        }
    }
}

/// microbench on both kernels at shift 0: the report's paths section.
fn paths(image: &std::path::Path, memory_mib: u32, verbose: bool) -> Result<String, String> {
    eprintln!("boot: compare: {PROGRAM} on cfslab (release kernel, -icount shift={ICOUNT_SHIFT})");
    let mut machine = Machine::new(image.to_path_buf());
    machine.options = format!("-- {PROGRAM}");
    machine.icount_shift = Some(ICOUNT_SHIFT);
    machine.memory_mib = memory_mib;
    machine.initramfs = Some(crate::initramfs::build(&[])?);
    let (status, _, cfslab_output) = qemu::run(&machine, Some(TIMEOUT), qemu::Echo::Nothing)?;
    if status != Status::Success {
        eprint!("{cfslab_output}");
        return Err(format!("{PROGRAM} failed on cfslab ({status})"));
    }
    eprintln!("boot: compare: {PROGRAM} on Linux (same machine and icount)");
    let program = [PROGRAM.to_string()];
    let (status, linux_output, version) = linux::run(
        &program,
        &[],
        linux::Hardware {
            icount_shift: Some(ICOUNT_SHIFT),
            memory_mib,
            smp: None,
            shape: None,
        },
        TIMEOUT,
        verbose,
        qemu::Echo::Nothing,
    )?;
    if status != Status::Success {
        eprint!("{linux_output}");
        return Err(format!("{PROGRAM} failed on Linux ({status})"));
    }
    let (linux, cfslab) = (parse(&linux_output), parse(&cfslab_output));
    let table = table(&linux, &cfslab);
    print!("{table}");
    paths_table::publish_paths(&paths_table::PathFigures {
        linux_version: version.clone(),
        linux,
        cfslab,
    })?;
    Ok(format!(
        "## The system-call paths\n\n\
         `{PROGRAM}` (userland/bench) on both kernels in QEMU with `-icount \
         shift={ICOUNT_SHIFT}` (one guest instruction per virtual nanosecond), {memory_mib} MiB, \
         one CPU; each figure is the fastest of five batches, in guest instructions.\n\n\
         - cfslab: the optimised kernel, `cargo boot run --release --icount-shift 0 --opts \"-- {PROGRAM}\"`\n\
         - Linux: `{version}`, `cargo boot linux --icount-shift 0 -- {PROGRAM}`\n\n{table}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microbench_lines_are_read_and_set_side_by_side() {
        let cfslab = parse(
            "x\nmicrobench: getpid: 87 ns per call\r\n\
             microbench: idle 100 ms nanosleep overshoot (worst of 5): 3073 ns\n",
        );
        assert_eq!(
            cfslab,
            [
                Path {
                    name: "getpid".into(),
                    ns: 87
                },
                Path {
                    name: "idle 100 ms nanosleep overshoot (worst of 5)".into(),
                    ns: 3073
                },
            ]
        );
        let linux =
            parse("microbench: getpid: 315 ns per call\nmicrobench: other: 5 ns per call\n");
        assert_eq!(
            table(&linux, &cfslab),
            "| path | Linux 6.1 | cfslab | cfslab / Linux |\n|---|---:|---:|---:|\n\
             | getpid | 315 | 87 | 0.28 |\n"
        );
    }
}
