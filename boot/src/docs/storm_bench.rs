//! `make bench`'s wake-up storm (docs/performance.md, block `bench:storm`): `smpbench storm`
//! (userland/c/smpbench.c) on cfslab and on Linux 6.1 in the same QEMU, at 1, 2, 4 and 8
//! CPUs with `-icount shift=0`, its figures kept in `docs/data/bench.json` under `storm`.
//! One waker wakes eight sleepers spread over the CPUs; the figure is what one wake-up
//! costs the whole machine. The goal: flat as CPUs are added, as Linux's per-runqueue
//! locks keep it; a lock every wake-up takes makes it climb.

use super::bench::DATA;
use super::grouped;
use serde_json::{Value, json};

/// The machines the storm runs on, by their CPUs.
const CPUS: [u32; 4] = [1, 2, 4, 8];

/// Runs the storm on both kernels at each CPU count; returns
/// `{ "cfslab": {"N": ns}, "linux": {"N": ns}, "cfslab_lock_waits": [waits, spins] }`, the
/// waits those of the largest machine.
pub fn generate() -> Result<Value, String> {
    let (mut cfslab, mut linux) = (serde_json::Map::new(), serde_json::Map::new());
    let mut waits = Value::Null;
    for cpus in CPUS {
        let smp = cpus.to_string();
        let (ours, theirs) = super::on_both_kernels(cpus, &["/bin/smpbench", "storm"])?;
        cfslab.insert(smp.clone(), json!(figure_of(&ours, cpus)?));
        linux.insert(smp, json!(figure_of(&theirs, cpus)?));
        waits = super::smp_bench::lock_waits_of(&ours)?;
    }
    Ok(json!({ "cfslab": cfslab, "linux": linux, "cfslab_lock_waits": waits }))
}

/// The storm's line: `smpbench: storm, N CPUs: X ns per wake-up`.
fn figure_of(output: &str, cpus: u32) -> Result<u64, String> {
    let prefix = format!("smpbench: storm, {cpus} CPUs: ");
    output
        .lines()
        .find_map(|l| l.trim().strip_prefix(&prefix))
        .and_then(|rest| rest.strip_suffix(" ns per wake-up"))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("smpbench printed no storm figure for {cpus} CPUs"))
}

/// The figures by CPU count, each beside its own kernel's one-CPU figure.
pub fn render(data: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(data).map_err(|e| format!("{DATA}: {e}"))?;
    let ns = |kernel: &str, cpus: u32| {
        value["storm"][kernel][cpus.to_string()]
            .as_u64()
            .ok_or_else(|| format!("{DATA} has no storm figure for {kernel} at {cpus} CPUs"))
    };
    let mut text = String::from(
        "\n| CPUs | cfslab, per wake-up | × its 1-CPU figure | Linux 6.1, per wake-up | \
         × its 1-CPU figure | cfslab / Linux |\n|---|---|---|---|---|---|\n",
    );
    let (ours_1, linux_1) = (ns("cfslab", 1)?, ns("linux", 1)?);
    for cpus in CPUS {
        let (ours, linux) = (ns("cfslab", cpus)?, ns("linux", cpus)?);
        let times = |n: u64, one: u64| n as f64 / one.max(1) as f64;
        text.push_str(&format!(
            "| {cpus} | {} ns | {:.2} | {} ns | {:.2} | {:.2} |\n",
            grouped(ours),
            times(ours, ours_1),
            grouped(linux),
            times(linux, linux_1),
            times(ours, linux),
        ));
    }
    let largest = CPUS[CPUS.len() - 1];
    let lead = format!("Over cfslab's run on {largest} CPUs");
    text.push_str(&super::smp_bench::lock_waits_line(&value, "storm", &lead)?);
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_storm_s_lines_are_read_and_rendered() {
        let line = |cpus: u32, ns: u64| {
            format!("boot: x\nsmpbench: storm, {cpus} CPUs: {ns} ns per wake-up\n")
        };
        assert_eq!(figure_of(&line(4, 9723), 4), Ok(9723));
        assert!(figure_of(&line(4, 9723), 8).is_err());
        assert!(figure_of("smpbench: the storm failed\n", 1).is_err());
        let ours: serde_json::Map<String, Value> = CPUS
            .iter()
            .map(|&c| (c.to_string(), json!(3000 * u64::from(c))))
            .collect();
        let linux: serde_json::Map<String, Value> =
            CPUS.iter().map(|&c| (c.to_string(), json!(6000))).collect();
        let data = json!({ "storm": {
            "cfslab": ours, "linux": linux, "cfslab_lock_waits": [376, 1589]
        } })
        .to_string();
        let table = render(&data).unwrap();
        assert!(
            table.contains("| 1 | 3 000 ns | 1.00 | 6 000 ns | 1.00 | 0.50 |"),
            "{table}"
        );
        assert!(
            table.contains("| 8 | 24 000 ns | 8.00 | 6 000 ns | 1.00 | 4.00 |"),
            "{table}"
        );
        assert!(table.contains("taken 376 times"), "{table}");
        assert!(render(&json!({ "storm": {} }).to_string()).is_err());
    }
}
