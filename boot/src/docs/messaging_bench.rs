//! `make bench`'s hackbench-like load (docs/performance.md, block `bench:messaging`):
//! `messaging` (userland/c/messaging.c) on cfslab and on Linux 6.1 in the same QEMU, at 8
//! CPUs with `-icount shift=0`, its figures kept in `docs/data/bench.json` under
//! `messaging`: the median run's time on both kernels, and on cfslab each class of lock that
//! was waited for during the runs (`/proc/lock_stat`), with the share of the machine's time
//! its waits took — the goal being at most 1 % for every class.

use super::bench::DATA;
use super::grouped;
use serde_json::{Map, Value, json};

/// The machine the load runs on.
const CPUS: u32 = 8;

/// The most a class of lock may take of the machine's time, in percent.
const GOAL_PERCENT: f64 = 1.0;

/// Runs the load on both kernels; returns `{ "cpus": N, "load": what ran, "cfslab_ns": ns,
/// "cfslab_all_ns": ns, "linux_ns": ns, "cfslab_lock_waits": { "CLASS": [waits, spins,
/// cycles] } }`: the median runs' times, and cfslab's runs' together with their waits.
pub fn generate() -> Result<Value, String> {
    let (ours, theirs) = super::on_both_kernels(CPUS, &["/bin/messaging"])?;
    let (load, ours_ns) = run_of(&ours)?;
    Ok(json!({
        "cpus": CPUS,
        "load": load,
        "cfslab_ns": ours_ns,
        "cfslab_all_ns": all_runs_of(&ours)?,
        "linux_ns": run_of(&theirs)?.1,
        "cfslab_lock_waits": lock_waits_of(&ours)?,
    }))
}

/// The run's line, `messaging: N CPUs, LOAD: X ns`: what ran (LOAD) and its time.
fn run_of(output: &str) -> Result<(String, u64), String> {
    let line = output
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("messaging: ") && l.contains(" CPUs, ") && l.ends_with(" ns"))
        .ok_or("messaging printed no time")?;
    let bad = || format!("messaging's line: {line}");
    let (what, ns) = line.rsplit_once(": ").ok_or_else(bad)?;
    let ns = ns.strip_suffix(" ns").and_then(|n| n.parse().ok());
    let load = what.split_once(" CPUs, ").map(|(_, load)| load.to_string());
    Ok((load.ok_or_else(bad)?, ns.ok_or_else(bad)?))
}

/// The line `messaging: the runs together: X ns`.
fn all_runs_of(output: &str) -> Result<u64, String> {
    output
        .lines()
        .find_map(|l| l.trim().strip_prefix("messaging: the runs together: "))
        .and_then(|rest| rest.strip_suffix(" ns")?.parse().ok())
        .ok_or_else(|| "messaging printed no time for its runs together".to_string())
}

/// The lines `messaging: lock waits, CLASS: W, S spins, C cycles`, by class.
fn lock_waits_of(output: &str) -> Result<Value, String> {
    let mut classes = Map::new();
    for rest in output
        .lines()
        .filter_map(|l| l.trim().strip_prefix("messaging: lock waits, "))
    {
        let bad = || format!("messaging's lock waits line: {rest}");
        let (class, figures) = rest.split_once(": ").ok_or_else(bad)?;
        let words: Vec<&str> = figures.split(", ").collect();
        let [waits, spins, cycles] = words[..] else {
            return Err(bad());
        };
        let number = |w: &str, suffix: &str| {
            w.strip_suffix(suffix)
                .unwrap_or(w)
                .parse::<u64>()
                .map_err(|_| bad())
        };
        let figures = [
            number(waits, "")?,
            number(spins, " spins")?,
            number(cycles, " cycles")?,
        ];
        classes.insert(class.to_string(), json!(figures));
    }
    Ok(Value::Object(classes))
}

/// The run beside Linux's, then cfslab's lock classes with their share of the machine.
pub fn render(data: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(data).map_err(|e| format!("{DATA}: {e}"))?;
    let m = &value["messaging"];
    let number = |v: &Value, what: &str| {
        v.as_u64()
            .ok_or_else(|| format!("{DATA} has no messaging {what}"))
    };
    let (cpus, ours, linux) = (
        number(&m["cpus"], "CPU count")?,
        number(&m["cfslab_ns"], "time for cfslab")?,
        number(&m["linux_ns"], "time for Linux")?,
    );
    let ms = |ns: u64| format!("{:.2} ms", ns as f64 / 1e6);
    let load = m["load"]
        .as_str()
        .ok_or_else(|| format!("{DATA} has no messaging load"))?;
    let mut text = format!(
        "\n| load, {cpus} CPUs | cfslab | Linux 6.1 | cfslab / Linux |\n|---|---|---|---|\n\
         | {load} | {} | {} | {:.2} |\n",
        ms(ours),
        ms(linux),
        ours as f64 / linux.max(1) as f64
    );
    let classes = m["cfslab_lock_waits"]
        .as_object()
        .ok_or_else(|| format!("{DATA} has no messaging lock waits"))?;
    text.push_str(
        "\n| lock class (cfslab) | waits | spins | cycles waited | share of the machine's time \
         | at most 1 % |\n|---|---|---|---|---|---|\n",
    );
    let all_runs = number(&m["cfslab_all_ns"], "time of cfslab's runs")?;
    let machine = (all_runs * cpus).max(1) as f64;
    for (class, figures) in classes {
        let figure = |i: usize| number(&figures[i], "lock figure");
        let (waits, spins, cycles) = (figure(0)?, figure(1)?, figure(2)?);
        let percent = 100.0 * cycles as f64 / machine;
        let met = if percent <= GOAL_PERCENT { "yes" } else { "no" };
        text.push_str(&format!(
            "| {class} | {} | {} | {} | {percent:.1} % | {met} |\n",
            grouped(waits),
            grouped(spins),
            grouped(cycles),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_s_lines_are_read_and_rendered() {
        let output = "boot: x\nmessaging: 8 CPUs, 4 groups of 4 senders and 4 receivers, 3200 \
                      messages of 100 bytes, median of 5 runs: 18190220 ns\n\
                      messaging: the runs together: 90000000 ns\n\
                      messaging: lock waits, Pipe: 13, 13 spins, 4242200 cycles\n\
                      messaging: lock waits, Sched: 72, 498 spins, 71500669 cycles\n";
        let load = "4 groups of 4 senders and 4 receivers, 3200 messages of 100 bytes, \
                    median of 5 runs";
        assert_eq!(run_of(output), Ok((load.to_string(), 18_190_220)));
        assert!(run_of("messaging: a task failed\n").is_err());
        assert_eq!(all_runs_of(output), Ok(90_000_000));
        let waits = lock_waits_of(output).unwrap();
        assert_eq!(waits["Sched"], json!([72, 498, 71_500_669]));
        assert!(lock_waits_of("messaging: lock waits, Sched: 72\n").is_err());
        let data = json!({ "messaging": {
            "cpus": 8, "load": "pairs", "cfslab_ns": 10_000_000, "linux_ns": 5_000_000,
            "cfslab_all_ns": 10_000_000,
            "cfslab_lock_waits": { "Pipe": [1, 2, 400_000], "Sched": [3, 4, 2_000_000] }
        } })
        .to_string();
        let table = render(&data).unwrap();
        assert!(
            table.contains("| pairs | 10.00 ms | 5.00 ms | 2.00 |"),
            "{table}"
        );
        // 400 000 cycles of 8 CPUs × 10 ms: 0.5 %; 2 000 000: 2.5 %.
        assert!(
            table.contains("| Pipe | 1 | 2 | 400 000 | 0.5 % | yes |"),
            "{table}"
        );
        assert!(
            table.contains("| Sched | 3 | 4 | 2 000 000 | 2.5 % | no |"),
            "{table}"
        );
        assert!(render(&json!({ "messaging": {} }).to_string()).is_err());
    }
}
