//! The boot tool's command line. Hand-rolled: three modes and a dozen flags do not need a
//! parsing library, and every error names the flag at fault.

use crate::{gdb, qemu};
use std::path::PathBuf;

/// Options shared by `run` and `gdb`.
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    pub options: Vec<String>,
    pub realtime: bool,
    pub icount_shift: u32,
    /// `--icount-shift` as given (the lab has its own default).
    pub icount_shift_given: Option<u32>,
    /// `None`: the mode's default (300 s for `run`, none for `gdb`).
    pub timeout_secs: Option<u64>,
    pub memory_mib: u32,
    /// `--smp N`: QEMU's `-smp N`; `None` passes no `-smp`, and QEMU's machine has one CPU.
    pub smp: Option<u32>,
    /// `--smp N,sockets=..` or `--numa NODES`: the CPUs' arrangement and nodes.
    pub shape: Option<crate::shape::Shape>,
    pub release: bool,
    pub kernel: Option<PathBuf>,
    pub gdb_port: u16,
    pub no_launch: bool,
    pub verbose: bool,
    /// `run --trace FILE`: where to write the kernel's trace (with `trace=on`).
    pub trace_file: Option<PathBuf>,
    /// `--add FILE...`: host files added under `/bin` in the initramfs.
    pub add: Vec<PathBuf>,
    /// `--busybox`: Debian's busybox and its applets under `/bin` (busybox.rs).
    pub busybox: bool,
    /// `--input FILE`: a script typed at the console.
    pub input: Option<PathBuf>,
    /// `--interactive`: this terminal is the console.
    pub interactive: bool,
    /// `run --profile`: count the guest instructions per kernel function (profile.rs).
    pub profile: bool,
    /// `run --repeat K`: boot K times and check that every run prints the same bytes.
    pub repeat: u32,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            options: Vec::new(),
            realtime: false,
            icount_shift: qemu::DEFAULT_ICOUNT_SHIFT,
            icount_shift_given: None,
            timeout_secs: None,
            memory_mib: qemu::DEFAULT_MEMORY_MIB,
            smp: None,
            shape: None,
            release: false,
            kernel: None,
            gdb_port: gdb::DEFAULT_PORT,
            no_launch: false,
            verbose: false,
            trace_file: None,
            profile: false,
            repeat: 1,
            add: Vec::new(),
            busybox: false,
            input: None,
            interactive: false,
        }
    }
}

#[derive(Debug, PartialEq)]
pub enum Mode {
    Help,
    Run(Args),
    /// `linux`: run a user program on Linux in the same machine (`args.options` holds
    /// `--` and the program).
    Linux(Args),
    /// `compare`: the seeds' scenarios, microbench and the scenarios of several CPUs on
    /// cfslab and on Linux, side by side (or one part of it).
    Compare {
        args: Args,
        part: crate::compare::Part,
    },
    Gdb(Args),
    TestRunner {
        kernel: PathBuf,
        extra: Vec<String>,
    },
    /// The lab: each row runs under seeds 1 to `seeds`, each run measuring `seconds` of
    /// virtual time, `jobs` QEMUs at a time.
    Lab {
        args: Args,
        seconds: u64,
        seeds: u64,
        jobs: usize,
    },
    /// `compare --check`: the documents' tables against `docs/compare/results.json`.
    CompareCheck,
    /// `lab --check`: the documents' tables against `docs/lab/results.json`.
    LabCheck,
    /// `docs`: the documents' generated blocks.
    Docs(crate::docs::Action),
    /// `userland`: build the user programs and print their directory.
    Userland,
    Busybox,
}

fn number<T>(
    flag: &str,
    value: Option<&String>,
    range: std::ops::RangeInclusive<T>,
) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    let value = value.ok_or_else(|| format!("{flag} needs a value"))?;
    let n: T = value
        .parse()
        .map_err(|_| format!("{flag}: '{value}' is not a number"))?;
    if !range.contains(&n) {
        return Err(format!(
            "{flag}: {n} is out of range ({}..={})",
            range.start(),
            range.end()
        ));
    }
    Ok(n)
}

fn parse_args(rest: &[String], gdb_mode: bool) -> Result<Args, String> {
    let mut args = Args::default();
    let mut numa = None;
    let mut sockets_given = false;
    let mut it = rest.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--opts" => {
                let value = it.next().ok_or("--opts needs a value")?;
                args.options.extend(crate::argv::shell_words(value)?);
            }
            "--realtime" => args.realtime = true,
            "--icount-shift" => {
                args.icount_shift = number(arg, it.next(), 0..=10)?;
                args.icount_shift_given = Some(args.icount_shift);
            }
            "--timeout" => args.timeout_secs = Some(number(arg, it.next(), 1..=86_400)?),
            "--memory" => args.memory_mib = number(arg, it.next(), 32..=65_536)?,
            "--smp" => {
                let value = it.next().ok_or("--smp needs a value")?;
                let shape = crate::shape::Shape::parse_smp(value)?;
                args.smp = Some(shape.cpus);
                args.shape = value.contains(',').then_some(shape);
                sockets_given = value.contains("sockets=");
            }
            "--numa" => numa = Some(number(arg, it.next(), 1..=crate::shape::MAX_NODES)?),
            "--release" => args.release = true,
            "--kernel" => args.kernel = Some(it.next().ok_or("--kernel needs a path")?.into()),
            "--verbose" | "-v" => args.verbose = true,
            "--profile" if !gdb_mode => args.profile = true,
            "--repeat" if !gdb_mode => args.repeat = number(arg, it.next(), 1..=100)?,
            "--trace" if !gdb_mode => {
                args.trace_file = Some(it.next().ok_or("--trace needs a file")?.into());
                // Tracing is the kernel's boot option; ask for it too.
                if !args.options.iter().any(|o| o.starts_with("trace=")) {
                    args.options.push("trace=on".into());
                }
            }
            "--input" if !gdb_mode => {
                args.input = Some(it.next().ok_or("--input needs a file")?.into());
            }
            "--interactive" if !gdb_mode => args.interactive = true,
            "--busybox" => args.busybox = true,
            "--add" => {
                let file = it.next().ok_or("--add needs a file")?;
                args.add.push(file.into());
            }
            // ` -- ` and what follows: the program to run and its arguments (boot options
            // end there, as on Linux's command line).
            "--" => {
                args.options.push("--".into());
                args.options.extend(it.by_ref().cloned());
            }
            "--port" if gdb_mode => args.gdb_port = number(arg, it.next(), 1..=65_535)?,
            "--no-launch" if gdb_mode => args.no_launch = true,
            option if option.starts_with('-') => return Err(format!("unknown flag {option}")),
            // Anything else is a boot option; the kernel validates it.
            option => args.options.push(option.to_string()),
        }
    }
    if let Some(nodes) = numa {
        let cpus = args.smp.ok_or("--numa needs --smp")?;
        let shape = args
            .shape
            .unwrap_or_else(|| crate::shape::Shape::flat(cpus));
        args.shape = Some(shape.with_nodes(nodes, sockets_given)?);
    }
    Ok(args)
}

/// `--smp N` for cfslab: the kernel must be told the count too (it refuses to run on a
/// machine whose CPUs disagree with `smp=`), so `smp=N` joins the boot options unless they
/// name one already; it goes before ` -- `, after which every word is the program's.
fn with_smp_option(mut args: Args) -> Args {
    let end = args
        .options
        .iter()
        .position(|o| o == "--")
        .unwrap_or(args.options.len());
    let named = args.options[..end].iter().any(|o| o.starts_with("smp="));
    if let (Some(n), false) = (args.smp, named) {
        args.options.insert(end, format!("smp={n}"));
    }
    args
}

/// Refuses `--smp` where it would be ignored: the lab's and compare's machines are theirs.
fn without_smp(mode: &str, args: Args) -> Result<Args, String> {
    match args.smp.or(args.shape.map(|s| s.cpus)) {
        Some(_) => Err(format!(
            "{mode} takes no --smp (it is for run, gdb and linux)"
        )),
        None => Ok(args),
    }
}

/// Refuses `--repeat` where it would be ignored: only `run` repeats a boot.
fn without_repeat(mode: &str, args: Args) -> Result<Args, String> {
    match args.repeat {
        1 => Ok(args),
        _ => Err(format!("{mode} takes no --repeat (it is run's)")),
    }
}

/// Parses the arguments after the program name.
pub fn parse(argv: &[String]) -> Result<Mode, String> {
    let Some((mode, rest)) = argv.split_first() else {
        return Err("missing mode".into());
    };
    // `--help` (or `-h`) prints the usage on every mode but the test runner, whose further
    // arguments belong to the test harness.
    if mode != "test-runner" && rest.iter().any(|a| a == "--help" || a == "-h") {
        return Ok(Mode::Help);
    }
    match mode.as_str() {
        "run" => {
            let args = with_smp_option(parse_args(rest, false)?);
            if args.repeat > 1 && (args.interactive || args.profile) {
                return Err("--repeat takes neither --interactive nor --profile".into());
            }
            Ok(Mode::Run(args))
        }
        "gdb" => Ok(Mode::Gdb(with_smp_option(parse_args(rest, true)?))),
        "linux" => {
            let args = without_repeat("linux", parse_args(rest, false)?)?;
            match args.options.first().map(String::as_str) {
                Some("--") if args.options.len() > 1 => Ok(Mode::Linux(args)),
                Some(other) if other != "--" => Err(format!(
                    "linux takes no boot options (got {other}): they are cfslab's"
                )),
                _ => Err("linux needs a program: boot linux -- /bin/NAME ARGS".into()),
            }
        }
        "compare" => {
            if rest.iter().any(|a| a == "--check") {
                return Ok(Mode::CompareCheck);
            }
            let has = |flag: &str| rest.iter().any(|a| a == flag);
            let part = match (has("--paths"), has("--several-cpus"), has("--quick")) {
                (false, false, false) => crate::compare::Part::All,
                (true, false, false) => crate::compare::Part::Paths,
                (false, true, quick) => crate::compare::Part::Smp { quick },
                _ => {
                    return Err(
                        "compare takes --paths, or --several-cpus with or without --quick".into(),
                    );
                }
            };
            let flags = ["--paths", "--several-cpus", "--quick"];
            let rest: Vec<String> = rest
                .iter()
                .filter(|a| !flags.contains(&a.as_str()))
                .cloned()
                .collect();
            let args = without_smp("compare", parse_args(&rest, false)?)?;
            let args = without_repeat("compare", args)?;
            if args.options.is_empty() {
                Ok(Mode::Compare { args, part })
            } else {
                Err(format!(
                    "compare takes no boot options or program (got {})",
                    args.options.join(" ")
                ))
            }
        }
        "lab" => {
            let (mut seconds, mut seeds, mut jobs) = (
                10,
                3,
                std::thread::available_parallelism().map_or(2, |n| n.get()),
            );
            let mut others = Vec::new();
            let mut it = rest.iter();
            while let Some(arg) = it.next() {
                match arg.as_str() {
                    "--seconds" => seconds = number(arg, it.next(), 1..=600)?,
                    "--seeds" => seeds = number(arg, it.next(), 1..=20)?,
                    "--jobs" => jobs = number(arg, it.next(), 1..=64)?,
                    "--check" => return Ok(Mode::LabCheck),
                    _ => others.push(arg.clone()),
                }
            }
            Ok(Mode::Lab {
                args: without_repeat("lab", without_smp("lab", parse_args(&others, false)?)?)?,
                seconds,
                seeds,
                jobs,
            })
        }
        "test-runner" => {
            let (kernel, extra) = rest
                .split_first()
                .ok_or("test-runner needs the kernel ELF path")?;
            Ok(Mode::TestRunner {
                kernel: kernel.into(),
                extra: extra.to_vec(),
            })
        }
        "docs" => {
            if rest.iter().any(|a| a == "--check") {
                return if rest.len() == 1 {
                    Ok(Mode::Docs(crate::docs::Action::Check))
                } else {
                    Err("docs --check takes nothing else".into())
                };
            }
            if let Some(other) = rest
                .iter()
                .find(|a| !crate::docs::GENERATORS.contains(&a.as_str()))
            {
                return Err(format!(
                    "docs: no generator '{other}' (there are {})",
                    crate::docs::GENERATORS.join(", ")
                ));
            }
            Ok(Mode::Docs(if rest.is_empty() {
                crate::docs::Action::Render
            } else {
                crate::docs::Action::Generate(rest.to_vec())
            }))
        }
        "userland" if rest.is_empty() => Ok(Mode::Userland),
        "busybox" if rest.is_empty() => Ok(Mode::Busybox),
        "userland" => Err(format!(
            "userland takes no arguments (got {})",
            rest.join(" ")
        )),
        "help" | "--help" | "-h" => Ok(Mode::Help),
        other => Err(format!("unknown mode '{other}'")),
    }
}

#[cfg(test)]
mod tests;
