//! The kernel's layers, checked on its source: which modules of `kernel/src` name which, and
//! the import cycles that makes (docs/architecture.md, "The layers").
//!
//! How a module names another, and what a cycle is, is `systests::imports`'s.
//!
//! What must hold: the modules everything stands on (the machine, the locks, the CPU's own
//! state, memory, time, the names of tasks, the error numbers) are in no cycle, and the arch
//! entries that call up into `trap` close none, nor do the system calls; the one cycle
//! left is the kernel's core — the scheduler and its process model, the tasks, and the open
//! files the tasks hold, which sleep on the scheduler's wait queues — and it grows no larger
//! than it is (the file tree, /proc and the terminal stand above it). And `PerCpu`, which
//! keeps the running task's address space and files untyped to stay below them all, has
//! one writer of those pointers, the module that reads them back.

use std::collections::BTreeSet;
use std::path::Path;
use systests::imports::{Graph, cycles};

/// The largest cycle allowed: today's, the kernel's core (see the module's docs). It was 29
/// until job control added two modules of the kinds the core holds: process groups
/// (`sched::proc::groups`, the process model's) and the terminal's foreground group
/// (`user::tty::job`, the terminal's), which signal through the scheduler and which the
/// terminal, in the cycle already, calls. 32 since the task table's lookups left
/// `sched/mod.rs` for `sched::table` (code of the core moved, no new dependency). 34 since
/// CPU hotplug: the scheduler's part (`sched::hotplug`, which a CPU's idle loop reports
/// to) and the file tree's (`user::fs::cpus`, `/sys/devices/system/cpu`, as `fs::knobs`
/// is the tree's part of the tunables). Still 34 once `sched/mod.rs` became the scheduler's
/// facade, in no cycle (its state went to `sched::state`, its tick to `sched::tick`), and
/// the measure stopped counting `pub(in PATH)` as naming PATH: what holds the core together
/// now is the task's data (`task` holds its files, thread group, children and exit status,
/// whose modules reach the scheduler's state, which holds the tasks). 26 since the table
/// of open files holds a file of the tree as a `TreeFile` (`user::files`) instead of naming
/// the tree's `NodeFile`: the file tree, `/proc` and `/sys` (`user::fs` and its five
/// modules), and what only they reach (`sched::procview`, `sched::knobs`,
/// `sched::hotplug`), left the core. 24 once the runqueue took its recorder's size from
/// `sched::tracing` rather than `sched::observe`: the reports and gdb's dumps
/// (`sched::observe`, `sched::debugger`) stand above the core. 21 once a file's readiness
/// is `poll`'s to say (`user::syscall::poll`), the console's included: the terminal
/// (`user::tty`, `user::tty::job`) and the process groups it signals
/// (`sched::proc::groups`) left the core, which is now the scheduler, its process model,
/// the task and its open files.
const LARGEST_CYCLE: usize = 21;

/// The modules (by path prefix) the core cycle may hold.
const CORE: [&str; 3] = ["sched", "task", "user"];

/// Modules that must be in no cycle at all.
const LOW: [&str; 12] = [
    "arch",
    "sync",
    "percpu",
    "mm",
    "time",
    "trap",
    "task::id",
    "sched::trace",
    "user::errno",
    "user::syscall",
    "config",
    "console",
];

fn under(module: &str, prefix: &str) -> bool {
    module == prefix || module.starts_with(&format!("{prefix}::"))
}

fn kernel_cycles() -> Vec<Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernel/src");
    cycles(&Graph::new(&root).edges())
}

#[test]
fn the_low_layers_are_in_no_cycle_and_the_core_cycle_does_not_grow() {
    let found = kernel_cycles();
    for cycle in &found {
        for module in cycle {
            assert!(
                !LOW.iter().any(|low| under(module, low)),
                "{module} is in an import cycle: {cycle:?}"
            );
        }
    }
    let largest = found.first().expect("the kernel's core is one cycle");
    assert!(
        largest.iter().all(|m| CORE.iter().any(|c| under(m, c))),
        "the largest cycle reaches beyond sched, task and user: {largest:?}"
    );
    assert!(
        largest.len() <= LARGEST_CYCLE,
        "the largest import cycle grew to {} modules: {largest:?}",
        largest.len()
    );
    // docs/architecture.md says how large the core is: the size measured here, not a
    // number typed once and left behind.
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md"),
    )
    .unwrap();
    let stated = doc
        .split("holds it at its size, ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse::<usize>().ok());
    assert_eq!(
        stated,
        Some(largest.len()),
        "docs/architecture.md's size of the core"
    );
    // Every other cycle is a module and its helper.
    for cycle in &found[1..] {
        assert!(cycle.len() <= 2, "another import cycle: {cycle:?}");
    }
    println!(
        "largest import cycle: {} modules: {largest:?}",
        largest.len()
    );
    // The size the docs give is the one held here.
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md");
    let docs = std::fs::read_to_string(docs).expect("docs/architecture.md");
    let stated = format!("its size, {LARGEST_CYCLE} modules");
    assert!(
        docs.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains(&stated),
        "docs/architecture.md does not say \"{stated}\""
    );
}

#[test]
fn the_analysis_finds_a_cycle_through_a_re_export_and_ignores_unit_tests() {
    // The check above can fail: a leaf that names its caller through a re-export closes a
    // cycle, and a unit test's `use super::*` does not.
    let dir = std::env::temp_dir().join(format!("cfslab-layering-{}", std::process::id()));
    let write = |path: &str, text: &str| {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    };
    write("lib.rs", "pub mod low;\npub mod high;\npub mod other;\n");
    write("low/mod.rs", "pub mod leaf;\npub use self::leaf::thing;\n");
    write("low/leaf.rs", "pub fn thing() { crate::high::call(); }\n");
    write(
        "high.rs",
        "use crate::low;\npub fn call() { low::thing(); }\n",
    );
    write(
        "other.rs",
        "pub fn alone() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::high;\n}\n",
    );
    let edges = Graph::new(&dir).edges();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(edges["high"], BTreeSet::from(["low::leaf".to_string()]));
    assert!(edges["other"].is_empty(), "{:?}", edges["other"]);
    assert_eq!(
        cycles(&edges),
        vec![vec!["high".to_string(), "low::leaf".to_string()]]
    );
}

#[test]
fn only_sched_current_writes_the_cpus_untyped_pointers() {
    // `PerCpu` keeps the running task's address space and files untyped; `sched/current.rs`
    // casts them back, which is sound only if it is also the one writer (its SAFETY
    // comments). Any other call of the setters fails here.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernel/src");
    let mut writers = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if text.contains(".set_space(") || text.contains(".set_files(") {
                writers.push(path.strip_prefix(&root).unwrap().display().to_string());
            }
        }
    }
    assert_eq!(writers, ["sched/current.rs"]);
}

#[test]
fn the_policy_interface_names_no_policy() {
    // `policy.rs` is the interface every policy implements (Linux's `struct sched_class`);
    // naming an implementation of itself — as a closed enum of their migration records once
    // did — would tie the interface to today's policies and close a cycle with each. Below
    // it, neither the fair class nor O(1) is in a cycle with anything.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernel/sched/src");
    let edges = Graph::new(&root).edges();
    let policies = ["fair", "o1"];
    let named: Vec<&String> = edges["policy"]
        .iter()
        .filter(|m| policies.iter().any(|p| under(m, p)))
        .collect();
    assert!(named.is_empty(), "policy.rs names {named:?}");
    for cycle in cycles(&edges) {
        let crossing = policies.iter().any(|p| cycle.iter().any(|m| under(m, p)))
            && cycle.iter().any(|m| !policies.iter().any(|p| under(m, p)));
        assert!(!crossing, "a policy is in a cycle with the rest: {cycle:?}");
    }
}
