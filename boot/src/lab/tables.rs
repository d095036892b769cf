//! The seeds' tables: one row per variant of the matrix, its figures aggregated over every
//! seed it ran under, rendered as markdown for `target/lab/REPORT.md` and for the documents.
//!
//! The tables are kept, as numbers, in `docs/lab/results.json`, from which `publish.rs` writes
//! and checks the documents' copy (docs/experiments.md).

use super::Outcome;
use crate::status::Status;
use sched::stats::Summary;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The three experiments, in report order.
pub const EXPERIMENTS: [&str; 3] = ["seed000", "seed002", "seed003"];

/// The rows of seed 003's table the documents show (the report has them all).
const DOC_SEED003_ROWS: [&str; 9] = [
    "vanilla",
    "DYN_GRANULARITY",
    "min_granularity/3",
    "NO_START_DEBIT",
    "CLAMP_CHILD_RIGHTMOST",
    "NO_VFORK_SLEEPER_CREDIT",
    "NO_START_DEBIT + DYN_GRANULARITY + CLAMP_CHILD_RIGHTMOST + NO_VFORK_SLEEPER_CREDIT",
    "jobs with I/O",
    "EEVDF (6.6)",
];

/// The figures the seed 003 thread reported (UP, µs, max / avg), for the table.
fn seed003_thread_figures(label: &str) -> &'static str {
    match label {
        "vanilla" => "38278.9 / 7730.1 (43901.0 / 8430.1 in the START_DEBIT run)",
        "DYN_GRANULARITY" => "28698.8 / 7757.1",
        "min_granularity/3" => "22702.1 / 6684.8",
        "NO_START_DEBIT" => "19221.5 / 5159.0",
        _ => "–",
    }
}

/// One row: a variant, with its figures over all its seeds (µs, or counts).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub experiment: String,
    pub label: String,
    /// The options of its seed-1 run (which the report's command reproduces).
    pub options: String,
    /// Did any of its runs fail?
    pub failed: bool,
    /// Its seed-1 run was traced.
    pub traced: bool,
    pub figures: BTreeMap<String, u64>,
}

/// Every row, with how the runs were made.
#[derive(Debug, Clone, PartialEq)]
pub struct Tables {
    pub seconds: u64,
    pub seeds: u64,
    pub shift: u32,
    pub rows: Vec<Row>,
}

/// The samples (µs) of `probe` in a run.
pub fn samples(o: &Outcome, probe: &str) -> Vec<u64> {
    o.of_kind("samples")
        .into_iter()
        .find(|r| r["probe"] == probe)
        .and_then(|r| {
            r["us"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_u64).collect())
        })
        .unwrap_or_default()
}

fn latency_field(o: &Outcome, probe: &str, field: &str) -> Option<u64> {
    o.of_kind("latency")
        .into_iter()
        .find(|r| r["probe"] == probe)
        .and_then(|r| r[field].as_u64())
}

/// The figures of one row from its runs (one per seed).
fn figures(experiment: &str, runs: &[&Outcome]) -> BTreeMap<String, u64> {
    let mut f = BTreeMap::new();
    let all = |probe: &str| -> Vec<u64> { runs.iter().flat_map(|o| samples(o, probe)).collect() };
    let per_seed_max = |probe: &str| -> Vec<u64> {
        runs.iter()
            .filter_map(|o| latency_field(o, probe, "max_us"))
            .collect()
    };
    match experiment {
        "seed000" => {
            let s = Summary::of(&all("sleeper"));
            f.insert("n".into(), s.n as u64);
            f.insert("p50_us".into(), s.p50);
            f.insert("p99_us".into(), s.p99);
            f.insert("max_us".into(), s.max);
            let maxima = per_seed_max("sleeper");
            f.insert(
                "seed_max_lo_us".into(),
                maxima.iter().copied().min().unwrap_or(0),
            );
            f.insert(
                "seed_max_hi_us".into(),
                maxima.iter().copied().max().unwrap_or(0),
            );
        }
        "seed002" => {
            for probe in ["lat3-1", "lat3-2"] {
                let max = per_seed_max(probe).into_iter().max().unwrap_or(0);
                f.insert(format!("{probe}_max_us"), max);
            }
        }
        _ => {
            let s = Summary::of(&all("waker"));
            f.insert("n".into(), s.n as u64);
            f.insert("max_us".into(), s.max);
            f.insert("avg_us".into(), s.avg);
            let missed = runs
                .iter()
                .filter_map(|o| latency_field(o, "waker", "missed"))
                .sum();
            f.insert("missed".into(), missed);
        }
    }
    f
}

impl Tables {
    /// Aggregates the runs of each row (consecutive in matrix order, one per seed).
    pub fn from_outcomes(outcomes: &[Outcome], seconds: u64, seeds: u64, shift: u32) -> Self {
        let mut rows: Vec<Row> = Vec::new();
        let mut groups: Vec<Vec<&Outcome>> = Vec::new();
        for o in outcomes {
            let same = groups.last().is_some_and(|g| {
                g[0].variant.row.experiment == o.variant.row.experiment
                    && g[0].variant.row.label == o.variant.row.label
            });
            if same {
                groups.last_mut().unwrap().push(o);
            } else {
                groups.push(vec![o]);
            }
        }
        for runs in groups {
            let first = runs[0];
            rows.push(Row {
                experiment: first.variant.row.experiment.to_string(),
                label: first.variant.row.label.clone(),
                options: first.variant.options.replace(" trace=on", ""),
                failed: runs.iter().any(|o| o.status != Status::Success),
                traced: runs.iter().any(|o| o.variant.trace),
                figures: figures(first.variant.row.experiment, &runs),
            });
        }
        Tables {
            seconds,
            seeds,
            shift,
            rows,
        }
    }

    /// The JSON kept in `docs/lab/results.json`.
    pub fn to_json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                json!({
                    "experiment": r.experiment,
                    "label": r.label,
                    "options": r.options,
                    "failed": r.failed,
                    "traced": r.traced,
                    "figures": r.figures,
                })
            })
            .collect();
        json!({"seconds": self.seconds, "seeds": self.seeds, "shift": self.shift, "rows": rows})
    }

    /// Reads `to_json`'s output back.
    pub fn from_json(v: &Value) -> Result<Self, String> {
        let number = |v: &Value, name: &str| {
            v[name]
                .as_u64()
                .ok_or_else(|| format!("results.json: no number '{name}'"))
        };
        let text = |v: &Value, name: &str| {
            v[name]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("results.json: no text '{name}'"))
        };
        let mut rows = Vec::new();
        for r in v["rows"].as_array().ok_or("results.json: no rows")? {
            let figures = r["figures"]
                .as_object()
                .ok_or("results.json: a row without figures")?
                .iter()
                .map(|(k, v)| Ok((k.clone(), v.as_u64().ok_or("results.json: a bad figure")?)))
                .collect::<Result<_, String>>()?;
            rows.push(Row {
                experiment: text(r, "experiment")?,
                label: text(r, "label")?,
                options: text(r, "options")?,
                failed: r["failed"].as_bool().unwrap_or(true),
                traced: r["traced"].as_bool().unwrap_or(false),
                figures,
            });
        }
        Ok(Tables {
            seconds: number(v, "seconds")?,
            seeds: number(v, "seeds")?,
            shift: number(v, "shift")? as u32,
            rows,
        })
    }

    /// The markdown table of `experiment`; `shown`: only the rows the documents show.
    pub fn render(&self, experiment: &str, shown: bool) -> String {
        let mut md = String::new();
        let header = match experiment {
            "seed000" => {
                "| variant | n | p50 (ms) | p99 (ms) | max (ms) | max per seed (ms) | command |\n|---|---|---|---|---|---|---|"
            }
            "seed002" => {
                "| policy, run | maxlat lat3-1 (ms) | maxlat lat3-2 (ms) | command |\n|---|---|---|---|"
            }
            _ => {
                "| variant | maximum (µs) | average (µs) | missed | the thread (max / avg) | command |\n|---|---|---|---|---|---|"
            }
        };
        let _ = writeln!(md, "{header}");
        for r in self.rows.iter().filter(|r| r.experiment == experiment) {
            if shown && experiment == "seed003" && !DOC_SEED003_ROWS.contains(&r.label.as_str()) {
                continue;
            }
            let f = |name: &str| r.figures.get(name).copied().unwrap_or(0);
            let mut label = r.label.clone();
            if r.traced {
                label.push_str(" †");
            }
            if r.failed {
                label.push_str(" **(a run failed)**");
            }
            let command = format!(
                "`cargo boot run --release --icount-shift {} --opts \"{}\"`",
                self.shift, r.options
            );
            let cells = match experiment {
                "seed000" => format!(
                    "{} | {} | {} | {} | {} – {}",
                    f("n"),
                    ms(f("p50_us")),
                    ms(f("p99_us")),
                    ms(f("max_us")),
                    ms(f("seed_max_lo_us")),
                    ms(f("seed_max_hi_us"))
                ),
                "seed002" => format!("{} | {}", ms(f("lat3-1_max_us")), ms(f("lat3-2_max_us"))),
                _ => format!(
                    "{} | {} | {} | {}",
                    f("max_us"),
                    f("avg_us"),
                    f("missed"),
                    seed003_thread_figures(&r.label)
                ),
            };
            let _ = writeln!(md, "| {label} | {cells} | {command} |");
        }
        md
    }

    /// The window of `experiment`'s runs, from their `duration=` (all alike).
    fn window_of(&self, experiment: &str) -> u64 {
        self.rows
            .iter()
            .filter(|r| r.experiment == experiment)
            .find_map(|r| {
                r.options
                    .split_whitespace()
                    .find_map(|o| o.strip_prefix("duration="))
                    .and_then(|d| d.strip_suffix('s'))
                    .and_then(|d| d.parse().ok())
            })
            .unwrap_or(self.seconds)
    }

    /// One line saying how `experiment`'s figures were made.
    pub fn provenance(&self, experiment: &str) -> String {
        let seeds = if self.seeds == 1 {
            "seed 1".to_string()
        } else {
            format!("seeds 1–{} aggregated per row", self.seeds)
        };
        format!(
            "*Measured by `make lab`: {} s windows, {seeds}, `-icount shift={},sleep=off`; \
             each command reruns a row's seed-1 run.*",
            self.window_of(experiment),
            self.shift
        )
    }
}

fn ms(us: u64) -> String {
    format!("{}.{:03}", us / 1_000, us % 1_000)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A small table of each shape, for the tests here and in `publish.rs`.
    pub(in crate::lab) fn sample_tables() -> Tables {
        let row = |experiment: &str, label: &str, figures: &[(&str, u64)]| Row {
            experiment: experiment.into(),
            label: label.into(),
            options: format!("run=x duration=1s seed=1 # {label}"),
            failed: false,
            traced: label == "vanilla",
            figures: figures.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        };
        Tables {
            seconds: 1,
            seeds: 2,
            shift: 2,
            rows: vec![
                row(
                    "seed000",
                    "script 1",
                    &[("n", 9), ("p50_us", 1500), ("max_us", 9000)],
                ),
                row("seed002", "o1, A", &[("lat3-1_max_us", 1_000_000)]),
                row(
                    "seed003",
                    "vanilla",
                    &[("max_us", 12_000), ("avg_us", 8_000)],
                ),
                row("seed003", "not in the documents", &[]),
            ],
        }
    }

    #[test]
    fn tables_survive_json_and_render_their_rows() {
        let t = sample_tables();
        assert_eq!(Tables::from_json(&t.to_json()).unwrap(), t);
        let md = t.render("seed003", true);
        assert!(
            md.contains("| vanilla † | 12000 | 8000 | 0 | 38278.9 / 7730.1"),
            "{md}"
        );
        assert!(!md.contains("not in the documents"));
        assert!(t.render("seed003", false).contains("not in the documents"));
        assert!(
            t.render("seed000", true)
                .contains("| script 1 | 9 | 1.500 | 0.000 | 9.000 |")
        );
    }
}
