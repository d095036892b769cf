//! `make bench`'s figures for several CPUs (docs/performance.md, block `bench:smp`): the
//! `smpbench` program (userland/c/smpbench.c) run on cfslab and on Linux 6.1 in the same
//! QEMU, with two CPUs and `-icount shift=0` each, its round trips kept in
//! `docs/data/bench.json` under `smp`.

use super::bench::DATA;
use super::grouped;
use serde_json::{Value, json};

/// The figures smpbench prints, by their label, and the table's names for them.
const FIGURES: [(&str, &str); 3] = [
    (
        "pipe, processes on two CPUs",
        "pipe ping-pong, processes pinned to CPUs 0 and 1",
    ),
    (
        "futex, threads on two CPUs",
        "futex ping-pong, threads pinned to CPUs 0 and 1",
    ),
    (
        "futex, threads on one CPU",
        "futex ping-pong, both threads on CPU 0",
    ),
];

/// Runs smpbench on both kernels; returns `{ "cfslab": {label: ns}, "linux": {...} }`.
pub fn generate() -> Result<Value, String> {
    let cargo = super::cargo();
    let boot = |args: &[&str]| {
        let mut all = vec!["run", "-q", "-p", "boot", "--"];
        all.extend_from_slice(args);
        super::captured(&cargo, &all)
    };
    let cfslab = boot(&[
        "run",
        "--release",
        "--icount-shift",
        "0",
        "--smp",
        "2",
        "--opts",
        "-- /bin/smpbench",
    ])?;
    let linux = boot(&[
        "linux",
        "--icount-shift",
        "0",
        "--smp",
        "2",
        "--timeout",
        "300",
        "--",
        "/bin/smpbench",
    ])?;
    Ok(json!({ "cfslab": figures_of(&cfslab)?, "linux": figures_of(&linux)? }))
}

/// smpbench's lines: `smpbench: LABEL: N ns per round trip`.
fn figures_of(output: &str) -> Result<Value, String> {
    let mut out = serde_json::Map::new();
    for (label, _) in FIGURES {
        let prefix = format!("smpbench: {label}: ");
        let ns: u64 = output
            .lines()
            .find_map(|l| l.trim().strip_prefix(&prefix))
            .and_then(|rest| rest.strip_suffix(" ns per round trip"))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("smpbench printed no figure for {label}"))?;
        out.insert(label.to_string(), json!(ns));
    }
    Ok(Value::Object(out))
}

/// The round trips side by side.
pub fn render(data: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(data).map_err(|e| format!("{DATA}: {e}"))?;
    let ns = |kernel: &str, label: &str| {
        value["smp"][kernel][label]
            .as_u64()
            .ok_or_else(|| format!("{DATA} has no smp figure for {kernel}, {label}"))
    };
    let mut text =
        String::from("\n| round trip (two wake-ups) | cfslab | Linux 6.1 |\n|---|---|---|\n");
    for (label, name) in FIGURES {
        let (ours, linux) = (ns("cfslab", label)?, ns("linux", label)?);
        text.push_str(&format!(
            "| {name} | {} ns | {} ns |\n",
            grouped(ours),
            grouped(linux)
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smpbench_s_lines_are_read_and_rendered() {
        let output = "boot: x\nsmpbench: pipe, processes on two CPUs: 7473 ns per round trip\n\
                      smpbench: futex, threads on two CPUs: 6793 ns per round trip\n\
                      smpbench: futex, threads on one CPU: 4069 ns per round trip\n";
        let figures = figures_of(output).unwrap();
        let data = json!({ "smp": { "cfslab": figures.clone(), "linux": figures } }).to_string();
        let table = render(&data).unwrap();
        assert!(
            table.contains(
                "| pipe ping-pong, processes pinned to CPUs 0 and 1 | 7 473 ns | 7 473 ns |"
            ),
            "{table}"
        );
        assert!(figures_of("smpbench: a batch failed\n").is_err());
    }
}
