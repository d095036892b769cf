//! Tasks on several CPUs from the outside: the same program on cfslab with two CPUs and
//! natively on the host's Linux (affinity, wake-ups across CPUs, copy-on-write and a TLB
//! shootdown across them, two hogs side by side), where new tasks start, and the hostile
//! programs on four CPUs. The CPUs themselves — their bring-up, their formats, a parked
//! CPU's figures — are `smp.rs`'s.

/// `csmp`'s lines natively and on cfslab with two CPUs, but for the `hogs:` line, whose
/// time varies natively with the host's load; cfslab's comes back apart.
fn csmp_on_both() -> (String, String) {
    let hogs = |l: &&str| l.starts_with("hogs: ");
    let without_hogs = |text: &str| -> String {
        let lines = text.lines().filter(|l| !hogs(l));
        lines.map(|l| format!("{l}\n")).collect()
    };
    let host_cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let expected = if host_cpus >= 2 {
        let native = std::process::Command::new(systests::user_programs().join("csmp"))
            .output()
            .expect("runs natively");
        let text = String::from_utf8_lossy(&native.stdout).into_owned();
        assert!(native.status.success(), "natively:\n{text}");
        without_hogs(&text)
    } else {
        eprintln!("csmp: the host has one CPU: cfslab's lines are checked on their own");
        String::new()
    };
    let run = systests::on_cfslab("", "/bin/csmp", &["--smp", "2"]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    systests::assert_nothing_leaked(&run);
    let output = systests::program_output(&run);
    let hog_line = output.lines().find(hogs).expect("a hogs line").to_owned();
    if !expected.is_empty() {
        assert_eq!(without_hogs(&output), expected);
    }
    assert!(output.ends_with("csmp: all checks passed\n"), "{output}");
    (output, hog_line)
}

#[test]
fn two_cpus_run_two_tasks_at_once_and_pinned_tasks_stay_pinned() {
    // sched_setaffinity moving the caller, EINVAL for masks of no online CPU, a ping-pong
    // between processes pinned to two CPUs (each wake-up crosses CPUs: a reschedule IPI),
    // copy-on-write across CPUs: see userland/c/csmp.c.
    let (_, hogs) = csmp_on_both();
    // Two hogs pinned to two CPUs each burn 40 ms of CPU time. Each CPU accounts its
    // task's time by the virtual clock, which under icount advances with the instructions
    // of both CPUs together; side by side both reach 40 ms when the clock has advanced
    // ~40 ms (plus two forks and exits: measured 43 ms). Had the CPUs taken turns — one
    // CPU running both, or a lost wake-up stalling one — it would take 80 ms or more.
    let took_us: u64 = hogs
        .strip_prefix("hogs: 40 ms of CPU each, both done in ")
        .and_then(|rest| rest.strip_suffix(" us"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected line: {hogs}"));
    assert!((40_000..60_000).contains(&took_us), "{hogs}");
}

#[test]
fn n_hogs_start_on_n_cpus() {
    // `csmp spread 4` forks four hogs at once and waits. A new task starts on the CPU with
    // the fewest tasks running or waiting (the creating CPU first among equals, then the
    // lowest): the first three find an empty CPU each, the fourth finds every CPU with one
    // task and stays on its creator's, which then sleeps in `wait`. Four CPUs, one hog each.
    let run = systests::on_cfslab("", "/bin/csmp spread 4", &["--smp", "4"]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.line_after("spread: "),
        Some("4 hogs on 4 CPUs"),
        "{}",
        run.stdout
    );
    systests::assert_nothing_leaked(&run);
}

#[test]
fn a_fork_bomb_and_the_fuzzer_on_four_cpus_harm_no_one() {
    // The single-CPU tests' hostile programs (tests/userland.rs), now with their processes
    // started across four CPUs, woken across them, and killed on one CPU by another.
    let bomb = systests::on_cfslab("", "/bin/forkbomb 3", &["--smp", "4"]);
    // Every frame back but the page tables the kernel-stack slots grew (as on one CPU).
    let (before, after, _) = systests::fork_bomb_memory(&bomb);
    assert!(after - before <= 32, "{before} -> {after} frames");
    systests::fuzz_ran_to_its_end(&systests::on_cfslab(
        "",
        "/bin/fuzz 20000 7",
        &["--smp", "4"],
    ));
}

#[test]
fn a_move_between_cpus_is_traced_as_linux_traces_it() {
    // busybox's `taskset 1` starts on CPU 1 (CPU 0 runs the boot task), then allows
    // itself CPU 0 alone: it leaves CPU 1 at its next switch and goes to CPU 0. The move
    // is recorded in Linux's `sched_migrate_task` format (`log=trace` echoes each event).
    let flags = ["--icount-shift", "2", "--smp", "2", "--busybox"];
    let run = systests::boot_with("log=trace -- /bin/taskset 1 /bin/true", &flags);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let moves: Vec<&str> = run
        .stdout
        .lines()
        .filter_map(|l| l.split(": sched_migrate_task: ").nth(1))
        .collect();
    assert_eq!(
        moves,
        ["comm=taskset pid=3 prio=120 orig_cpu=1 dest_cpu=0"],
        "{}",
        run.stdout
    );
}
