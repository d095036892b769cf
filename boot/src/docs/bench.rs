//! `make bench`'s figures in the documents (docs/performance.md): `boot docs bench` runs the
//! scheduler crate's criterion bench (`cargo bench -p sched --bench ops`: a cycle's cost per
//! policy and N, then EEVDF's cost relative to CFS's) and the kernel's switch bench in QEMU
//! (`cargo bench -p kernel --bench switch`), keeps the figures in `docs/data/bench.json`, and
//! renders three blocks from them: `bench:ops`, `bench:ratio` and `bench:switch`.

use super::grouped;
use serde_json::{Value, json};
use std::fmt::Write as _;

/// Where the figures are kept, relative to the workspace root.
pub const DATA: &str = "docs/data/bench.json";

/// The ops bench's policies (criterion's function names) and the table's labels.
const POLICIES: [(&str, &str); 4] = [
    ("cfs-flat", "CFS, no groups"),
    ("cfs-grouped", "CFS, per-uid groups"),
    ("eevdf", "EEVDF"),
    ("o1", "O(1)"),
];

/// The ops bench's runqueue sizes.
const SIZES: [u64; 5] = [10, 100, 1_000, 10_000, 100_000];

/// Runs both benches and returns the figures as `bench.json`'s text.
pub fn generate() -> Result<String, String> {
    let cargo = super::cargo();
    let ops = super::captured(&cargo, &["bench", "-p", "sched", "--bench", "ops"])?;
    let switch = super::captured(
        &cargo,
        &[
            "bench",
            "-p",
            "kernel",
            "--target",
            "x86_64-unknown-none",
            "--bench",
            "switch",
        ],
    )?;
    let churn = super::boot_run(&["--icount-shift", "0", "--opts", "-- /bin/churn"])?;
    let criterion = crate::build::target_dir().join("criterion");
    let mut cycle = serde_json::Map::new();
    for (policy, _) in POLICIES {
        let mut sizes = serde_json::Map::new();
        for n in SIZES {
            let file = criterion
                .join(format!("n={n}"))
                .join(policy)
                .join("new/estimates.json");
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            let estimates: Value =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
            // Criterion's figure: the slope of time against iterations when it fitted one,
            // else the mean.
            let ns = ["slope", "mean"]
                .iter()
                .find_map(|k| estimates[k]["point_estimate"].as_f64())
                .ok_or_else(|| format!("{}: no estimate", file.display()))?;
            sizes.insert(n.to_string(), json!(ns.round() as u64));
        }
        cycle.insert(policy.to_string(), Value::Object(sizes));
    }
    let value = json!({
        "cycle_ns": cycle,
        "ratio": ratio_of(&ops)?,
        "switch": switch_of(&switch)?,
        "churn": churn_of(&churn)?,
        "smp": super::smp_bench::generate()?,
        "storm": super::storm_bench::generate()?,
        "ttwu": super::ttwu_bench::generate()?,
        "messaging": super::messaging_bench::generate()?,
        "sim": super::sim_bench::generate()?,
    });
    let text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())? + "\n";
    // Check it renders before keeping it.
    for render in [
        render_ops,
        render_ratio,
        render_switch,
        render_churn,
        super::smp_bench::render,
        super::storm_bench::render,
        super::ttwu_bench::render,
        super::messaging_bench::render,
        super::sim_bench::render,
    ] {
        render(&text)?;
    }
    Ok(text)
}

/// The ratio lines the ops bench prints last: its rounds and, per N, the medians.
fn ratio_of(output: &str) -> Result<Value, String> {
    let header = output
        .lines()
        .find(|l| l.starts_with("EEVDF / CFS cost per cycle (median of "))
        .ok_or("the ops bench printed no EEVDF / CFS ratio")?;
    let rounds: u64 = header
        .trim_start_matches("EEVDF / CFS cost per cycle (median of ")
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or("the ratio's header names no rounds")?;
    let mut rows = Vec::new();
    for line in output.lines().map(str::trim) {
        // `N =     10: CFS    200 ns, EEVDF    254 ns, ratio 1.27`
        let Some(rest) = line.strip_prefix("N =") else {
            continue;
        };
        let words: Vec<&str> = rest
            .split(|c: char| c.is_whitespace() || c == ':' || c == ',')
            .filter(|w| !w.is_empty())
            .collect();
        let bad = || format!("an unexpected ratio line: {line}");
        let number = |i: usize| {
            words
                .get(i)
                .and_then(|w| w.parse::<f64>().ok())
                .ok_or_else(bad)
        };
        rows.push(json!({
            "n": number(0)? as u64,
            "cfs_ns": number(2)? as u64,
            "eevdf_ns": number(5)? as u64,
            "ratio": number(8)?,
        }));
    }
    if rows.is_empty() {
        return Err("the ops bench printed no ratio lines".into());
    }
    Ok(json!({"rounds": rounds, "rows": rows}))
}

/// The switch bench's RESULT lines.
fn switch_of(output: &str) -> Result<Value, String> {
    let mut out = serde_json::Map::new();
    for line in output.lines() {
        let Some(json) = line.trim().strip_prefix("RESULT ") else {
            continue;
        };
        let Ok(result) = serde_json::from_str::<Value>(json) else {
            continue;
        };
        if result["kind"] == "bench"
            && let Some(name) = result["name"].as_str()
        {
            let mut figures = result.as_object().cloned().unwrap_or_default();
            figures.remove("kind");
            figures.remove("name");
            out.insert(name.to_string(), Value::Object(figures));
        }
    }
    for name in ["context_switch", "wakeup"] {
        if !out.contains_key(name) {
            return Err(format!("the switch bench printed no {name} result"));
        }
    }
    Ok(Value::Object(out))
}

/// The churn program's lines (`userland/bench/src/bin/churn.rs`): each batch's cost per
/// mmap/munmap pair, and the sleeper's worst overshoot beside a hog and beside the churn.
fn churn_of(output: &str) -> Result<Value, String> {
    // The figure is the number after the line's last ": ".
    let figure_of =
        |line: &str| -> Option<u64> { line.rsplit(": ").next()?.split(' ').next()?.parse().ok() };
    let batches: Vec<u64> = output
        .lines()
        .filter(|l| l.starts_with("churn: batch "))
        .filter_map(figure_of)
        .collect();
    let overshoot = |beside: &str| {
        output
            .lines()
            .find(|l| l.starts_with(&format!("churn: 1 ms nanosleep overshoot beside {beside}")))
            .and_then(figure_of)
            .ok_or_else(|| format!("the churn printed no overshoot beside {beside}"))
    };
    if batches.len() != 10 {
        return Err(format!(
            "the churn printed {} batches, not 10",
            batches.len()
        ));
    }
    Ok(json!({
        "batch_ns_per_pair": batches,
        "overshoot_beside_hog_ns": overshoot("a hog")?,
        "overshoot_beside_churn_ns": overshoot("the churn")?,
    }))
}

fn parse(data: &str) -> Result<Value, String> {
    serde_json::from_str(data).map_err(|e| format!("{DATA}: {e}"))
}

fn figure(value: &Value, path: &[&str]) -> Result<u64, String> {
    path.iter()
        .fold(value, |v, k| &v[*k])
        .as_u64()
        .ok_or_else(|| format!("{DATA} has no {}", path.join(".")))
}

/// A cycle's cost per policy and N.
pub fn render_ops(data: &str) -> Result<String, String> {
    let value = parse(data)?;
    let mut out = String::from("\n| policy |");
    for (i, n) in SIZES.iter().enumerate() {
        let _ = write!(
            out,
            " {}{} |",
            if i == 0 { "N = " } else { "" },
            grouped(*n)
        );
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(SIZES.len()));
    out.push('\n');
    for (policy, label) in POLICIES {
        let _ = write!(out, "| {label} |");
        for n in SIZES {
            let ns = figure(&value, &["cycle_ns", policy, &n.to_string()])?;
            let _ = write!(out, " {} ns |", grouped(ns));
        }
        out.push('\n');
    }
    Ok(out)
}

/// EEVDF's cost relative to CFS's, as the bench prints it.
pub fn render_ratio(data: &str) -> Result<String, String> {
    let value = parse(data)?;
    let rounds = figure(&value, &["ratio", "rounds"])?;
    let mut out =
        format!("\n```text\nEEVDF / CFS cost per cycle (median of {rounds} alternating rounds):\n");
    let rows = value["ratio"]["rows"]
        .as_array()
        .ok_or_else(|| format!("{DATA} has no ratio rows"))?;
    for row in rows {
        let ratio = row["ratio"]
            .as_f64()
            .ok_or_else(|| format!("{DATA}: a ratio row without its ratio"))?;
        let _ = writeln!(
            out,
            "  N = {:>6}: CFS {:>6} ns, EEVDF {:>6} ns, ratio {ratio:.2}",
            figure(row, &["n"])?,
            figure(row, &["cfs_ns"])?,
            figure(row, &["eevdf_ns"])?,
        );
    }
    out.push_str("```\n");
    Ok(out)
}

/// The kernel's switch and wake-up paths.
pub fn render_switch(data: &str) -> Result<String, String> {
    let value = parse(data)?;
    let switch = figure(&value, &["switch", "context_switch", "ns_each"])?;
    let switches = figure(&value, &["switch", "context_switch", "switches"])?;
    let wakeup = figure(&value, &["switch", "wakeup", "ns_each"])?;
    let wakeups = figure(&value, &["switch", "wakeup", "wakeups"])?;
    Ok(format!(
        "\n| path | cost |\n|---|---|\n\
         | context switch (two threads yielding to each other; {} switches) | {} ns = {} instructions per switch |\n\
         | wake-up and switch (two threads waking each other through wait queues; {} wake-ups) | {} ns per wake-up |\n",
        grouped(switches),
        grouped(switch),
        grouped(switch),
        grouped(wakeups),
        grouped(wakeup)
    ))
}

/// The goals a churn is held to: its last batch at most this many times its first (the
/// kernel's work per pair does not grow), and a sleeper's overshoot beside it within this
/// of its overshoot beside a plain hog (the churn does not hold interrupts off for long).
const CHURN_GROWTH_GOAL: f64 = 1.2;
const CHURN_OVERSHOOT_GOAL_NS: u64 = 10_000;

/// The mmap/munmap churn: its batches, and a sleeper's overshoot beside it.
pub fn render_churn(data: &str) -> Result<String, String> {
    let value = parse(data)?;
    let batches = value["churn"]["batch_ns_per_pair"]
        .as_array()
        .filter(|b| b.len() == 10)
        .ok_or_else(|| format!("{DATA} has no churn batches"))?;
    let batch = |i: usize| {
        batches[i]
            .as_u64()
            .ok_or(format!("{DATA}: a bad churn batch"))
    };
    let (first, last) = (batch(0)?, batch(9)?);
    let growth = last as f64 / first as f64;
    let hog = figure(&value, &["churn", "overshoot_beside_hog_ns"])?;
    let churn = figure(&value, &["churn", "overshoot_beside_churn_ns"])?;
    let met = |ok: bool| if ok { "met" } else { "**not met**" };
    Ok(format!(
        "\n| figure | value | goal |\n|---|---|---|\n\
         | first batch of 10 000 pairs | {} ns per pair | |\n\
         | last (tenth) batch | {} ns per pair: {growth:.2} × the first | ≤ {CHURN_GROWTH_GOAL} ×: {} |\n\
         | 1 ms sleep's worst overshoot beside a hog | {} ns | |\n\
         | the same beside the churn | {} ns | ≤ hog's + {}: {} |\n",
        grouped(first),
        grouped(last),
        met(growth <= CHURN_GROWTH_GOAL),
        grouped(hog),
        grouped(churn),
        grouped(CHURN_OVERSHOOT_GOAL_NS),
        met(churn <= hog + CHURN_OVERSHOOT_GOAL_NS),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_output_is_read_and_rendered() {
        let ops = "n=10/cfs-flat  time: [1 ns 2 ns 3 ns]\n\nEEVDF / CFS cost per cycle (median of 41 alternating rounds):\n\
                   \x20 N =     10: CFS    200 ns, EEVDF    254 ns, ratio 1.27\n\
                   \x20 N = 100000: CFS    452 ns, EEVDF    541 ns, ratio 1.20\n";
        let ratio = ratio_of(ops).unwrap();
        let switch = switch_of(
            "boot: x\nRESULT {\"kind\":\"bench\",\"name\":\"context_switch\",\"switches\":17433,\"ns_each\":981}\n\
             RESULT {\"kind\":\"bench\",\"name\":\"wakeup\",\"wakeups\":20000,\"switches\":20001,\"ns_each\":1296}\n",
        )
        .unwrap();
        let mut cycle = serde_json::Map::new();
        for (policy, _) in POLICIES {
            cycle.insert(
                policy.into(),
                json!({"10": 187, "100": 246, "1000": 350, "10000": 404, "100000": 1418}),
            );
        }
        let data = json!({"cycle_ns": cycle, "ratio": ratio, "switch": switch}).to_string();
        let table = render_ops(&data).unwrap();
        assert!(table.starts_with(
            "\n| policy | N = 10 | 100 | 1 000 | 10 000 | 100 000 |\n|---|---|---|---|---|---|\n"
        ));
        assert!(table.contains("| O(1) | 187 ns | 246 ns | 350 ns | 404 ns | 1 418 ns |\n"));
        assert_eq!(
            render_ratio(&data).unwrap(),
            format!("\n```text\n{}```\n", &ops[ops.find("EEVDF").unwrap()..])
        );
        let switch = render_switch(&data).unwrap();
        assert!(switch.contains("17 433 switches) | 981 ns = 981 instructions per switch |"));
        assert!(switch.contains("20 000 wake-ups) | 1 296 ns per wake-up |"));
        assert!(switch_of("nothing").is_err() && ratio_of("nothing").is_err());
    }

    /// The churn's lines become its figures, and the table says whether each goal is met.
    #[test]
    fn the_churn_is_read_and_held_to_its_goals() {
        let mut lines: String = (1..=10)
            .map(|k| format!("churn: batch {k} of 10: {} ns per pair\n", 1000 + 30 * k))
            .collect();
        lines.push_str(
            "churn: 1 ms nanosleep overshoot beside a hog (worst of 50): 53367 ns\n\
             churn: 1 ms nanosleep overshoot beside the churn (worst of 900): 64000 ns\n",
        );
        let data = json!({"churn": churn_of(&lines).unwrap()}).to_string();
        let table = render_churn(&data).unwrap();
        assert!(table.contains("| 1 300 ns per pair: 1.26 × the first | ≤ 1.2 ×: **not met** |"));
        assert!(
            table.contains("| 64 000 ns | ≤ hog's + 10 000: **not met** |"),
            "{table}"
        );
        assert!(churn_of("churn: batch 1 of 10: 5 ns per pair\n").is_err());
    }
}
