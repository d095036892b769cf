//! The kernel's layers, checked on its source: which modules of `kernel/src` name which, and
//! the import cycles that makes (docs/architecture.md, "The layers").
//!
//! How a module names another, and what a cycle is, is `systests::imports`'s.
//!
//! What must hold: the modules everything stands on (the machine, the locks, the CPU's own
//! state, memory, time, the names of tasks, the error numbers) are in no cycle, and the arch
//! entries that call up into `trap` close none, nor do the system calls; and no cycle is
//! left anywhere but between a module and its helper. The kernel's core was once one cycle
//! of 34 modules; it came apart by keeping what a task holds (plain data) apart from the
//! code that works on it (docs/architecture.md, "The layers"). And `PerCpu`, which keeps the
//! running task's address space and files untyped to stay below them all, has one writer of
//! those pointers, the module that reads them back.

use std::collections::BTreeSet;
use std::path::Path;
use systests::imports::{Graph, cycles};

/// The largest cycle allowed: a module and its helper, which name each other (the terminal
/// and its job control; the one path that makes a task and the kernel thread's start and
/// end). Anything larger is a layer that names one above it.
const LARGEST_CYCLE: usize = 2;

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
fn the_low_layers_are_in_no_cycle_and_no_cycle_is_larger_than_a_module_and_its_helper() {
    let found = kernel_cycles();
    for cycle in &found {
        for module in cycle {
            assert!(
                !LOW.iter().any(|low| under(module, low)),
                "{module} is in an import cycle: {cycle:?}"
            );
        }
    }
    let largest = found.iter().map(Vec::len).max().unwrap_or(0);
    for cycle in &found {
        assert!(
            cycle.len() <= LARGEST_CYCLE,
            "an import cycle of {} modules: {cycle:?}",
            cycle.len()
        );
    }
    println!("largest import cycle: {largest} modules; all cycles: {found:?}");
    // The limit is today's size, so that the docs' figure is the one measured: a layer
    // that comes apart further brings it down.
    assert_eq!(
        largest, LARGEST_CYCLE,
        "the limit is no longer today's size"
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
