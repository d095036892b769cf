//! The threaded C programs on several CPUs: `cthreads` (threads, futexes, a thread's fault
//! ending its process), `csignals` (handlers, waits, timers), `cqueue` (queued real-time
//! signals) and `cjobs` (process groups, stop and continue) print, at 2 and at 4 CPUs, what
//! the same binary prints natively on the host — the other tests run them on one CPU. On
//! several CPUs their threads and children run side by side, wake each other across CPUs,
//! and are moved by the balancer and by each CPU's stopper; nothing of that may show in
//! what a program sees, and every frame and the heap come back.

use std::process::Command;
use systests::user_programs as programs;
use systests::{assert_nothing_leaked, checked_natively, program_output};

/// Runs `/bin/name` on cfslab at 2 and then 4 CPUs, and compares its output with the
/// native run's, less the kernel's own line for a thread that segfaults on purpose
/// (`cthreads`; Linux writes it to its log, not the console).
fn same_as_native_on_several_cpus(name: &str) {
    let expected = checked_natively(&mut Command::new(programs().join(name)), name);
    let segfault = format!("{name}[");
    for cpus in ["2", "4"] {
        let run = systests::on_cfslab("", &format!("/bin/{name}"), &["--smp", cpus]);
        assert_eq!(
            run.status, 0,
            "{name} at {cpus} CPUs:\n{}{}",
            run.stdout, run.stderr
        );
        assert_nothing_leaked(&run);
        let output: String = program_output(&run)
            .lines()
            .filter(|l| !(l.starts_with(&segfault) && l.contains("]: segfault at ")))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(output, expected, "{name} at {cpus} CPUs");
        assert!(!run.stdout.contains("is not implemented"), "{}", run.stdout);
    }
}

#[test]
fn threads_and_futexes_behave_as_on_linux_on_several_cpus() {
    same_as_native_on_several_cpus("cthreads");
}

#[test]
fn signal_handlers_run_as_on_linux_on_several_cpus() {
    same_as_native_on_several_cpus("csignals");
}

#[test]
fn queued_signals_arrive_as_on_linux_on_several_cpus() {
    same_as_native_on_several_cpus("cqueue");
}

#[test]
fn job_control_is_as_on_linux_on_several_cpus() {
    same_as_native_on_several_cpus("cjobs");
}
