//! The system-call paths (`compare --paths`, which `make bench` runs too): `microbench`'s
//! figures on both kernels go to `docs/data/paths.json`, and the tables between the
//! `<!-- paths -->` markers (docs/performance.md) are rendered from them — each path with
//! its goal, and the exec of one static C program against its size. The tests render the
//! block again from the stored data (`crate::docs` checks the document holds it).

use crate::docs::grouped;
use crate::markers;
use serde_json::{Value, json};
use std::fmt::Write as _;

/// The system-call paths' figures as `compare --paths` measured them (nanoseconds per
/// call; at `-icount shift=0`, guest instructions).
#[derive(Debug, Clone, PartialEq)]
pub struct PathFigures {
    /// The Linux guest's Debian package and version.
    pub linux_version: String,
    pub linux: Vec<super::Path>,
    pub cfslab: Vec<super::Path>,
}

/// Where `compare --paths` keeps its figures, relative to the workspace root.
pub const PATHS_DATA: &str = "docs/data/paths.json";
/// The marker of the documents' paths table.
pub const PATHS_TAG: &str = "paths";

/// microbench's name of the sleep path's figure.
const OVERSHOOT: &str = "idle 100 ms nanosleep overshoot (worst of 5)";
/// The timer slack a user sleep gets on both kernels (Linux's default `timer_slack_ns`).
const SLACK_NS: u64 = 50_000;
/// The goal for the sleep path: at most this much past the slack.
const OVERSHOOT_GOAL_NS: u64 = 5_000;

/// The reference figures the paths are held to: the same paths measured once on Linux 6.1
/// with equivalent static C programs (`-O2`) in QEMU 7.2 under the same icount, before
/// `microbench` existed. The goal for each path is at most half of its figure. Rows: the
/// name microbench prints, the table's label, the reference (ns).
const REFERENCE: [(&str, &str, u64); 7] = [
    ("getpid", "`getpid`", 328),
    ("sched_yield alone", "`sched_yield` alone", 802),
    (
        "pipe ping-pong round trip",
        "pipe ping-pong round trip",
        12_833,
    ),
    ("fork + exit + wait", "fork + exit + wait", 155_035),
    ("vfork + exit + wait", "vfork + exit + wait", 52_051),
    (
        "vfork + execve + exit + wait",
        "vfork + execve + exit + wait",
        84_265,
    ),
    (OVERSHOOT, "idle 100 ms `nanosleep` overshoot", 55_000),
];

/// Paths with no C reference, held to half of Linux's figure for the same binary: the
/// name microbench prints and the table's label.
const SAME_BINARY: [(&str, &str); 2] = [
    (
        "signal to a handler and back",
        "a signal to a handler and back (`kill`, the handler, `rt_sigreturn`)",
    ),
    (
        "vfork + execve (static C) + exit + wait",
        "vfork + execve of a static musl C program + exit + wait",
    ),
];

/// The exec of the same static C program with a mebibyte more of one section
/// (userland/c/cexit.c): the name microbench prints and what the program has. The first is
/// the plain program, which the others are measured against.
const EXEC_SIZES: [(&str, &str); 4] = [
    ("vfork + execve (static C) + exit + wait", "nothing more"),
    (
        "vfork + execve (static C, 1 MiB more .data) + exit + wait",
        "1 MiB more `.data` (initialised, writable)",
    ),
    (
        "vfork + execve (static C, 1 MiB more .rodata) + exit + wait",
        "1 MiB more `.rodata` (read-only)",
    ),
    (
        "vfork + execve (static C, 1 MiB more .bss) + exit + wait",
        "1 MiB more `.bss` (zeroed, not in the file)",
    ),
];

fn path_list(paths: &[super::Path]) -> Value {
    Value::Object(
        paths
            .iter()
            .map(|p| (p.name.clone(), json!(p.ns)))
            .collect(),
    )
}

impl PathFigures {
    pub fn to_json(&self) -> Value {
        json!({
            "linux_version": self.linux_version,
            "linux": path_list(&self.linux),
            "cfslab": path_list(&self.cfslab),
        })
    }

    pub fn from_json(value: &Value) -> Result<Self, String> {
        let bad = || format!("{PATHS_DATA} is not what compare --paths writes");
        let list = |key: &str| -> Result<Vec<super::Path>, String> {
            value[key]
                .as_object()
                .ok_or_else(bad)?
                .iter()
                .map(|(name, ns)| {
                    Ok(super::Path {
                        name: name.clone(),
                        ns: ns.as_u64().ok_or_else(bad)?,
                    })
                })
                .collect()
        };
        Ok(PathFigures {
            linux_version: value["linux_version"].as_str().ok_or_else(bad)?.to_string(),
            linux: list("linux")?,
            cfslab: list("cfslab")?,
        })
    }

    /// The documents' table: per path, the reference, Linux running the same binary,
    /// cfslab, cfslab's ratio to the reference and whether the goal is met.
    pub fn table(&self) -> String {
        let find =
            |list: &[super::Path], name: &str| list.iter().find(|p| p.name == name).map(|p| p.ns);
        let us = |ns: u64| format!("{:.1} µs", ns as f64 / 1_000.0);
        let mut out = String::from(
            "| path | Linux 6.1 (C programs) | Linux 6.1 (same binary) | cfslab | cfslab / Linux (C) | goal met |\n\
             |---|---:|---:|---:|---:|---|\n",
        );
        for (name, label, reference) in REFERENCE {
            let linux = find(&self.linux, name);
            let Some(cfslab) = find(&self.cfslab, name) else {
                continue;
            };
            let linux = linux.map_or("–".to_string(), |ns| {
                if name == OVERSHOOT {
                    us(ns)
                } else {
                    grouped(ns)
                }
            });
            if name == OVERSHOOT {
                let past = cfslab.saturating_sub(SLACK_NS);
                let met = if past <= OVERSHOOT_GOAL_NS {
                    "yes"
                } else {
                    "no"
                };
                let _ = writeln!(
                    out,
                    "| {label} | {} µs ({} of it slack) | {linux} | {} ({} of it slack) | | {met}: {} past the slack |",
                    reference / 1_000,
                    SLACK_NS / 1_000,
                    us(cfslab),
                    SLACK_NS / 1_000,
                    us(past)
                );
            } else {
                let ratio = cfslab as f64 / reference as f64;
                let met = if ratio <= 0.5 { "yes" } else { "no" };
                let _ = writeln!(
                    out,
                    "| {label} | {} | {linux} | {} | {ratio:.2} | {met} |",
                    grouped(reference),
                    grouped(cfslab)
                );
            }
        }
        // Paths measured after the C references were: held to half of Linux running the
        // same binary.
        for (name, label) in SAME_BINARY {
            let (Some(linux), Some(cfslab)) = (find(&self.linux, name), find(&self.cfslab, name))
            else {
                continue;
            };
            let ratio = cfslab as f64 / linux as f64;
            let met = if ratio <= 0.5 { "yes" } else { "no" };
            let _ = writeln!(
                out,
                "| {label} | – | {} | {} | {ratio:.2} (of the same binary) | {met} |",
                grouped(linux),
                grouped(cfslab)
            );
        }
        out.push_str(&self.exec_sizes_table());
        out
    }

    /// What an exec costs as the binary grows: vfork + execve of the same C program with a
    /// mebibyte more of one section, on both kernels, and how much more than the plain
    /// program that costs. Empty unless cfslab measured the plain program.
    fn exec_sizes_table(&self) -> String {
        let find =
            |list: &[super::Path], name: &str| list.iter().find(|p| p.name == name).map(|p| p.ns);
        let Some(base) = find(&self.cfslab, EXEC_SIZES[0].0) else {
            return String::new();
        };
        let linux_base = find(&self.linux, EXEC_SIZES[0].0);
        let more = |ns: u64, base: u64| {
            let extra = ns as i64 - base as i64;
            let sign = if extra < 0 { "−" } else { "+" };
            format!("{sign}{}", grouped(extra.unsigned_abs()))
        };
        let mut out = String::from(
            "\nvfork + execve + exit + wait of one static musl C program, and of the same \
             program with a mebibyte more of one section (`microbench execve-c`, \
             `execve-c-data`, `execve-c-rodata`, `execve-c-bss`):\n\n\
             | the program has | Linux 6.1 | more than the plain program | cfslab | more than the plain program |\n\
             |---|---:|---:|---:|---:|\n",
        );
        for (name, label) in EXEC_SIZES {
            let Some(cfslab) = find(&self.cfslab, name) else {
                continue;
            };
            let linux = find(&self.linux, name);
            let (linux_more, cfslab_more) = if name == EXEC_SIZES[0].0 {
                (String::new(), String::new())
            } else {
                let linux_more = linux
                    .zip(linux_base)
                    .map_or("–".into(), |(l, b)| more(l, b));
                (linux_more, more(cfslab, base))
            };
            let _ = writeln!(
                out,
                "| {label} | {} | {linux_more} | {} | {cfslab_more} |",
                linux.map_or("–".into(), grouped),
                grouped(cfslab)
            );
        }
        out
    }
}

/// The paths block as the documents hold it, from `docs/data/paths.json`'s text.
pub fn paths_block(data: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(data).map_err(|e| format!("{PATHS_DATA}: {e}"))?;
    Ok(format!("\n{}", PathFigures::from_json(&value)?.table()))
}

/// After `compare --paths`: the figures into `docs/data/paths.json` and the documents'
/// table rewritten from them.
pub fn publish_paths(figures: &PathFigures) -> Result<(), String> {
    let root = crate::build::workspace_root();
    let json = serde_json::to_string_pretty(&figures.to_json()).map_err(|e| e.to_string())? + "\n";
    let data = root.join(PATHS_DATA);
    if let Some(dir) = data.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(&data, &json).map_err(|e| format!("cannot write {PATHS_DATA}: {e}"))?;
    let doc = markers::write_block(&root, PATHS_TAG, &paths_block(&json)?)?;
    eprintln!(
        "boot: compare: {PATHS_DATA} and {}'s paths table refreshed",
        doc.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paths_table_is_rendered_from_the_figures() {
        let path = |name: &str, ns| crate::compare::Path {
            name: name.into(),
            ns,
        };
        let figures = PathFigures {
            linux_version: "6.1.0".into(),
            linux: vec![path("getpid", 315), path(OVERSHOOT, 56_600)],
            cfslab: vec![
                path("getpid", 77),
                path("fork + exit + wait", 90_000),
                path(OVERSHOOT, 56_100),
            ],
        };
        let back = PathFigures::from_json(&figures.to_json()).unwrap();
        assert_eq!(back.linux_version, "6.1.0");
        let table = back.table();
        assert!(
            table.contains("| `getpid` | 328 | 315 | 77 | 0.23 | yes |\n"),
            "{table}"
        );
        assert!(
            table.contains("| fork + exit + wait | 155 035 | – | 90 000 | 0.58 | no |\n"),
            "{table}"
        );
        assert!(
            table.contains("| 56.6 µs | 56.1 µs (50 of it slack) | | no: 6.1 µs past the slack |"),
            "{table}"
        );
        assert!(!table.contains("vfork"), "{table}");
    }

    #[test]
    fn the_exec_sizes_table_is_rendered_beside_linux() {
        let path = |name: &str, ns| crate::compare::Path {
            name: name.into(),
            ns,
        };
        let figures = PathFigures {
            linux_version: "6.1.0".into(),
            linux: vec![
                path(EXEC_SIZES[0].0, 200_000),
                path(EXEC_SIZES[1].0, 210_000),
            ],
            cfslab: vec![
                path(EXEC_SIZES[0].0, 40_000),
                path(EXEC_SIZES[1].0, 500_000),
            ],
        };
        let table = figures.table();
        assert!(
            table.contains(
                "| vfork + execve of a static musl C program + exit + wait | – | 200 000 | 40 000 | 0.20 (of the same binary) | yes |"
            ),
            "{table}"
        );
        assert!(
            table.contains("| nothing more | 200 000 |  | 40 000 |  |\n"),
            "{table}"
        );
        assert!(
            table.contains(
                "| 1 MiB more `.data` (initialised, writable) | 210 000 | +10 000 | 500 000 | +460 000 |\n"
            ),
            "{table}"
        );
        assert!(!table.contains(".rodata"), "{table}");
    }
}
