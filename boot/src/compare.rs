//! `boot compare`: the same user program on both kernels in the same machine, side by side —
//! the first part of issue [4/5]'s `make compare`: the system-call paths that `microbench`
//! measures ([3/5]'s table), on cfslab's optimised kernel and on Linux 6.1 (linux.rs), both
//! at `-icount shift=0`, where one virtual nanosecond is one guest instruction. It prints the
//! table and writes it to `target/compare/REPORT.md` with the exact kernels and commands.

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

/// Runs microbench on cfslab (optimised) and on Linux, prints and writes the report.
pub fn run(memory_mib: u32, verbose: bool) -> Result<Status, String> {
    eprintln!("boot: compare: {PROGRAM} on cfslab (release kernel, -icount shift={ICOUNT_SHIFT})");
    let kernel = crate::build::build_kernel(crate::build::Profile::Release)?;
    let mut machine = Machine::new(crate::image::build_image(&kernel)?);
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
        Some(ICOUNT_SHIFT),
        memory_mib,
        TIMEOUT,
        verbose,
        qemu::Echo::Nothing,
    )?;
    if status != Status::Success {
        eprint!("{linux_output}");
        return Err(format!("{PROGRAM} failed on Linux ({status})"));
    }
    let table = table(&parse(&linux_output), &parse(&cfslab_output));
    let report = format!(
        "# cfslab against Linux: the system-call paths\n\n\
         `{PROGRAM}` (userland/bench) on both kernels in QEMU with `-icount \
         shift={ICOUNT_SHIFT}` (one guest instruction per virtual nanosecond), {memory_mib} MiB, \
         one CPU; each figure is the fastest of five batches, in guest instructions.\n\n\
         - cfslab: the optimised kernel, `cargo boot run --release --icount-shift 0 --opts \"-- {PROGRAM}\"`\n\
         - Linux: `{version}`, `cargo boot linux --icount-shift 0 -- {PROGRAM}`\n\n{table}"
    );
    let dir = crate::build::target_dir().join("compare");
    let path = dir.join("REPORT.md");
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, &report))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    print!("{table}");
    eprintln!("boot: compare: report written to {}", path.display());
    Ok(Status::Success)
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
