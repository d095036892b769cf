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
    assert_eq!(
        lines
            .next()
            .map(|l| l.split_whitespace().collect::<Vec<_>>()),
        Some(vec![
            "class",
            "name",
            "contentions",
            "spins",
            "waittime-total"
        ]),
        "{output}"
    );
    let ranks: Vec<(String, [u64; 3])> = lines
        .map(|l| {
            let mut words = l.split_whitespace();
            let rank = words.next().unwrap().trim_end_matches(':').to_string();
            let numbers: Vec<u64> = words.map(|w| w.parse().unwrap()).collect();
            (rank, numbers.try_into().unwrap())
        })
        .collect();
    assert!(
        ranks.iter().any(|(rank, _)| rank == "TestOutermost"),
        "{output}"
    );
    for (rank, [contentions, spins, cycles]) in &ranks {
        assert!(*contentions > 0 && spins >= contentions, "{rank}: {output}");
        assert!(cycles >= spins, "{rank}: {output}");
    }
}
