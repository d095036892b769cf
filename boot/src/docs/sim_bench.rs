//! `make bench`'s figures for the N-CPU simulator (docs/performance.md, block `bench:sim`):
//! the scheduler crate's `smp` bench (`cargo bench -p sched --bench smp`) — how long 10 s of
//! the Wasted Cores paper's machine (64 CPUs, 8 nodes) running 640 jobs at once takes to
//! simulate, the goal being at most 10 s, and what one `load_balance` call costs at 2, 8
//! and 64 CPUs — kept in docs/data/bench.json under `sim`.

use super::bench::DATA;
use super::grouped;
use serde_json::{Value, json};

/// The goal: 10 simulated seconds of the paper's machine in at most this many host seconds.
const GOAL_S: f64 = 10.0;
/// The machine sizes whose `load_balance` call is timed.
const CPUS: [u64; 3] = [2, 8, 64];

/// Runs the bench and returns its figures.
pub fn generate() -> Result<Value, String> {
    let cargo = super::cargo();
    let output = super::captured(&cargo, &["bench", "-p", "sched", "--bench", "smp"])?;
    let line = |prefix: &str| {
        output
            .lines()
            .find(|l| l.starts_with(prefix))
            .ok_or_else(|| format!("the smp bench printed no '{prefix}' line"))
    };
    let number_after = |text: &str, marker: &str| -> Result<f64, String> {
        text.split(marker)
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.trim_start_matches('(').parse().ok())
            .ok_or_else(|| format!("no number after '{marker}' in: {text}"))
    };
    let mut load_balance = serde_json::Map::new();
    for cpus in CPUS {
        let text = line(&format!("load_balance: {cpus} CPUs"))?;
        let ns = number_after(text, "each: ")?;
        load_balance.insert(cpus.to_string(), json!(ns as u64));
    }
    let make = line("sim: 64 CPUs")?;
    Ok(json!({
        "make_host_s": number_after(make, "simulated in ")?,
        "make_tasks": number_after(make, "host time ")? as u64,
        "load_balance_ns": load_balance,
    }))
}

/// The table.
pub fn render(data: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(data).map_err(|e| format!("{DATA}: {e}"))?;
    let sim = &value["sim"];
    let host = sim["make_host_s"]
        .as_f64()
        .ok_or_else(|| format!("{DATA} has no sim.make_host_s"))?;
    let tasks = sim["make_tasks"]
        .as_u64()
        .ok_or_else(|| format!("{DATA} has no sim.make_tasks"))?;
    let verdict = if host <= GOAL_S { "met" } else { "missed" };
    let mut out = format!(
        "\n| what | figure | goal |\n|---|---|---|\n\
         | 10 s of 64 CPUs in 8 nodes running `make -j640` ({} tasks started) | {host:.2} s of host time | at most {GOAL_S:.0} s: {verdict} |\n",
        grouped(tasks)
    );
    for cpus in CPUS {
        let ns = sim["load_balance_ns"][cpus.to_string()]
            .as_u64()
            .ok_or_else(|| format!("{DATA} has no sim.load_balance_ns.{cpus}"))?;
        out.push_str(&format!(
            "| one `load_balance` of the top domain, {cpus} CPUs, one hog each | {} ns | — |\n",
            grouped(ns)
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_says_whether_the_goal_is_met() {
        let data = r#"{"sim":{"make_host_s":1.68,"make_tasks":17838,
            "load_balance_ns":{"2":436,"8":1572,"64":12181}}}"#;
        let table = super::render(data).unwrap();
        assert!(
            table.contains("| 1.68 s of host time | at most 10 s: met |"),
            "{table}"
        );
        let ns = super::grouped(12_181);
        assert!(
            table.contains(&format!("64 CPUs, one hog each | {ns} ns")),
            "{table}"
        );
        assert!(super::render(r#"{"sim":{}}"#).is_err());
    }
}
