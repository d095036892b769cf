//! The Wasted Cores lab's kernel figures (docs/wasted-cores.md, block `wasted:kernel`): each
//! `run=wasted-*` scenario (`bootopts::wasted`) booted on 8 vCPUs in 4 NUMA nodes with 4.1's
//! switches, then with its fix, traced (`trace=on`): the program's per-node counts and the
//! invariant checker's figures, kept in docs/data/wasted-kernel.json; each run's picture of
//! its CPUs' runqueues in docs/wasted/ (read back from the trace, `crate::rq_lengths`); its
//! trace as ftrace text and Perfetto JSON, one track per CPU, in target/wasted/.

use super::grouped;
use bootopts::wasted::{CPUS, NODES, SCENARIOS, Scenario};
use serde_json::{Value, json};

/// Where the figures are kept.
pub const DATA: &str = "docs/data/wasted-kernel.json";
/// The pictures' resolution.
const SAMPLE_US: u64 = 1_000;

/// A scenario's two runs: 4.1's switches, and the fix on top.
fn runs(s: &Scenario) -> [(&'static str, String); 2] {
    [
        ("4.1", String::new()),
        ("fix", format!(" features={}", s.fix)),
    ]
}

/// Boots each scenario's runs and returns their figures.
pub fn generate() -> Result<String, String> {
    let traces = super::root().join("target/wasted");
    std::fs::create_dir_all(&traces).map_err(|e| format!("{}: {e}", traces.display()))?;
    let mut scenarios = Vec::new();
    for s in &SCENARIOS {
        let mut out = Vec::new();
        for (variant, extra) in runs(s) {
            let trace_file = format!("target/wasted/{}-{variant}.trace", s.name);
            let options = format!("run={}{extra}", s.name);
            let (cpus, nodes) = (CPUS.to_string(), NODES.to_string());
            let output = super::boot_run(&[
                "--smp",
                &cpus,
                "--numa",
                &nodes,
                "--icount-shift",
                "2",
                "--timeout",
                "600",
                "--trace",
                &trace_file,
                "--opts",
                &options,
            ])?;
            let trace = std::fs::read_to_string(super::root().join(&trace_file))
                .map_err(|e| format!("{trace_file}: {e}"))?;
            let samples = crate::rq_lengths::from_ftrace(&trace, CPUS as usize, SAMPLE_US);
            let picture = format!(
                "docs/wasted/kernel-{}-{}.svg",
                s.name,
                variant.replace('.', "-")
            );
            let title = format!(
                "{} in the kernel, {variant}: runqueue length of each CPU",
                s.name
            );
            let per_node = (CPUS / NODES) as usize;
            let svg = crate::heatmap::svg(&title, &samples, SAMPLE_US * 1_000, per_node);
            super::store(&picture, &svg)?;
            let mut run = figures(variant, &options, &output)?;
            run["woken"] = woken_worker(&output, &trace);
            out.push(run);
        }
        scenarios.push(json!({"scenario": s.name, "fix": s.fix, "runs": out}));
    }
    serde_json::to_string_pretty(&json!({ "scenarios": scenarios })).map_err(|e| e.to_string())
}

/// A run's figures from its console: the program's per-node line and the invariant's.
fn figures(variant: &str, options: &str, output: &str) -> Result<Value, String> {
    let line = output.lines().find(|l| l.contains(" node0="));
    let line = line.ok_or_else(|| format!("{options}: no per-node line"))?;
    let nodes = crate::compare::smp::node_counts(line);
    let invariant = output
        .lines()
        .filter_map(|l| l.trim().strip_prefix("RESULT "))
        .filter_map(|j| serde_json::from_str::<Value>(j).ok())
        .find(|v| v["kind"] == "invariant")
        .ok_or_else(|| format!("{options}: no invariant line"))?;
    Ok(json!({
        "name": variant,
        "options": options,
        "nodes": nodes,
        "violations": invariant["violations"],
        "idle_while_waiting_us": invariant["idle_while_waiting_us"],
        "wasted_cpu_us": invariant["wasted_cpu_us"],
    }))
}

/// Overload-on-Wakeup's worker (`wasted wakeup` prints its pid): the CPU it slept on, as
/// its first `sched_waking` names it, and the first move from then on — how long after the
/// wake-up, and to which CPU. Null for the other scenarios.
fn woken_worker(output: &str, trace: &str) -> Value {
    let Some(pid) = output.lines().find_map(|l| {
        let pid = l.trim().strip_prefix(bootopts::wasted::WAKEUP_WORKER)?;
        pid.parse::<u64>().ok()
    }) else {
        return Value::Null;
    };
    let of_worker = |event: &'static str| {
        crate::ftrace::lines(trace).filter(move |l| {
            l.event == event && l.field("pid").and_then(|p| p.parse().ok()) == Some(pid)
        })
    };
    let Some(waking) = of_worker("sched_waking").next() else {
        return Value::Null;
    };
    let moved = of_worker("sched_migrate_task").find(|l| l.at_us >= waking.at_us);
    json!({
        "slept_on": waking.field("target_cpu").and_then(|c| c.parse::<u64>().ok()),
        "moved_after_us": moved.as_ref().map(|l| l.at_us - waking.at_us),
        "moved_to": moved.and_then(|l| l.field("dest_cpu")?.parse::<u64>().ok()),
    })
}

/// How a woken worker's placement reads in the table.
fn woken_cell(woken: &Value) -> String {
    if woken.is_null() {
        return "—".to_string();
    }
    let slept_on = woken["slept_on"].as_u64().unwrap_or(0);
    match (woken["moved_after_us"].as_u64(), woken["moved_to"].as_u64()) {
        (Some(0), Some(to)) => format!("slept on CPU {slept_on}, woken on CPU {to}"),
        (Some(us), Some(to)) => format!(
            "woken on CPU {slept_on}, moved to CPU {to} {:.1} ms later",
            us as f64 / 1000.0
        ),
        _ => format!("woken on CPU {slept_on}, stayed"),
    }
}

/// The table: per scenario and run, the tasks per node and the checker's figures.
pub fn render(data: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(data).map_err(|e| format!("{DATA}: {e}"))?;
    let scenarios = value["scenarios"]
        .as_array()
        .ok_or_else(|| format!("{DATA} has no scenarios"))?;
    let mut out = String::from(
        "\n| scenario | run | tasks per node (0, 1, 2, 3) | violations | idle while a task waited | CPU time wasted | a woken worker |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for s in scenarios {
        let name = s["scenario"].as_str().unwrap_or("?");
        for (i, r) in s["runs"].as_array().ok_or("no runs")?.iter().enumerate() {
            let field = |k: &str| r[k].as_u64().ok_or_else(|| format!("{DATA}: no {k}"));
            let nodes: Vec<String> = r["nodes"]
                .as_array()
                .ok_or("no nodes")?
                .iter()
                .map(|n| n.to_string())
                .collect();
            let run = match r["name"].as_str() {
                Some("fix") => format!("`features={}`", s["fix"].as_str().unwrap_or("?")),
                _ => "4.1's switches".to_string(),
            };
            let ms = |us: u64| format!("{} ms", grouped(us / 1_000));
            out.push_str(&format!(
                "| {} | {run} | {} | {} | {} | {} | {} |\n",
                if i == 0 {
                    format!("`{name}`")
                } else {
                    String::new()
                },
                nodes.join(", "),
                field("violations")?,
                ms(field("idle_while_waiting_us")?),
                ms(field("wasted_cpu_us")?),
                woken_cell(&r["woken"]),
            ));
        }
    }
    Ok(out)
}
