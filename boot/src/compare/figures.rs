//! A scenario run's figures, read from the workload programs' `RESULT` lines (the same
//! lines on both kernels: the programs print them, not the kernel) and set out as one row
//! of the report's table: samples, percentiles, missed expiries and the CPU share per uid.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One run's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// Every latency sample of the scenario's probes, µs.
    pub samples: Vec<u64>,
    pub missed: u64,
    /// CPU share per uid (fractions of the run's window, summed over that uid's tasks).
    pub share_by_uid: BTreeMap<u64, f64>,
}

/// Reads the program RESULT lines of `output` whose probe starts with `probe`.
pub fn read(output: &str, probe: &str) -> Figures {
    let mut figures = Figures::default();
    for line in output.lines() {
        let Some(json) = line.trim().strip_prefix("RESULT ") else {
            continue;
        };
        let Ok(result) = serde_json::from_str::<Value>(json) else {
            continue;
        };
        if result.get("program").is_none() {
            continue;
        }
        let of_probe = result["probe"]
            .as_str()
            .is_some_and(|p| p.starts_with(probe));
        match result["kind"].as_str() {
            Some("samples") if of_probe => figures.samples.extend(
                result["us"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_u64),
            ),
            Some("latency") if of_probe => figures.missed += result["missed"].as_u64().unwrap_or(0),
            Some("cpu") => {
                let uid = result["uid"].as_u64().unwrap_or(0);
                *figures.share_by_uid.entry(uid).or_default() +=
                    result["share"].as_f64().unwrap_or(0.0);
            }
            _ => {}
        }
    }
    figures
}

/// The table's header.
pub const HEADER: &str = "| kernel | n | p50 ms | p99 ms | max ms | avg ms | missed | CPU by uid |\n\
                          |---|---:|---:|---:|---:|---:|---:|---|\n";

/// One row: `label` and its figures (ms with one decimal, as the seeds print them).
pub fn row(label: &str, f: &Figures) -> String {
    let ms = |us: u64| format!("{:.1}", us as f64 / 1000.0);
    let mut sorted = f.samples.clone();
    sorted.sort_unstable();
    let s = sched::stats::Summary::of(&sorted);
    let mut shares = String::new();
    for (uid, share) in &f.share_by_uid {
        let _ = write!(
            shares,
            "{}uid {uid} {:.0}%",
            if shares.is_empty() { "" } else { " · " },
            share * 100.0
        );
    }
    format!(
        "| {label} | {} | {} | {} | {} | {} | {} | {} |\n",
        s.n,
        ms(s.p50),
        ms(s.p99),
        ms(s.max),
        ms(s.avg),
        f.missed,
        if shares.is_empty() { "-" } else { &shares }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_s_program_lines_become_one_row() {
        let output = "\
boot options: ...\n\
RESULT {\"kind\":\"latency\",\"program\":\"lat3\",\"probe\":\"lat3-1\",\"n\":2,\"missed\":1}\n\
RESULT {\"kind\":\"samples\",\"program\":\"lat3\",\"probe\":\"lat3-1\",\"us\":[4000,6000]}\n\
RESULT {\"kind\":\"samples\",\"program\":\"lat3\",\"probe\":\"lat3-2\",\"us\":[8000]}\n\
RESULT {\"kind\":\"samples\",\"scenario\":\"kernel's own\",\"probe\":\"lat3-1\",\"us\":[1]}\n\
RESULT {\"kind\":\"cpu\",\"program\":\"sched_py\",\"uid\":1,\"share\":0.25}\n\
RESULT {\"kind\":\"cpu\",\"program\":\"sched_py\",\"uid\":1,\"share\":0.25}\n\
RESULT {\"kind\":\"cpu\",\"program\":\"sched_py\",\"uid\":2,\"share\":0.5}\n";
        let f = read(output, "lat3");
        assert_eq!(f.samples, [4000, 6000, 8000]);
        assert_eq!(f.missed, 1);
        assert_eq!(
            row("Linux 6.1", &f),
            "| Linux 6.1 | 3 | 6.0 | 8.0 | 8.0 | 6.0 | 1 | uid 1 50% · uid 2 50% |\n"
        );
    }
}
