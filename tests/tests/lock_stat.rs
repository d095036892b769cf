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

/// Reads `/proc/lock_stat`'s header and its table from `lines` (the version line already
/// read): per rank taken, its contentions, spins, wait cycles and acquisitions.
fn table<'a>(lines: &mut impl Iterator<Item = &'a str>, output: &str) -> Vec<(String, [u64; 4])> {
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

/// The acquisitions of `rank` in a table (0 if it is not listed: never taken).
fn acquisitions(table: &[(String, [u64; 4])], rank: &str) -> u64 {
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
    let run = systests::busybox_sh(script, &["--smp", "2"]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let output = systests::program_output(&run);
    let tables: Vec<_> = output
        .split("lock_stat version")
        .skip(1)
        .map(|text| table(&mut text.lines().skip(1), &output))
        .collect();
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
