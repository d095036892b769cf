//! Threads that race each other across CPUs, from the outside: `craces` (userland/c/craces.c)
//! natively on the host's Linux and on cfslab with 1, 2 and 4 CPUs, the same lines from
//! both. Each case is a defect several CPUs once exposed: copy-on-write broken by a fork
//! beside writing threads, a child's page freed by a fork beside an unmapping thread, a
//! futex ping-pong wedged by affinity changes, a wake-up that waited for the next tick on
//! its CPU, and `mprotect(PROT_READ)` that did not protect.

/// The `wake:` line states a measured lateness, which differs between the two kernels (the
/// check below it bounds it on both); every other line must be the same.
fn without_measures(text: &str) -> String {
    let lines = text.lines().filter(|l| !l.starts_with("wake: "));
    lines.map(|l| format!("{l}\n")).collect()
}

fn craces_on(cpus: u32) {
    let native = std::process::Command::new(systests::user_programs().join("craces"))
        .output()
        .expect("runs natively");
    let expected = String::from_utf8_lossy(&native.stdout).into_owned();
    assert!(native.status.success(), "natively:\n{expected}");
    let smp = cpus.to_string();
    let run = systests::on_cfslab("", "/bin/craces", &["--smp", &smp]);
    let output = systests::program_output(&run);
    assert_eq!(run.status, 0, "{cpus} CPUs:\n{}{}", run.stdout, run.stderr);
    assert_eq!(
        without_measures(&output),
        without_measures(&expected),
        "{cpus} CPUs"
    );
    systests::assert_nothing_leaked(&run);
}

#[test]
fn races_on_one_cpu_end_as_on_linux() {
    craces_on(1);
}

#[test]
fn races_on_two_cpus_end_as_on_linux() {
    craces_on(2);
}

#[test]
fn races_on_four_cpus_end_as_on_linux() {
    craces_on(4);
}
