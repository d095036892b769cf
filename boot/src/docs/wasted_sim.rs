//! The Wasted Cores lab's simulator figures (docs/wasted-cores.md, block `wasted:sim`): each
//! bug's workload on the paper's machine in the N-CPU simulator, with 4.1's behaviour and
//! with each fix (`sched::sim::wasted`), kept in docs/data/wasted-sim.json; each run's
//! picture of its cores' runqueues in docs/wasted/ (`crate::heatmap`).

use super::grouped;
use sched::sim::wasted::{Bug, Outcome, run};
use sched::smp::topology::Topology;
use serde_json::{Value, json};

/// Where the figures are kept.
pub const DATA: &str = "docs/data/wasted-sim.json";

/// The paper's own figure for each bug, to set beside the simulator's.
fn papers(bug: Bug) -> &'static str {
    match bug {
        Bug::GroupImbalance => "make 13 % slower (§3.1)",
        Bug::GroupConstruction => "NAS lu 27× slower (Table 1)",
        Bug::OverloadOnWakeup => "TPC-H query 18 22 % slower (Table 2)",
        Bug::MissingDomains => "NAS lu 138× slower (Table 3)",
    }
}

/// The node means of a run's heatmap, two decimals (as integers in hundredths).
fn node_means(o: &Outcome) -> Vec<u64> {
    let t = Topology::opteron_6272();
    (0..t.nodes())
        .map(|n| {
            let cpus = t.node_cpus(n);
            let sum: f64 = cpus.iter().map(|c| o.heatmap.mean(c)).sum();
            (sum / cpus.len() as f64 * 100.0).round() as u64
        })
        .collect()
}

/// A run's name as a file name's part: "paper's fix" → "papers-fix", "4.1" → "4-1".
fn slug(name: &str) -> String {
    let words: Vec<String> = name
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(|w| w.replace('\'', "").to_lowercase())
        .collect();
    words.join("-")
}

/// Runs every bug's variants, draws each run's cores (docs/wasted/), and returns their
/// figures.
pub fn generate() -> Result<String, String> {
    // The machine's nodes are alike: the pictures band each node's CPUs.
    let per_node = Topology::opteron_6272().node_cpus(0).len();
    let mut bugs = Vec::new();
    for bug in Bug::ALL {
        let mut runs = Vec::new();
        for (name, set) in bug.variants() {
            let o = run(bug, &set);
            eprintln!(
                "docs: {} ({name}): done in {} ms",
                bug.scenario(),
                o.completion_ns / 1_000_000
            );
            let picture = format!("docs/wasted/{}-{}.svg", bug.scenario(), slug(name));
            let title = format!("{}, {name}: runqueue length of each core", bug.scenario());
            let h = &o.heatmap;
            super::store(
                &picture,
                &crate::heatmap::svg(&title, &h.samples, h.every_ns, per_node),
            )?;
            runs.push(json!({
                "name": name,
                "completion_ms": o.completion_ns / 1_000_000,
                "watched_from_ms": o.warm_up_ns / 1_000_000,
                "violations": o.invariant.violations,
                "broken_ms": o.invariant.total_ns / 1_000_000,
                "wasted_cpu_ms": o.invariant.wasted_cpu_ns / 1_000_000,
                "node_mean_pct": node_means(&o),
            }));
        }
        bugs.push(json!({"scenario": bug.scenario(), "paper": papers(bug), "runs": runs}));
    }
    serde_json::to_string_pretty(&json!({ "bugs": bugs })).map_err(|e| e.to_string())
}

/// The table: per bug, each run's completion time against the best run's, the checker's
/// figures, and the emptiest and fullest node.
pub fn render(data: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(data).map_err(|e| format!("{DATA}: {e}"))?;
    let bugs = value["bugs"]
        .as_array()
        .ok_or_else(|| format!("{DATA} has no bugs"))?;
    let mut out = String::from(
        "\n| scenario | run | done in | against the best | violations (time) | CPUs wasted, on average | emptiest / fullest node | the paper |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for bug in bugs {
        let runs = bug["runs"].as_array().ok_or("a bug without runs")?;
        let field = |r: &Value, k: &str| r[k].as_u64().ok_or_else(|| format!("{DATA}: no {k}"));
        let best = runs
            .iter()
            .map(|r| field(r, "completion_ms"))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .min()
            .unwrap_or(1)
            .max(1);
        for (i, r) in runs.iter().enumerate() {
            let done = field(r, "completion_ms")?;
            let measured = done.saturating_sub(field(r, "watched_from_ms")?);
            let wasted = field(r, "wasted_cpu_ms")? as f64 / measured.max(1) as f64;
            let nodes: Vec<u64> = r["node_mean_pct"]
                .as_array()
                .ok_or("no node means")?
                .iter()
                .filter_map(Value::as_u64)
                .collect();
            let (lo, hi) = (nodes.iter().min(), nodes.iter().max());
            let pct = |p: Option<&u64>| format!("{:.2}", p.copied().unwrap_or(0) as f64 / 100.0);
            out.push_str(&format!(
                "| {} | {} | {} ms | {:.2}× | {} ({} ms) | {wasted:.1} | {} / {} | {} |\n",
                if i == 0 {
                    format!("`{}`", bug["scenario"].as_str().unwrap_or("?"))
                } else {
                    String::new()
                },
                r["name"].as_str().unwrap_or("?"),
                grouped(done),
                done as f64 / best as f64,
                field(r, "violations")?,
                grouped(field(r, "broken_ms")?),
                pct(lo),
                pct(hi),
                if i == 0 {
                    bug["paper"].as_str().unwrap_or("")
                } else {
                    ""
                },
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_run_s_name_makes_a_file_name() {
        assert_eq!(super::slug("paper's fix"), "papers-fix");
        assert_eq!(super::slug("4.1"), "4-1");
        assert_eq!(super::slug("fix (paper, 4.13)"), "fix-paper-4-13");
    }
}
