//! `make bench`'s wake-ups across CPUs with and without the wake list (docs/performance.md,
//! block `bench:ttwu`): `smpbench` (userland/c/smpbench.c) on cfslab under EEVDF, whose
//! era (6.6) has `TTWU_QUEUE` on, and again with `NO_TTWU_QUEUE`, two CPUs and
//! `-icount shift=0` each, its figures kept in `docs/data/bench.json` under `ttwu`. With the
//! feature a waker leaves the wake-up on the wakee's CPU's list and that CPU finishes it in
//! the IPI's handler; without, the waker takes that CPU's runqueue lock and finishes it
//! itself (`kernel/src/sched/wakelist.rs`). Linux 6.1's figures (the `smp` section's, same
//! QEMU) sit beside them.

use super::bench::DATA;
use super::grouped;
use super::smp_bench::{FIGURES, figures_of};
use serde_json::Value;

/// The two runs: the data's key, the boot options, and the table's heading.
const RUNS: [(&str, &str, &str); 2] = [
    (
        "queued",
        "policy=eevdf",
        "EEVDF, `TTWU_QUEUE` (6.6's default)",
    ),
    (
        "locked",
        "policy=eevdf features=NO_TTWU_QUEUE",
        "EEVDF, `NO_TTWU_QUEUE`",
    ),
];

/// The paths shown: those that cross CPUs by a wake-up, and the one-CPU ping-pong beside
/// them, which the feature leaves alone.
const PATHS: [&str; 4] = [
    "pipe, processes on two CPUs",
    "futex, threads on two CPUs",
    "futex wake to running, on idle CPU 1",
    "futex, threads on one CPU",
];

/// Runs smpbench on cfslab both ways; returns `{ "queued": {label: ns}, "locked": {...} }`.
pub fn generate() -> Result<Value, String> {
    let mut runs = serde_json::Map::new();
    for (key, options, _) in RUNS {
        let output = super::on_cfslab(2, &format!("{options} -- /bin/smpbench"))?;
        runs.insert(key.to_string(), figures_of(&output)?);
    }
    Ok(Value::Object(runs))
}

/// The paths, each under both runs, with their ratio and Linux's figure.
pub fn render(data: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(data).map_err(|e| format!("{DATA}: {e}"))?;
    let ns = |section: &str, run: &str, label: &str| {
        value[section][run][label]
            .as_u64()
            .ok_or_else(|| format!("{DATA} has no {section} figure for {run}, {label}"))
    };
    let mut text = format!(
        "\n| path (two CPUs) | {} | {} | queued / locked | Linux 6.1 |\n|---|---|---|---|---|\n",
        RUNS[0].2, RUNS[1].2
    );
    for label in PATHS {
        let name = FIGURES
            .iter()
            .find(|(l, _, _)| *l == label)
            .map(|(_, name, _)| name)
            .ok_or_else(|| format!("smpbench has no figure {label}"))?;
        let (queued, locked) = (ns("ttwu", "queued", label)?, ns("ttwu", "locked", label)?);
        let linux = ns("smp", "linux", label)?;
        text.push_str(&format!(
            "| {name} | {} ns | {} ns | {:.2} | {} ns |\n",
            grouped(queued),
            grouped(locked),
            queued as f64 / locked.max(1) as f64,
            grouped(linux),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_runs_are_rendered_beside_linux() {
        let figures = |base: u64| {
            json!(
                FIGURES
                    .iter()
                    .map(|(label, _, _)| (label.to_string(), json!(base)))
                    .collect::<serde_json::Map<_, _>>()
            )
        };
        let data = json!({
            "ttwu": { "queued": figures(900), "locked": figures(1000) },
            "smp": { "linux": figures(15000) },
        })
        .to_string();
        let table = render(&data).unwrap();
        assert!(
            table.contains(
                "| pipe ping-pong round trip, processes pinned to CPUs 0 and 1 | 900 ns | 1 000 ns | 0.90 | 15 000 ns |"
            ),
            "{table}"
        );
        assert_eq!(
            table.lines().filter(|l| l.starts_with("| ")).count(),
            1 + PATHS.len()
        );
        assert!(render(&json!({ "ttwu": {} }).to_string()).is_err());
    }
}
