//! `make compare` on several CPUs: the same static programs on Linux 6.1 and on cfslab in
//! the same QEMU under `-icount`, with the same CPUs and NUMA nodes — hogs spreading, a
//! waker and its wakee, and two of the Wasted Cores bugs' workloads (userland/c/csmp.c and
//! wasted.c). Linux's `cpu` cgroup per uid (`linuxinit --group-uid`) stands for cfslab's
//! `group=uid`. Each run is read down to what the program saw and whether cores idled
//! beside waiting work ([`Reading`]). Linux's runs differ from boot to boot (its timers
//! fall at different instants against QEMU's turns), so its row runs [`LINUX_RUNS`] times
//! and the table shows every run; cfslab's repeat byte for byte (its boot CPU anchors the
//! machine before the others start: docs/kernel.md), so each of its rows runs once. The data is
//! kept in docs/data/compare-smp.json and rendered as the block `compare:smp` of
//! docs/compare.md.

use crate::linux;
use crate::qemu::{self, Machine};
use crate::shape::Shape;
use crate::status::Status;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// Where the figures are kept.
pub const DATA: &str = "docs/data/compare-smp.json";
/// Linux's row runs this many times.
pub const LINUX_RUNS: usize = 3;
const ICOUNT_SHIFT: u32 = 2;
const TIMEOUT: Duration = Duration::from_secs(600);

/// What one run's program saw, as the table shows it, and whether it shows cores wasted.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub figure: String,
    pub wasted: bool,
}

/// One scenario: a program on a machine, its rows on cfslab, and how to read a run.
pub struct SmpScenario {
    pub name: &'static str,
    pub heading: &'static str,
    pub program: &'static str,
    pub cpus: u32,
    /// NUMA nodes (1: none).
    pub nodes: u32,
    /// The workload's uids each get a group (Linux: a `cpu` cgroup each).
    pub per_uid: bool,
    /// cfslab's rows: a label and the boot options (a `run=` scenario runs its own program).
    pub cfslab: Vec<(&'static str, String)>,
    pub read: fn(&str) -> Option<Reading>,
}

/// The figures after `prefix` on the console's line that starts with it.
fn after<'a>(output: &'a str, prefix: &str) -> Option<&'a str> {
    output.lines().find_map(|l| l.trim().strip_prefix(prefix))
}

/// `node0=A node1=B ...` (wasted.c's per-node counts) as numbers.
pub fn node_counts(text: &str) -> Vec<u64> {
    let counts = text.split_whitespace().filter_map(|w| w.split_once('='));
    counts.filter_map(|(_, n)| n.parse().ok()).collect()
}

/// `spread: N hogs on M CPUs`: cores idle while hogs share CPUs if M < N.
fn read_spread(output: &str) -> Option<Reading> {
    let words: Vec<&str> = after(output, "spread: ")?.split_whitespace().collect();
    let (hogs, cpus): (u64, u64) = (words.first()?.parse().ok()?, words.get(3)?.parse().ok()?);
    Some(Reading {
        figure: format!("{hogs} hogs on {cpus} CPUs"),
        wasted: cpus < hogs,
    })
}

/// `affine: the wakee slept on CPU S behind a hog and woke on CPU W`: it woke behind the
/// hog, with CPUs idle, if W = S.
fn read_affine(output: &str) -> Option<Reading> {
    let text = after(output, "affine: the wakee slept on CPU ")?;
    let (slept, rest) = text.split_once(' ')?;
    let woke = rest.rsplit(' ').next()?;
    Some(Reading {
        figure: format!("slept on CPU {slept}, woke on CPU {woke}"),
        wasted: slept == woke,
    })
}

/// `imbalance: jobs ended: node0=..`: the hogs' nodes (0 and 2) have a free CPU each, a
/// third of the six; under a sixth of the jobs there means their free CPUs idled.
fn read_imbalance(output: &str) -> Option<Reading> {
    let n = node_counts(after(output, "imbalance: jobs ended:")?);
    let total: u64 = n.iter().sum();
    let on_hogs_nodes = n.first()? + n.get(2)?;
    Some(Reading {
        figure: format!("jobs per node {}", join(&n)),
        wasted: on_hogs_nodes * 6 < total,
    })
}

/// `construction: threads at three quarters: node0=..`: none on node 3 means node 3 idled
/// beside node 1's waiting threads.
fn read_construction(output: &str) -> Option<Reading> {
    let n = node_counts(after(output, "construction: threads at three quarters:")?);
    Some(Reading {
        figure: format!("threads per node {}", join(&n)),
        wasted: *n.get(3)? == 0,
    })
}

fn join(numbers: &[u64]) -> String {
    let texts: Vec<String> = numbers.iter().map(u64::to_string).collect();
    texts.join(", ")
}

/// The eras' rows, with `group=uid` where the scenario groups by uid.
fn era_rows(per_uid: bool) -> Vec<(&'static str, String)> {
    let group = if per_uid { " group=uid" } else { "" };
    vec![
        ("2.6.24", format!("era=2.6.24{group}")),
        ("2.6.36", format!("era=2.6.36{group}")),
        ("6.6", format!("policy=eevdf{group}")),
    ]
}

/// The kernel scenario `name` of the Wasted Cores lab (`bootopts::wasted`) on its machine:
/// its program and grouping, and as rows the eras, then 6.6 with 4.1's switches and with
/// the fix.
fn wasted(
    name: &'static str,
    heading: &'static str,
    read: fn(&str) -> Option<Reading>,
) -> SmpScenario {
    let s = bootopts::wasted::scenario(name).expect("a Wasted Cores scenario");
    let mut cfslab = era_rows(s.per_uid);
    cfslab.push(("6.6, 4.1's switches", format!("run={name}")));
    cfslab.push(("6.6, the fix", format!("run={name} features={}", s.fix)));
    SmpScenario {
        name,
        heading,
        program: s.argv,
        cpus: bootopts::wasted::CPUS,
        nodes: bootopts::wasted::NODES,
        per_uid: s.per_uid,
        cfslab,
        read,
    }
}

/// The scenarios, in the table's order.
pub fn all() -> Vec<SmpScenario> {
    vec![
        SmpScenario {
            name: "smp-spread",
            heading: "four hogs forked at once",
            program: "/bin/csmp spread 4 200",
            cpus: 4,
            nodes: 1,
            per_uid: false,
            cfslab: era_rows(false),
            read: read_spread,
        },
        SmpScenario {
            name: "smp-affine",
            heading: "a wakee asleep behind a hog, woken from another CPU",
            program: "/bin/csmp affine",
            cpus: 4,
            nodes: 1,
            per_uid: false,
            cfslab: era_rows(false),
            read: read_affine,
        },
        wasted(
            "wasted-group-imbalance",
            "Group Imbalance: a build beside two hogs, a group per uid",
            read_imbalance,
        ),
        wasted(
            "wasted-group-construction",
            "Scheduling Group Construction: an application pinned to nodes 1 and 3",
            read_construction,
        ),
    ]
}

impl SmpScenario {
    /// The machine's QEMU shape.
    fn shape(&self) -> Result<Shape, String> {
        Shape::flat(self.cpus).with_nodes(self.nodes, false)
    }

    /// The words of `boot linux` after ` -- ` (linuxinit's options first).
    fn linux_words(&self) -> Vec<String> {
        let mut words = Vec::new();
        if self.per_uid {
            words.push("--group-uid".to_string());
        }
        words.extend(self.program.split(' ').map(String::from));
        words
    }

    /// cfslab's command line for row `options`: the machine's `smp=`, and the program
    /// unless the row runs a scenario of its own.
    fn cfslab_options(&self, options: &str) -> String {
        match options.starts_with("run=") {
            true => format!("{options} smp={}", self.cpus),
            false => format!("{options} smp={} -- {}", self.cpus, self.program),
        }
    }

    /// How the machine is described: `4 CPUs`, `8 CPUs in 4 NUMA nodes`.
    fn machine(&self) -> String {
        match self.nodes {
            1 => format!("{} CPUs", self.cpus),
            n => format!("{} CPUs in {n} NUMA nodes", self.cpus),
        }
    }
}

/// Runs every scenario on both kernels (with `quick`: Linux once, and of cfslab's rows only
/// 6.6 — the system test's check that each runs and reads on both) and returns the data.
pub fn generate(image: &Path, memory_mib: u32, quick: bool) -> Result<String, String> {
    let runs = if quick { 1 } else { LINUX_RUNS };
    let mut version = String::new();
    let mut scenarios = Vec::new();
    for s in all() {
        let mut linux = Vec::new();
        for run in 1..=runs {
            eprintln!("boot: compare: {} on Linux, run {run}", s.name);
            let (output, v) = on_linux(&s, memory_mib)?;
            version = v;
            linux.push(reading(&s, &output, "Linux")?.to_json());
        }
        let mut rows = Vec::new();
        for (label, options) in s.cfslab.iter().filter(|(l, _)| !quick || *l == "6.6") {
            eprintln!("boot: compare: {} on cfslab, {label}", s.name);
            let output = on_cfslab(&s, image, memory_mib, options)?;
            let readings = [reading(&s, &output, label)?.to_json()];
            rows.push(json!({"label": label, "options": options, "runs": readings}));
        }
        scenarios.push(json!({
            "name": s.name,
            "heading": s.heading,
            "program": s.program,
            "machine": s.machine(),
            "per_uid": s.per_uid,
            "linux": linux,
            "cfslab": rows,
        }));
    }
    let data = json!({"linux_version": version, "scenarios": scenarios});
    serde_json::to_string_pretty(&data).map_err(|e| e.to_string())
}

impl Reading {
    fn to_json(&self) -> Value {
        json!({"figure": self.figure, "wasted": self.wasted})
    }
}

fn reading(s: &SmpScenario, output: &str, kernel: &str) -> Result<Reading, String> {
    (s.read)(output).ok_or_else(|| format!("{}: no figure in {kernel}'s output:\n{output}", s.name))
}

fn on_linux(s: &SmpScenario, memory_mib: u32) -> Result<(String, String), String> {
    let hardware = linux::Hardware {
        icount_shift: Some(ICOUNT_SHIFT),
        memory_mib,
        smp: Some(s.cpus),
        shape: Some(s.shape()?),
    };
    let words = s.linux_words();
    let (status, output, version) =
        linux::run(&words, &[], hardware, TIMEOUT, false, qemu::Echo::Nothing)?;
    if status != Status::Success {
        return Err(format!("{} failed on Linux ({status}):\n{output}", s.name));
    }
    Ok((output, version))
}

fn on_cfslab(
    s: &SmpScenario,
    image: &Path,
    memory_mib: u32,
    options: &str,
) -> Result<String, String> {
    let mut machine = Machine::new(image.to_path_buf());
    machine.options = s.cfslab_options(options);
    machine.icount_shift = Some(ICOUNT_SHIFT);
    machine.memory_mib = memory_mib;
    machine.smp = Some(s.cpus);
    machine.shape = Some(s.shape()?);
    machine.initramfs = Some(crate::initramfs::build(&[])?);
    let (status, _, output) = qemu::run(&machine, Some(TIMEOUT), qemu::Echo::Nothing)?;
    if status != Status::Success {
        return Err(format!(
            "{} ({options}) failed on cfslab ({status}):\n{output}",
            s.name
        ));
    }
    Ok(output)
}

/// The table: per scenario, Linux's runs and cfslab's rows, each with what the program saw
/// and whether cores idled beside waiting work.
pub fn render(data: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(data).map_err(|e| format!("{DATA}: {e}"))?;
    let version = value["linux_version"].as_str().unwrap_or("?");
    let mut out = format!(
        "\nLinux: `{version}`. \"Cores wasted\": the run shows the symptom its scenario looks \
         for (below the table).\n\n\
         | scenario (machine) | kernel | what the program saw | cores wasted |\n|---|---|---|---|\n"
    );
    let scenarios = value["scenarios"].as_array().ok_or("no scenarios")?;
    for s in scenarios {
        let name = format!(
            "`{}` ({})",
            s["name"].as_str().unwrap_or("?"),
            s["machine"].as_str().unwrap_or("?")
        );
        let group = if s["per_uid"] == true {
            ", a cgroup per uid"
        } else {
            ""
        };
        let (figures, wasted) = runs_cells(&s["linux"])?;
        out.push_str(&format!(
            "| {name} | Linux 6.1{group} | {figures} | {wasted} |\n"
        ));
        for row in s["cfslab"].as_array().ok_or("no cfslab rows")? {
            let (figures, wasted) = runs_cells(&row["runs"])?;
            let label = row["label"].as_str().unwrap_or("?");
            out.push_str(&format!("| | cfslab {label} | {figures} | {wasted} |\n"));
        }
    }
    Ok(out)
}

/// A row's runs as two cells: each run's figure, and in how many cores were wasted.
fn runs_cells(runs: &Value) -> Result<(String, String), String> {
    let runs = runs.as_array().ok_or("a row without runs")?;
    let figures: Vec<&str> = runs.iter().filter_map(|r| r["figure"].as_str()).collect();
    let wasted = runs.iter().filter(|r| r["wasted"] == true).count();
    let verdict = match (wasted, runs.len()) {
        (0, _) => "no".to_string(),
        (w, n) if w == n => "yes".to_string(),
        (w, n) => format!("{w} of {n} runs"),
    };
    Ok((figures.join("; "), verdict))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_program_s_line_reads_as_a_figure_and_a_verdict() {
        let spread = read_spread("hog 0 was on CPU 1 halfway\nspread: 4 hogs on 3 CPUs\n");
        assert_eq!(
            spread,
            Some(Reading {
                figure: "4 hogs on 3 CPUs".into(),
                wasted: true
            })
        );
        let affine =
            read_affine("affine: the wakee slept on CPU 1 behind a hog and woke on CPU 2\n");
        assert_eq!(affine.map(|r| r.wasted), Some(false));
        // 7 of 96 jobs on the hogs' nodes: under a sixth.
        let bug = read_imbalance("imbalance: jobs ended: node0=3 node1=45 node2=4 node3=44\n");
        assert_eq!(bug.clone().map(|r| r.wasted), Some(true));
        assert_eq!(
            bug.map(|r| r.figure),
            Some("jobs per node 3, 45, 4, 44".into())
        );
        let fixed = read_imbalance("imbalance: jobs ended: node0=20 node1=28 node2=21 node3=27\n");
        assert_eq!(fixed.map(|r| r.wasted), Some(false));
        let c = read_construction(
            "construction: threads at three quarters: node0=0 node1=4 node2=0 node3=0\n",
        );
        assert_eq!(c.map(|r| r.wasted), Some(true));
        assert_eq!(read_spread("nothing\n"), None);
    }

    #[test]
    fn a_scenario_row_boots_its_own_program_or_the_scenario_s() {
        let scenarios = all();
        let imbalance = &scenarios[2];
        assert_eq!(
            imbalance.cfslab_options("era=2.6.24 group=uid"),
            "era=2.6.24 group=uid smp=8 -- /bin/wasted imbalance 8 96 50"
        );
        assert_eq!(
            imbalance.cfslab_options("run=wasted-group-imbalance features=LB_MIN_LOAD"),
            "run=wasted-group-imbalance features=LB_MIN_LOAD smp=8"
        );
        assert_eq!(
            imbalance.linux_words().join(" "),
            "--group-uid /bin/wasted imbalance 8 96 50"
        );
        assert_eq!(imbalance.machine(), "8 CPUs in 4 NUMA nodes");
    }
}
