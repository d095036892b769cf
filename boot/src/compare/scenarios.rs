//! `make compare`'s scenarios: the seeds' workloads as user programs (userland/workloads),
//! the same binaries on Linux 6.1 and on cfslab in the same QEMU, with the same `-icount`
//! shift, memory, one CPU and HZ (Debian's kernel ticks at 250 Hz, so cfslab runs `hz=250`).
//! Linux is set up by its init (`linuxinit`: tunables through debugfs, features, a `cpu`
//! cgroup per uid); cfslab by its boot options. The 2.6.24 tunables come from
//! `sched::params`, the one definition cfslab's own era preset uses.

use super::figures::{self, Figures};
use crate::linux;
use crate::qemu::{self, Machine};
use crate::status::Status;
use sched::params::{Era, FairParams};
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

/// Seconds of virtual time each program runs.
pub const SECONDS: u64 = 10;
/// The lab's shift: 4 ns per instruction.
pub const ICOUNT_SHIFT: u32 = crate::lab::LAB_ICOUNT_SHIFT;
const TIMEOUT: Duration = Duration::from_secs(900);

/// One scenario: a program line, how Linux and cfslab are set up for it, and what to read.
pub struct Scenario {
    pub name: &'static str,
    pub heading: &'static str,
    /// The program and its words (`{S}` is the run's seconds).
    pub program: &'static str,
    /// linuxinit's options ahead of the program.
    pub linux: Vec<String>,
    /// cfslab's rows: (label, boot options).
    pub cfslab: &'static [(&'static str, &'static str)],
    /// The latency probe (or probe prefix) the table summarises.
    pub probe: &'static str,
    /// What the seed's thread reported, and what the issue measured by hand on Linux.
    pub seed: &'static str,
    /// Where the kernels differ by more than a tick, why (which mechanism, which era).
    pub why: &'static str,
}

/// `--tunable` options that give Linux `era`'s tunables (6.1's debugfs names).
fn tunables_of(era: Era) -> Vec<String> {
    let t = FairParams::preset(era).tunables;
    [
        ("latency_ns", t.latency_ns),
        ("min_granularity_ns", t.min_granularity_ns),
        ("wakeup_granularity_ns", t.wakeup_granularity_ns),
    ]
    .into_iter()
    .flat_map(|(name, value)| ["--tunable".to_string(), format!("{name}={value}")])
    .collect()
}

/// cfslab with 2.6.36's placement (GENTLE_FAIR_SLEEPERS, as 6.1 has) and 2.6.24's
/// tunables: what Linux 6.1 runs when linuxinit gives it 2.6.24's tunables.
const GENTLE_WITH_2_6_24_TUNABLES: &str = "era=2.6.36 group=uid hz=250 latency_ns=20000000 \
                                           min_granularity_ns=4000000 \
                                           wakeup_granularity_ns=10000000";

/// Why 6.1 with 2.6.24's tunables makes the grouped sleeper wait where 2.6.24 does not.
const WHY_GENTLE: &str = "Linux 6.1 is not 2.6.24 with other numbers: since 2.6.32 a waking \
    task's sleeper credit is half of sched_latency (GENTLE_FAIR_SLEEPERS), 10 ms with 2.6.24's \
    20 ms, which no longer exceeds the 10 ms wake-up granularity, so the sleeper often cannot \
    preempt the hog of its own group and waits for that hog's slice to end at a tick \
    (docs/scheduler.md §4.2, §5.1); 2.6.24 credits the whole 20 ms and preempts at once. \
    cfslab's 2.6.36 era with 2.6.24's tunables, which has 6.1's credit rule, waits too and \
    lands near Linux's average. Its wait is steadier than Linux's for the reason the no-groups \
    scenario below traces: no kernel threads shift the hogs' turns, so the sleeper wakes at the \
    same point of them every time (this scenario itself is not traced).";

/// The sleeper without groups: Linux's few long waits, unexplained.
const WHY_NO_GROUPS: &str = "Linux's p99 of 6-8 ms comes from about one wake-up in ten, \
    each delayed to the next tick. Traced (linuxinit --trace, with sched_stat_runtime's \
    vruntimes), half of them came while the running hog was the runqueue's minimum: the \
    sleeper is then placed exactly half of sched_latency (10 ms, GENTLE_FAIR_SLEEPERS) behind \
    it, which equals the 10 ms wakeup granularity, and 'more than the granularity' fails, so it \
    waits until the hog has run min_granularity (4 ms) and a tick preempts it; the others came \
    with kernel threads (kworker, kcompactd, rcu) queued ahead of it. cfslab has the same rule \
    but no background threads: the sleeper's own run restarts the hogs' turns, so it wakes at \
    the same point of a turn every time, just after the running hog has passed the other, and \
    always preempts.";

/// Why the EEVDF row differs from Linux 6.1 (which runs CFS).
const WHY_EEVDF: &str = "6.1 runs CFS, and cfslab's CFS row (2.6.36's rules with 6.1's \
    tunables) matches it. EEVDF is 6.6's policy, shown for contrast, not a model of 6.1: a \
    waking entity gets no sleeper credit, only its lag, and queues behind those whose deadlines \
    come first, here sometimes the other uid's group (seed 003's section describes the same \
    placement for new threads).";

/// Why seed 003's maxima differ by more than a tick.
const WHY_SEED003: &str = "The averages and the 99th percentiles agree within a tick; the \
    maxima are one sample each, and Linux's moves by several ms from run to run (29.0 ms and \
    20.2 ms in two runs of this comparison) while cfslab's, deterministic, stays at one value \
    between them. The EEVDF row is 6.6's policy, shown for contrast (seed 003's section).";

/// The scenarios, in the report's order.
pub fn all() -> Vec<Scenario> {
    let grouped = |era| {
        let mut options = tunables_of(era);
        options.push("--group-uid".into());
        options
    };
    let s2 = "/bin/sched_py -t {S} 2";
    let lat3 = "/bin/lat3 -t {S} 1000000 1000000";
    let seed003 = "/bin/together /bin/wakeup_latency -t {S} 10 + /bin/makej -t {S} 10";
    vec![
        Scenario {
            name: "seed000-groups-2.6.24",
            heading: "seed 000, script 2, a group per uid, 2.6.24's tunables",
            program: s2,
            linux: grouped(Era::V2_6_24),
            cfslab: &[
                ("cfslab 2.6.24", "era=2.6.24 group=uid hz=250"),
                (
                    "cfslab 2.6.36, 2.6.24's tunables",
                    GENTLE_WITH_2_6_24_TUNABLES,
                ),
            ],
            probe: "sleeper",
            seed: "the thread: erratic, up to ~20 ms; Linux 6.1 by hand: median 12.0, max 20.0 ms",
            why: WHY_GENTLE,
        },
        Scenario {
            name: "seed000-groups-6.1",
            heading: "seed 000, script 2, a group per uid, 6.1's own tunables",
            program: s2,
            linux: vec!["--group-uid".into()],
            cfslab: &[
                (
                    "cfslab 2.6.36 (6.1's tunables)",
                    "era=2.6.36 group=uid hz=250",
                ),
                ("cfslab EEVDF (6.6)", "policy=eevdf group=uid hz=250"),
            ],
            probe: "sleeper",
            seed: "Linux 6.1 by hand: median 4.0, max 8.0 ms",
            why: WHY_EEVDF,
        },
        Scenario {
            name: "seed000-no-groups",
            heading: "seed 000, script 2, no groups, 2.6.24's tunables",
            program: s2,
            linux: tunables_of(Era::V2_6_24),
            cfslab: &[
                ("cfslab 2.6.24", "era=2.6.24 group=none hz=250"),
                (
                    "cfslab 2.6.36, 2.6.24's tunables",
                    "era=2.6.36 group=none hz=250 latency_ns=20000000 \
                     min_granularity_ns=4000000 wakeup_granularity_ns=10000000",
                ),
            ],
            probe: "sleeper",
            seed: "the thread: \"in the noise\"; Linux 6.1 by hand: max around 1 ms",
            why: WHY_NO_GROUPS,
        },
        Scenario {
            name: "seed002",
            heading: "seed 002, run A: two lat3 loops of 1 s",
            program: lat3,
            linux: vec![],
            cfslab: &[
                ("cfslab 2.6.36", "era=2.6.36 hz=250"),
                ("cfslab EEVDF (6.6)", "policy=eevdf hz=250"),
                ("cfslab O(1) (2.6.11)", "policy=o1 hz=250"),
            ],
            probe: "lat3",
            seed: "the thread (2.6.11): maxlat 1–2.5 s; Linux 6.1 by hand: maxlat 8.3 ms",
            why: "O(1) is the thread's kernel, not Linux 6.1's: its 100 ms time slices and the \
                  interactivity bonus keep a spinning loop off the CPU for a whole slice of the \
                  other (seed 002's section).",
        },
        Scenario {
            name: "seed003-start-debit",
            heading: "seed 003: wakeup_latency beside make -j10, START_DEBIT",
            program: seed003,
            linux: vec![],
            cfslab: &[
                ("cfslab 2.6.36", "era=2.6.36 hz=250"),
                ("cfslab EEVDF (6.6)", "policy=eevdf hz=250"),
            ],
            probe: "waker",
            seed: "the thread (2.6.36): max 43.9 / avg 8.4 ms; Linux 6.1 by hand: max 25.2 / avg 10.7 ms",
            why: WHY_SEED003,
        },
        Scenario {
            name: "seed003-no-start-debit",
            heading: "seed 003: wakeup_latency beside make -j10, NO_START_DEBIT",
            program: seed003,
            linux: vec!["--feature".into(), "NO_START_DEBIT".into()],
            cfslab: &[("cfslab 2.6.36", "era=2.6.36 hz=250 features=NO_START_DEBIT")],
            probe: "waker",
            seed: "the thread (2.6.36): max 19.2 / avg 5.2 ms; Linux 6.1 by hand: max 10.8 / avg 5.1 ms",
            why: "",
        },
    ]
}

impl Scenario {
    fn argv(&self, seconds: u64) -> Vec<String> {
        self.program
            .replace("{S}", &seconds.to_string())
            .split(' ')
            .map(String::from)
            .collect()
    }

    /// The command that runs it on Linux.
    pub fn linux_command(&self, seconds: u64) -> String {
        let mut words = self.linux.clone();
        words.extend(self.argv(seconds));
        format!(
            "cargo boot linux --icount-shift {ICOUNT_SHIFT} -- {}",
            words.join(" ")
        )
    }
}

/// One kernel's run of a scenario: its label, figures and how long it took.
pub struct Outcome {
    pub label: String,
    pub figures: Figures,
}

/// Runs `scenario` on Linux and on each cfslab row (`image`: cfslab's disk image).
pub fn run(
    scenario: &Scenario,
    image: &Path,
    seconds: u64,
    memory_mib: u32,
) -> Result<Vec<Outcome>, String> {
    let argv = scenario.argv(seconds);
    let mut outcomes = Vec::new();
    let started = Instant::now();
    let mut linux_argv = scenario.linux.clone();
    linux_argv.extend(argv.iter().cloned());
    let (status, output, version) = linux::run(
        &linux_argv,
        &[],
        linux::Hardware {
            icount_shift: Some(ICOUNT_SHIFT),
            memory_mib,
            smp: None,
            shape: None,
        },
        TIMEOUT,
        false,
        qemu::Echo::Nothing,
    )?;
    check(scenario, "Linux", status, &output)?;
    eprintln!(
        "compare: {}: Linux ok ({:.0} s)",
        scenario.name,
        started.elapsed().as_secs_f64()
    );
    outcomes.push(Outcome {
        // The version is "PACKAGE VERSION" (linux.rs): the row says "Linux 6.1.192-3".
        label: format!("Linux {}", version.split(' ').nth(1).unwrap_or("6.1")),
        figures: figures::read(&output, scenario.probe),
    });
    for (label, options) in scenario.cfslab {
        let started = Instant::now();
        let mut machine = Machine::new(image.to_path_buf());
        machine.options = format!("{options} -- {}", argv.join(" "));
        machine.icount_shift = Some(ICOUNT_SHIFT);
        machine.memory_mib = memory_mib;
        machine.initramfs = Some(crate::initramfs::build(&[])?);
        let (status, _, output) = qemu::run(&machine, Some(TIMEOUT), qemu::Echo::Nothing)?;
        check(scenario, label, status, &output)?;
        eprintln!(
            "compare: {}: {label} ok ({:.0} s)",
            scenario.name,
            started.elapsed().as_secs_f64()
        );
        outcomes.push(Outcome {
            label: label.to_string(),
            figures: figures::read(&output, scenario.probe),
        });
    }
    Ok(outcomes)
}

fn check(scenario: &Scenario, kernel: &str, status: Status, output: &str) -> Result<(), String> {
    if status == Status::Success {
        return Ok(());
    }
    eprint!("{output}");
    Err(format!("{} failed on {kernel} ({status})", scenario.name))
}

/// The report's section for one scenario: what ran, the table and the CDF plot's link
/// (`plot`: its file name beside the report).
pub fn section(scenario: &Scenario, outcomes: &[Outcome], seconds: u64, plot: &str) -> String {
    let mut out = format!("## {}\n\n{}.\n\n", scenario.heading, scenario.seed);
    if !scenario.why.is_empty() {
        let _ = writeln!(out, "*Why they differ:* {}\n", scenario.why);
    }
    let _ = writeln!(out, "- Linux: `{}`", scenario.linux_command(seconds));
    for (label, options) in scenario.cfslab {
        let _ = writeln!(
            out,
            "- {label}: `cargo boot run --release --icount-shift {ICOUNT_SHIFT} --opts \"{options} -- {}\"`",
            scenario.argv(seconds).join(" ")
        );
    }
    out.push('\n');
    out.push_str(&super::publish::table(outcomes));
    let _ = writeln!(out, "\n![{}]({plot})\n", scenario.heading);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_gets_the_era_s_tunables_from_the_one_preset() {
        let t = FairParams::preset(Era::V2_6_24).tunables;
        let words = tunables_of(Era::V2_6_24);
        assert_eq!(words[1], format!("latency_ns={}", t.latency_ns));
        assert_eq!(words.len(), 6);
        let seed000 = &all()[0];
        assert!(seed000.linux.contains(&"--group-uid".to_string()));
        assert!(
            seed000
                .linux_command(10)
                .ends_with("--group-uid /bin/sched_py -t 10 2"),
            "{}",
            seed000.linux_command(10)
        );
    }

    #[test]
    fn every_scenario_names_its_probe_and_runs_cfslab_at_linux_s_hz() {
        for s in all() {
            assert!(!s.probe.is_empty());
            assert!(
                s.cfslab.iter().all(|(_, o)| o.contains("hz=250")),
                "{}",
                s.name
            );
        }
    }
}
