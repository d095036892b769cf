//! `make bench`'s figures for several CPUs (docs/performance.md, block `bench:smp`): the
//! `smpbench` program (userland/c/smpbench.c) run on cfslab and on Linux 6.1 in the same
//! QEMU, with two CPUs and `-icount shift=0` each, its figures kept in
//! `docs/data/bench.json` under `smp`. The goal on each path: at most half Linux's figure.

use super::bench::DATA;
use super::grouped;
use serde_json::{Value, json};

/// The figures smpbench prints, by their label, the table's names for them, and whether the
/// goal ("at most half Linux's") names the path: an IPI round trip, a cross-CPU wake-up, the
/// reschedule-to-running latency; the others are there to compare.
pub(super) const FIGURES: [(&str, &str, bool); 5] = [
    (
        "pipe, processes on two CPUs",
        "pipe ping-pong round trip, processes pinned to CPUs 0 and 1",
        true,
    ),
    (
        "futex, threads on two CPUs",
        "futex ping-pong round trip, threads pinned to CPUs 0 and 1 (a cross-CPU wake-up each way)",
        true,
    ),
    (
        "futex, threads on one CPU",
        "futex ping-pong round trip, both threads on CPU 0",
        false,
    ),
    (
        "membarrier, a thread running on CPU 1",
        "an IPI round trip: `membarrier` (private expedited) with a thread running on CPU 1",
        true,
    ),
    (
        "futex wake to running, on idle CPU 1",
        "reschedule to running: a futex wake until the sleeper runs on idle CPU 1, median",
        true,
    ),
];

/// The goal on every path: cfslab at most this fraction of Linux's figure.
const GOAL_RATIO: f64 = 0.5;

/// Runs smpbench on both kernels; returns `{ "cfslab": {label: ns}, "linux": {...} }`.
pub fn generate() -> Result<Value, String> {
    let (cfslab, linux) = super::on_both_kernels(2, &["/bin/smpbench"])?;
    Ok(json!({
        "cfslab": figures_of(&cfslab)?,
        "linux": figures_of(&linux)?,
        "cfslab_lock_waits": lock_waits_of(&cfslab)?,
    }))
}

/// smpbench's lines: `smpbench: LABEL: N ns per WHAT`.
pub(super) fn figures_of(output: &str) -> Result<Value, String> {
    let mut out = serde_json::Map::new();
    for (label, _, _) in FIGURES {
        let prefix = format!("smpbench: {label}: ");
        let ns: u64 = output
            .lines()
            .find_map(|l| l.trim().strip_prefix(&prefix))
            .and_then(|rest| rest.split_once(" ns per "))
            .and_then(|(n, _)| n.parse().ok())
            .ok_or_else(|| format!("smpbench printed no figure for {label}"))?;
        out.insert(label.to_string(), json!(ns));
    }
    Ok(Value::Object(out))
}

/// The line cfslab's smpbench adds from `/proc/lock_stat`: `[waits, spins]` of the
/// scheduler's locks (its own and the runqueues') over the run.
pub(super) fn lock_waits_of(output: &str) -> Result<Value, String> {
    let rest = output
        .lines()
        .find_map(|l| l.trim().strip_prefix("smpbench: scheduler lock waits: "))
        .ok_or("smpbench printed no scheduler lock waits")?;
    let (waits, spins) = rest
        .strip_suffix(" spins")
        .and_then(|r| r.split_once(", "))
        .ok_or_else(|| format!("smpbench's lock waits line: {rest}"))?;
    let number = |n: &str| n.parse::<u64>().map_err(|e| format!("{n}: {e}"));
    Ok(json!([number(waits)?, number(spins)?]))
}

/// The figures side by side, with their ratio and whether it meets the goal.
pub fn render(data: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(data).map_err(|e| format!("{DATA}: {e}"))?;
    let ns = |kernel: &str, label: &str| {
        value["smp"][kernel][label]
            .as_u64()
            .ok_or_else(|| format!("{DATA} has no smp figure for {kernel}, {label}"))
    };
    let mut text = String::from(
        "\n| path (two CPUs) | cfslab | Linux 6.1 | cfslab / Linux | goal met (at most 0.5) |\n\
         |---|---|---|---|---|\n",
    );
    for (label, name, goal) in FIGURES {
        let (ours, linux) = (ns("cfslab", label)?, ns("linux", label)?);
        let ratio = ours as f64 / linux.max(1) as f64;
        let met = match goal {
            true if ratio <= GOAL_RATIO => "yes",
            true => "no",
            false => "–",
        };
        text.push_str(&format!(
            "| {name} | {} ns | {} ns | {ratio:.2} | {met} |\n",
            grouped(ours),
            grouped(linux),
        ));
    }
    text.push_str(&lock_waits_line(&value, "smp", "Over cfslab's whole run")?);
    Ok(text)
}

/// The line under a table of cfslab's runs: how often, during the run `lead` names, a CPU
/// found one of the scheduler's locks taken (`[waits, spins]`, `cfslab_lock_waits` of the data's
/// `section`).
pub(super) fn lock_waits_line(value: &Value, section: &str, lead: &str) -> Result<String, String> {
    let waits = &value[section]["cfslab_lock_waits"];
    let (Some(waits), Some(spins)) = (waits[0].as_u64(), waits[1].as_u64()) else {
        return Err(format!("{DATA} has no {section} lock waits for cfslab"));
    };
    Ok(format!(
        "\n{lead}, a CPU found one of the scheduler's locks (its own or a runqueue's) taken {} \
         times, and spun {} times in all waiting (`/proc/lock_stat`).\n",
        grouped(waits),
        grouped(spins)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smpbench_s_lines_are_read_and_rendered() {
        let output = "boot: x\nsmpbench: pipe, processes on two CPUs: 7473 ns per round trip\n\
                      smpbench: futex, threads on two CPUs: 6793 ns per round trip\n\
                      smpbench: futex, threads on one CPU: 4069 ns per round trip\n\
                      smpbench: membarrier, a thread running on CPU 1: 383 ns per call\n\
                      smpbench: futex wake to running, on idle CPU 1: 2518 ns per wake-up\n\
                      smpbench: scheduler lock waits: 1234, 56789 spins\n";
        let ours = figures_of(output).unwrap();
        let linux =
            figures_of(&output.replace("2518", "5000").replace("383 ns", "1515 ns")).unwrap();
        let waits = lock_waits_of(output).unwrap();
        let data = json!({ "smp": { "cfslab": ours, "linux": linux, "cfslab_lock_waits": waits } })
            .to_string();
        let table = render(&data).unwrap();
        assert!(
            table.contains(
                "| pipe ping-pong round trip, processes pinned to CPUs 0 and 1 | 7 473 ns | 7 473 ns | 1.00 | no |"
            ),
            "{table}"
        );
        // The one-CPU path is shown beside the others, with no goal of its own.
        assert!(
            table.contains("| 4 069 ns | 4 069 ns | 1.00 | – |"),
            "{table}"
        );
        assert!(
            table.contains("| 383 ns | 1 515 ns | 0.25 | yes |"),
            "{table}"
        );
        assert!(
            table.contains("| 2 518 ns | 5 000 ns | 0.50 | no |"),
            "{table}"
        );
        assert!(
            table.contains("taken 1 234 times, and spun 56 789 times"),
            "{table}"
        );
        assert!(figures_of("smpbench: a batch failed\n").is_err());
        assert!(lock_waits_of("smpbench: a batch failed\n").is_err());
    }
}
