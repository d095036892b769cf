//! CPU hotplug from user space: `userland/c/chotplug.c` on four CPUs, on cfslab and on
//! Linux 6.1 in the same QEMU, takes its last CPU offline under running hogs and brings it
//! back (docs/wasted-cores.md, "CPU hotplug"). Both kernels must print the same lines; and
//! on cfslab, the same CPU cycled a hundred times under load loses no task. What
//! ring 3 cannot reach — CPU 0 and the last online CPU refused with EBUSY, a sleeper's timer
//! moving off a dying CPU — is kernel/tests/smp_hotplug.rs's.

/// The machine: four CPUs, so that three stay online with the fourth gone.
const MACHINE: [&str; 4] = ["--icount-shift", "2", "--smp", "4"];

#[test]
fn a_cpu_goes_offline_under_running_tasks_and_comes_back_as_on_linux() {
    let run = systests::on_cfslab("", "/bin/chotplug", &MACHINE);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    systests::assert_nothing_leaked(&run);
    let output = systests::program_output(&run);
    assert!(
        output.ends_with("chotplug: all checks passed\n"),
        "{output}"
    );
    // The hog pinned to the CPU going offline can run nowhere it is allowed: its affinity
    // is widened, and the console says so in Linux's words (Linux's line goes to its
    // kernel log, which `quiet` keeps off the console), once per offlining, 4 in all.
    let affine = |l: &&str| l.starts_with("process ") && l.ends_with(" no longer affine to cpu3");
    assert_eq!(output.lines().filter(affine).count(), 4, "{output}");
    let program_lines = |text: &str| -> String {
        let lines = text.lines().filter(|l| !affine(l));
        lines.map(|l| format!("{l}\n")).collect()
    };
    let mut linux_args = vec!["linux", "--timeout", "300"];
    linux_args.extend_from_slice(&MACHINE);
    linux_args.extend_from_slice(&["--", "/bin/chotplug"]);
    let linux = systests::boot_tool(&linux_args);
    assert_eq!(linux.status, 0, "{}{}", linux.stdout, linux.stderr);
    assert_eq!(
        program_lines(&output),
        systests::linux_program_output(&linux)
    );
}

#[test]
fn a_cpu_cycled_offline_and_back_a_hundred_times_loses_no_task() {
    // `chotplug cycle 100`: CPU 3 offline and back 100 times, 2 ms apart, while six CPU hogs
    // and a 1 ms sleeper run; then each is sent SIGTERM and must report (a task left on a
    // runqueue no CPU serves, or a sleeper whose timer died with its CPU, would never do
    // so), the sleeper having slept at least once a round. The invariant checker (the
    // Wasted Cores paper's: a CPU idle for 100 ms while a task waits elsewhere) stays quiet.
    let run = systests::on_cfslab("invariant=on", "/bin/chotplug cycle 100", &MACHINE);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let output = systests::program_output(&run);
    assert!(
        output.ends_with("chotplug: all checks passed\n"),
        "{output}"
    );
    let invariant = run.result("invariant");
    assert_eq!(invariant["violations"], 0, "{invariant}");
    systests::assert_nothing_leaked(&run);
}
