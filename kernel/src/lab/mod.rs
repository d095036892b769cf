//! The lab: the three seed experiments (and custom mixes) run as real kernel threads under the
//! policy the boot options chose, reported in the seeds' own formats, as cyclictest and
//! schbench lines, and as `RESULT` lines (DESIGN.md, "Output").
//!
//! A scenario (defined once, in `bootopts::scenarios`) is a set of task specs plus the era
//! and grouping the experiment needs unless the options say otherwise. Scenarios run one
//! after another, in any order: the boot task sets the policy up, starts the tasks (its
//! children), sleeps through the measured window, reaps every task the scenario started
//! (`wait_child`) and prints the reports.

mod progress;
pub mod report;
pub mod workloads;

use crate::config::Config;
use crate::config::scenarios::{Scenario, expand_run};
use crate::config::tasks::TaskKind;
use crate::println;
use crate::sched;
use crate::time::clock;
use alloc::format;
use alloc::vec::Vec;
use workloads::{PROBES, Probe};

/// Runs the scenarios `config.run` names (`lab` = every seed experiment), as
/// `bootopts::scenarios` defines them.
pub fn run(config: &Config) {
    for name in expand_run(&config.run) {
        match Scenario::named(name, config) {
            Some(scenario) => run_scenario(&scenario, config),
            None => println!("{name}: no such scenario"),
        }
    }
}

fn run_scenario(s: &Scenario, user: &Config) {
    let config = s.config_for(user);
    let duration = user.duration_ns.unwrap_or(s.duration_ns);
    println!("{}: {} for {} ms", s.name, config, duration / 1_000_000);
    report::header(s);
    if let Err(sched::TasksAlive(n)) = sched::set_policy(&config) {
        println!(
            "{}: skipped: {n} tasks of an earlier run still alive",
            s.name
        );
        return;
    }
    let trace_from = config
        .trace
        .then(|| sched::trace_start(sched::TRACE_EVENTS));
    let (start, idle_before) = (clock::now(), sched::idle_cpu_ns());
    let end = start + duration;
    start_tasks(s, user, end);
    progress::start(s.name, start, end);
    sched::sleep_until(end);
    progress::stop();
    let window = report::Window {
        ns: clock::now() - start,
        idle_ns: sched::idle_cpu_ns() - idle_before,
        duration_ns: duration,
    };
    if log::log_enabled!(log::Level::Debug) {
        sched::print_sched_debug();
    }
    // Reap every task this scenario started (and their orphans) before the next one
    // replaces the policy.
    while sched::wait_child().is_some() {}
    report(s, &config, &window);
    if trace_from.is_some()
        && let (Some(trace), _) = sched::trace_stop()
    {
        sched::print_trace(&trace);
    }
}

/// Starts the scenario's tasks (children of the boot task), one probe each, all ending at
/// `end`.
fn start_tasks(s: &Scenario, user: &Config, end: u64) {
    let mut probes = Vec::new();
    for spec in &s.tasks {
        for _ in 0..spec.count {
            let same_kind = probes
                .iter()
                .filter(|p: &&Probe| p.kind == spec.kind)
                .count();
            // "hog1", "hog2"; "lat3-1" where the kind's name ends in a digit; no number for a
            // kind that appears once.
            let several = s
                .tasks
                .iter()
                .filter(|t| t.kind == spec.kind)
                .map(|t| t.count)
                .sum::<u32>()
                > 1;
            let kind = spec.kind.name();
            let name = match (several, kind.ends_with(|c: char| c.is_ascii_digit())) {
                (false, _) => kind.into(),
                (true, false) => format!("{kind}{}", same_kind + 1),
                (true, true) => format!("{kind}-{}", same_kind + 1),
            };
            probes.push(Probe {
                scenario: s.name,
                name,
                kind: spec.kind,
                uid: spec.uid,
                nice: spec.nice,
                arg: spec.arg,
                io: spec.io,
                end,
                index: same_kind,
                samples: Vec::new(),
                missed: 0,
                cpu_ns: 0,
                task: None,
                pending: None,
                next_expiry: 0,
                rng: ::sched::programs::Rng::for_stream(user.seed, probes.len() as u64),
            });
        }
    }
    let count = probes.len();
    x86_64::instructions::interrupts::without_interrupts(|| *PROBES.lock() = probes);
    for index in 0..count {
        let (kind, uid, nice, name) =
            workloads::with_probe(index, |p| (p.kind, p.uid, p.nice, p.name.clone()));
        // The task records its own id in its probe as it starts (it may run before `spawn`
        // returns, if it preempts this one).
        if sched::spawn(workloads::entry(kind), index as u64, &name, uid, nice).is_err() {
            println!("{}: no memory to start {name}", s.name);
        }
    }
}

fn report(s: &Scenario, config: &Config, window: &report::Window) {
    let probes = x86_64::instructions::interrupts::without_interrupts(|| {
        core::mem::take(&mut *PROBES.lock())
    });
    for (thread, p) in probes.iter().enumerate() {
        let interval = match p.kind {
            TaskKind::Sleeper | TaskKind::Waker => p.arg,
            TaskKind::Lat3 => p.arg + 1_000_000,
            _ => continue,
        };
        if p.samples.is_empty() {
            report::no_samples(p, interval, window);
        } else {
            report::latency(p, thread, interval, config);
        }
    }
    for p in &probes {
        report::cpu(s.name, &p.name, p.uid, p.nice, p.cpu_ns, window.ns);
    }
    report::window(s.name, window, probes.iter().map(|p| p.cpu_ns).sum());
}
