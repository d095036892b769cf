//! Threads that race each other across CPUs, from the outside: `craces` (userland/c/craces.c)
//! natively on the host's Linux and on cfslab with 1, 2 and 4 CPUs, the same lines from
//! both. Each case is a defect several CPUs once exposed: copy-on-write broken by a fork
//! beside writing threads, a child's page freed by a fork beside an unmapping thread, a
//! futex ping-pong wedged by affinity changes, a wake-up that waited for the next tick on
//! its CPU, and `mprotect(PROT_READ)` that did not protect. And an affinity storm of ten
//! seconds at 4 CPUs, cfslab alone.

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

#[test]
fn an_affinity_storm_on_four_cpus_for_ten_seconds_ends() {
    // `craces storm 10`: four threads in a ring, each on its turn giving the next a new
    // affinity (one CPU, then two) and waking it with a futex, for 10 s of the machine's
    // time at 4 CPUs; then each must end. A move that lost a task, or a wake-up whose
    // clock went back before the sleep it ended (a timer's wake-up racing a futex's on
    // another CPU: once a panic here), would stop it.
    let run = systests::on_cfslab("", "/bin/craces storm 10", &["--smp", "4"]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let output = systests::program_output(&run);
    assert!(output.ends_with("craces: all checks passed\n"), "{output}");
    systests::assert_nothing_leaked(&run);
}
