//! How the lab reports a scenario (DESIGN.md, "Output"): a header saying what is measured
//! and what the blocks below it are; then, after the programs' own reports (each latency
//! probe's cyclictest line, schbench block and `RESULT` lines, written by
//! `userland/workloads`), what only the kernel knows: each task's CPU time, and where the
//! window's CPU time went.

use crate::config::scenarios::Scenario;
use crate::config::tasks::TaskKind;
use crate::println;

fn us(ns: u64) -> u64 {
    ns / 1_000
}

/// The measured window of a scenario.
pub struct Window {
    /// Its length as it happened (the boot task wakes a little after the end).
    pub ns: u64,
    /// CPU time the idle task had in it.
    pub idle_ns: u64,
    /// Ticks the other CPUs took in it (`None` on one CPU).
    pub ap_ticks: Option<u64>,
}

/// Says what the scenario measures and how to read the lines that follow.
pub fn header(s: &Scenario) {
    let name = s.name;
    println!("{name}: measures {}", s.measures);
    println!(
        "{name}: then per probe, as its program ends: a cyclictest line (T: thread (tid), \
         I: period µs, C: samples, Min/Act/Avg/Max µs) and schbench-style percentiles (µs); \
         RESULT lines repeat them as JSON; last, each task's CPU time and its share of the window"
    );
    if s.tasks.iter().any(|t| t.kind == TaskKind::Lat3) {
        println!(
            "{name}: lat3 lines (seed 002's format): P: loop end (s.µs), time asleep before \
             it (µs), time spun (µs), longest gap (µs), gaps over 1 ms"
        );
    }
    if s.tasks.iter().any(|t| t.kind == TaskKind::Sleeper) {
        println!(
            "{name}: the ms lines (seed 000's sched.py): the median of the last 5 sleeps' lateness, every 0.5 s"
        );
    }
}

/// Prints the CPU line of one task: its CPU time and its share of the window's CPU time
/// (`window_ns`: every task's, children and jobs included, and idle time).
pub fn cpu(scenario: &str, task: &str, uid: u32, nice: i8, cpu_ns: u64, window_ns: u64) {
    println!(
        "RESULT {{\"kind\":\"cpu\",\"scenario\":\"{scenario}\",\"task\":\"{task}\",\"uid\":{uid},\"nice\":{nice},\"runtime_us\":{},\"share\":{:.3}}}",
        us(cpu_ns),
        cpu_ns as f64 / window_ns.max(1) as f64
    );
}

/// Prints where the window's CPU time went: the listed tasks, everything else (their
/// children, make's jobs, the boot task) and idle; the three add up to the window.
pub fn window(scenario: &str, window: &Window, tasks_ns: u64) {
    let other_ns = window
        .ns
        .saturating_sub(tasks_ns)
        .saturating_sub(window.idle_ns);
    println!(
        "RESULT {{\"kind\":\"window\",\"scenario\":\"{scenario}\",\"window_us\":{},\"tasks_us\":{},\"other_us\":{},\"idle_us\":{}}}",
        us(window.ns),
        us(tasks_ns),
        us(other_ns),
        us(window.idle_ns)
    );
    // On several CPUs, what the others did meanwhile: a seed experiment runs on CPU 0, and
    // an AP that stayed parked took no tick (the SMP system test asserts it).
    if let Some(ticks) = window.ap_ticks {
        println!(
            "RESULT {{\"kind\":\"other_cpus\",\"scenario\":\"{scenario}\",\"ticks\":{ticks}}}"
        );
    }
}
