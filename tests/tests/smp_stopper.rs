//! Each CPU's stopper, `migration/N` (Linux's `cpu_stopper` threads, kernel/stop_machine.c):
//! a kernel thread per CPU, on a machine of more than one, that moves a running task off
//! its CPU. It is listed as Linux lists its own, it belongs to its CPU (its affinity does
//! not change), and the trace shows it making the moves of running tasks.

#[test]
fn each_cpu_has_a_stopper_that_belongs_to_it() {
    // busybox's `ps` lists kernel threads in brackets, as on Linux. The stoppers come right
    // after the boot task (pid 1) and the idle task (pid 2, which /proc does not list, as
    // Linux's swapper is not): CPU 0's is pid 3. Its affinity cannot be changed, not even to
    // what it is: Linux's `sched_setaffinity` refuses a PF_NO_SETAFFINITY thread with
    // EINVAL before it looks at the mask.
    let script = "ps; taskset -p 1 3; echo status $?; taskset -p 2 4; echo status $?";
    let run = systests::busybox_sh(script, &["--smp", "2"]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        listed_in(&run.stdout, "3", "[migration/0]"),
        "{}",
        run.stdout
    );
    assert!(
        listed_in(&run.stdout, "4", "[migration/1]"),
        "{}",
        run.stdout
    );
    let refused = |pid: &str| format!("taskset: can't set pid {pid}'s affinity: Invalid argument");
    for pid in ["3", "4"] {
        assert!(run.stdout.contains(&refused(pid)), "{}", run.stdout);
    }
    let failed = run.stdout.lines().filter(|l| l.trim_end() == "status 1");
    assert_eq!(failed.count(), 2, "{}", run.stdout);
    // With one CPU there is nothing to move a task to, and no stopper: the shell, which
    // runs `ps` in its own process (busybox shows it as `{ps}`), is pid 3.
    let run = systests::busybox_sh("ps", &["--smp", "1"]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("migration/"), "{}", run.stdout);
    assert!(listed_in(&run.stdout, "3", "{ps}"), "{}", run.stdout);
}

/// Whether `ps`'s output lists pid `pid` running `command` (its first word).
fn listed_in(ps: &str, pid: &str, command: &str) -> bool {
    ps.lines().any(|l| {
        let mut fields = l.split_whitespace();
        fields.next() == Some(pid) && fields.nth(1) == Some(command)
    })
}

#[test]
fn a_running_task_is_moved_by_its_cpu_s_stopper() {
    // busybox's `taskset 1` starts on CPU 1 (2.6.36 balances the fork away from the boot
    // task's CPU 0) and, running, allows itself CPU 0 alone: CPU 1's stopper (pid 4)
    // preempts it and moves it, and the trace's move is recorded with the stopper as the
    // running task, as in Linux's `sched_migrate_task` from `migration_cpu_stop`.
    let flags = ["--icount-shift", "2", "--smp", "2", "--busybox"];
    let run = systests::boot_with("log=trace -- /bin/taskset 1 /bin/true", &flags);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let moved_by = run
        .stdout
        .lines()
        .find(|l| l.contains(": sched_migrate_task: comm=taskset "))
        .and_then(|l| l.strip_prefix("[TRACE]"))
        .and_then(|l| l.split_whitespace().next());
    assert_eq!(moved_by, Some("migration/1-4"), "{}", run.stdout);
}
