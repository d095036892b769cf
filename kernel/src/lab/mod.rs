//! The lab: the three seed experiments (and custom mixes) run as user processes — the
//! seeds' own programs, `userland/workloads` — under the policy the boot options chose,
//! reported in the seeds' own formats, as cyclictest and schbench lines, and as `RESULT`
//! lines (DESIGN.md, "Output").
//!
//! A scenario (defined once, in `bootopts::scenarios`) is a set of task specs plus the era
//! and grouping the experiment needs unless the options say otherwise. Scenarios run one
//! after another, in any order: the boot task sets the policy up, starts each task's
//! program (`programs`), sleeps through the measured window, reaps every process the
//! scenario started and prints what the kernel alone knows: each task's CPU time and where
//! the window's went. The programs print their own latency reports as they end.

mod programs;
pub(crate) mod progress;
pub mod report;

use crate::config::Config;
use crate::config::scenarios::{Scenario, expand_run};
use crate::println;
use crate::sched;
use crate::time::clock;

/// Runs the scenarios `config.run` names (`lab` = every seed experiment), as
/// `bootopts::scenarios` defines them.
pub fn run(config: &Config) {
    // The seed experiments are uniprocessor ones: the lab and every task it starts run on
    // CPU 0 whatever `smp=` says, in a partition of its own (no balancing domain spans
    // it), and the other CPUs idle — halted with their tick stopped, they cost no
    // instructions, and the figures are those of one CPU.
    let pinned = sched::affinity::set_affinity(sched::current(), 1);
    debug_assert_eq!(pinned, Ok(()), "CPU 0 is always online");
    sched::balance::isolate_boot_cpu();
    crate::user::initramfs::init();
    if !crate::user::initramfs::present() {
        println!(
            "lab: no initramfs, so no workload programs (the boot tool passes one; a kernel \
             booted by hand needs -fw_cfg name=opt/cfslab/initramfs,file=ARCHIVE)"
        );
    }
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
    // The window starts on a tick boundary, so that the programs' seeded start offsets
    // (`sched::programs`) alone vary its phase against the tick.
    sched::sleep_until_tick_boundary();
    let trace_from = config
        .trace
        .then(|| sched::trace_start(sched::TRACE_EVENTS));
    let ap_ticks_before = crate::percpu::ap_ticks();
    let (start, idle_before) = (clock::now(), sched::idle_cpu_ns());
    let end = start + duration;
    let mut tasks = programs::start(s, &config, user.seed, end);
    progress::start(s.name, start, end);
    sched::sleep_until(end);
    progress::stop();
    let window = report::Window {
        ns: clock::now() - start,
        idle_ns: sched::idle_cpu_ns() - idle_before,
        ap_ticks: (crate::cpus::ipi::online_count() > 1)
            .then(|| crate::percpu::ap_ticks() - ap_ticks_before),
    };
    if log::log_enabled!(log::Level::Debug) {
        sched::print_sched_debug();
    }
    // Reap every process this scenario started (and their orphans) before the next one
    // replaces the policy.
    programs::reap(s.name, &mut tasks);
    report(s, &tasks, &window);
    if trace_from.is_some()
        && let (Some(trace), _) = sched::trace_stop()
    {
        sched::print_trace(&trace);
    }
}

fn report(s: &Scenario, tasks: &[programs::LabTask], window: &report::Window) {
    for t in tasks {
        report::cpu(s.name, &t.name, t.uid, t.nice, t.cpu_ns, window.ns);
    }
    report::window(s.name, window, tasks.iter().map(|t| t.cpu_ns).sum());
}
