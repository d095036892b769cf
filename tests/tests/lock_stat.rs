//! `/proc/lock_stat` on several CPUs: each rank of lock that was waited for, with the waits'
//! count, spins and cycles (`kernel/src/sync/lock_stat.rs`).

#[test]
fn lock_stat_counts_each_wait_and_the_cycles_it_took() {
    // `craces cow-write` at two CPUs (forks beside threads writing on both CPUs: the
    // scheduler's and the memory's locks are taken from both), then /proc/lock_stat, run
    // by busybox's shell. Every rank listed was waited for at least once; each wait spins
    // at least once, each spin takes at least a cycle, and the boot's own proof that the
    // CPUs exclude each other (`cpus::contention`, rank TestOutermost) always contends.
    let script = "/bin/craces cow-write >/dev/null; cat /proc/lock_stat";
    let run = systests::busybox_sh(script, &["--smp", "2"]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let output = systests::program_output(&run);
    // glibc's start-up asks for rseq, which cfslab says it lacks.
    let mut lines = output
        .lines()
        .filter(|l| !l.starts_with("cfslab: system call"));
    assert!(
        lines
            .next()
            .is_some_and(|l| l.starts_with("lock_stat version 0.4")),
        "{output}"
    );
    let ranks = table(&mut lines, &output);
    let contended = |rank: &str| ranks.iter().any(|(r, [c, ..])| r == rank && *c > 0);
    assert!(contended("TestOutermost"), "{output}");
    // A rank's waits are among its acquisitions; one that was waited for spun at least
    // once a wait, and each spin took at least a cycle.
    for (rank, [contentions, spins, cycles, acquisitions]) in &ranks {
        assert!(acquisitions >= contentions, "{rank}: {output}");
        assert!(spins >= contentions, "{rank}: {output}");
        assert!(cycles >= spins, "{rank}: {output}");
    }
}

/// A `/proc/lock_stat` table: per rank taken, its contentions, spins, wait cycles and
/// acquisitions.
type Table = Vec<(String, [u64; 4])>;

/// Reads `/proc/lock_stat`'s header and its table from `lines` (the version line already
/// read): per rank taken, its contentions, spins, wait cycles and acquisitions.
fn table<'a>(lines: &mut impl Iterator<Item = &'a str>, output: &str) -> Table {
    assert_eq!(
        lines
            .next()
            .map(|l| l.split_whitespace().collect::<Vec<_>>()),
        Some(vec![
            "class",
            "name",
            "contentions",
            "spins",
            "waittime-total",
            "acquisitions"
        ]),
        "{output}"
    );
    lines
        .map_while(|l| {
            let mut words = l.split_whitespace();
            let rank = words.next()?.strip_suffix(':')?.to_string();
            let numbers: Vec<u64> = words.map(|w| w.parse().unwrap()).collect();
            Some((rank, numbers.try_into().unwrap()))
        })
        .collect()
}

/// A run that ended well: its program's output, and each `/proc/lock_stat` table in it.
fn tables_of(run: &systests::Run) -> (String, Vec<Table>) {
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let output = systests::program_output(run);
    let tables = output
        .split("lock_stat version")
        .skip(1)
        .map(|text| table(&mut text.lines().skip(1), &output))
        .collect();
    (output, tables)
}

/// The acquisitions of `rank` in a table (0 if it is not listed: never taken).
fn acquisitions(table: &Table, rank: &str) -> u64 {
    table
        .iter()
        .find(|(r, _)| r == rank)
        .map_or(0, |(_, numbers)| numbers[3])
}

#[test]
fn a_wake_up_across_cpus_of_a_pinned_task_takes_two_runqueues_and_not_the_schedulers_lock() {
    // smpbench's ping-pongs at two CPUs: pipe and futex between tasks pinned to CPUs 0 and
    // 1, and futex between two threads on CPU 0 — 5 batches of 2000 round trips each, two
    // wake-ups a round trip: 60 000 wake-ups of tasks allowed one CPU, each under its
    // runqueue's lock (and the waker's, from another CPU), as Linux's `try_to_wake_up`
    // takes the task's `rq->lock` alone. The scheduler's lock is left to what needs more:
    // the programs' forks, exits and affinity calls, the ticks that may have a balancing
    // pass due, and the newly-idle passes the era does not skip (2.6.36, the default,
    // skips them while the CPU's idle spells are shorter than a pass is worth:
    // `avg_idle`) — measured: 681. Were each wake-up under it, the count would grow by
    // 60 000 or more; one in twenty is the line.
    let script = "cat /proc/lock_stat; /bin/smpbench >/dev/null; cat /proc/lock_stat";
    let (output, tables) = tables_of(&systests::busybox_sh(script, &["--smp", "2"]));
    let [before, after] = &tables[..] else {
        panic!("two tables: {output}")
    };
    let taken = |rank| acquisitions(after, rank) - acquisitions(before, rank);
    let wake_ups = 3 * 5 * 2000 * 2;
    assert!(
        taken("Sched") < wake_ups / 20,
        "{}: {output}",
        taken("Sched")
    );
}

#[test]
fn a_wake_up_of_a_task_allowed_every_cpu_takes_runqueue_locks_and_not_the_schedulers_lock() {
    // `smpbench free` at two CPUs: the futex ping-pong between two threads allowed every
    // CPU, 2000 round trips, two wake-ups each. Every wake-up is placed by the era's rules,
    // which read every CPU's load — each CPU's under its own runqueue lock, one at a time —
    // and is made under the runqueue locks of the waker, the wakee's CPU and the CPU chosen
    // (`sched/ttwu.rs`), as Linux's `try_to_wake_up` takes no lock of the whole scheduler.
    // The scheduler's lock is left to the thread's creation and end, the ticks that may
    // have a balancing pass due and the newly-idle passes the era does not skip — measured:
    // 118. Were each wake-up under it, the count would grow by 4000; one in four is the
    // line. The runqueue locks: each wake-up looks at the wakee under its CPU's lock, at
    // the waker under its own, at both CPUs' figures, and makes the wake-up under at least
    // one more — at least three each, whatever they find (measured: 43 793 in all, the
    // switches' own included).
    let script =
        "cat /proc/lock_stat; /bin/smpbench free >/dev/null && echo ran; cat /proc/lock_stat";
    let (output, tables) = tables_of(&systests::busybox_sh(script, &["--smp", "2"]));
    let [before, after] = &tables[..] else {
        panic!("two tables: {output}")
    };
    assert!(output.contains("\nran\n"), "{output}");
    let taken = |rank| acquisitions(after, rank) - acquisitions(before, rank);
    let wake_ups = 2 * 2000;
    println!("Sched {}, Runqueue {}", taken("Sched"), taken("Runqueue"));
    assert!(
        taken("Sched") < wake_ups / 4,
        "{}: {output}",
        taken("Sched")
    );
    assert!(
        taken("Runqueue") >= 3 * wake_ups,
        "{}: {output}",
        taken("Runqueue")
    );
}

#[test]
fn with_ttwu_queue_a_waker_leaves_the_wake_up_to_its_cpu_and_takes_no_runqueue_lock() {
    // smpbench under EEVDF (6.6, which has TTWU_QUEUE on), then again with the feature
    // turned off at run time. Its cross-CPU wake-ups — pipe and futex ping-pongs between
    // tasks pinned to CPUs 0 and 1, 5 batches of 2000 round trips each, two wake-ups a
    // round trip, and 201 wakes of a sleeper on idle CPU 1 — are 40 201, each of a task
    // whose CPU runs its idle task by then (it blocked before its partner was woken).
    // Queued, such a wake-up takes the wake list's lock twice (the waker leaves it, the
    // wakee's CPU takes it) and one runqueue lock, the wakee's CPU's own; not queued, the
    // waker takes two runqueue locks, its own and the wakee's, and no list at all. So the
    // list's lock is never taken with the feature off, and the runqueues' locks are taken
    // one time fewer per queued wake-up with it on. A wake-up may still find the other
    // CPU not yet idle and take the locks; nine in ten queued is the line (measured:
    // 39 960 of the 40 201).
    // (5.13+ keeps the features in `sched/features`: 6.6's path, which EEVDF has too.)
    let script = "cat /proc/lock_stat; /bin/smpbench >/dev/null; cat /proc/lock_stat; \
                  echo NO_TTWU_QUEUE > /sys/kernel/debug/sched/features; \
                  cat /sys/kernel/debug/sched/features; \
                  /bin/smpbench >/dev/null; cat /proc/lock_stat";
    let flags = ["--icount-shift", "2", "--busybox", "--smp", "2", "--"];
    let flags = [&flags[..], &["/bin/sh", "-c", script]].concat();
    let (output, tables) = tables_of(&systests::boot_with("policy=eevdf", &flags));
    let [before, queued, locked] = &tables[..] else {
        panic!("three tables: {output}")
    };
    assert!(output.contains(" NO_TTWU_QUEUE"), "{output}");
    let taken = |rank, from, to| acquisitions(to, rank) - acquisitions(from, rank);
    let cross_cpu_wake_ups = 2 * (5 * 2000 * 2) + 201;
    let at_least_queued = cross_cpu_wake_ups * 9 / 10;
    assert_eq!(taken("WakeList", queued, locked), 0, "{output}");
    assert!(
        taken("WakeList", before, queued) >= 2 * at_least_queued,
        "{output}"
    );
    let saved = taken("Runqueue", queued, locked) - taken("Runqueue", before, queued);
    assert!(saved >= at_least_queued, "{saved}: {output}");
}
