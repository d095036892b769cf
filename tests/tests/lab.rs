//! The lab's seed experiments in the kernel, checked against the theory of
//! docs/scheduler.md (never against snapshot numbers). Under `-icount shift=2` (a 250 MIPS
//! machine) to keep emulation time down: the bounds are in milliseconds, far above the
//! kernel's own microsecond-scale costs, whatever the shift.

use systests::{Run, boot_with};

const MS: u64 = 1_000;

fn lab(options: &str) -> Run {
    let run = boot_with(options, &["--icount-shift", "2"]);
    assert_eq!(
        run.status, 0,
        "options {options}:\n{}\n{}",
        run.stdout, run.stderr
    );
    run
}

/// The one latency probe of `scenario` named `probe`.
fn probe(run: &Run, scenario: &str, probe: &str) -> serde_json::Value {
    let found: Vec<_> = run
        .results_of("latency", scenario)
        .into_iter()
        .filter(|r| r["probe"] == probe)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "no {probe} probe in {scenario}:\n{}",
        run.stdout
    );
    found.into_iter().next().unwrap()
}

fn us(v: &serde_json::Value, field: &str) -> u64 {
    v[field]
        .as_u64()
        .unwrap_or_else(|| panic!("no {field} in {v}"))
}

/// 2.6.24, two busy uids: the top-level period is 20 ms and each group entity has half the
/// root queue's weight — one group slice is 10 ms.
const GROUP_SLICE: u64 = 10 * MS;
/// Every CFS era ticks at its default HZ=250 unless `hz=` says otherwise: 4 ms ticks.
const TICK: u64 = 4 * MS;

#[test]
fn seed000_script1_waits_one_group_slice_without_group_sleeper_credit() {
    // The sleeper's group re-enters the root queue without sleeper credit (2.6.24) and waits
    // for uid 2's group to use up its slice.
    // It waits up to one group slice, noticed at a tick — more than a tick in the typical
    // case (with the credit it would preempt at once). How much depends on where in uid 2's
    // slice the wake-up lands: the sleeper's own run restarts that slice, so the phase
    // repeats from cycle to cycle (docs/experiments.md, seed 000).
    let run = lab("run=seed000-s1 duration=3s");
    let p = probe(&run, "seed000-s1", "sleeper");
    assert!(us(&p, "n") >= 20, "{p}");
    assert!(
        us(&p, "p50_us") > TICK && us(&p, "max_us") <= GROUP_SLICE + 2 * TICK,
        "{p}"
    );
    // The seed's own lines are there too (sched.py's median, in ms).
    assert!(
        run.lines()
            .any(|l| l.starts_with("seed000-s1: ") && l.ends_with(" ms")),
        "{}",
        run.stdout
    );
}

#[test]
fn seed000_script1_is_in_the_noise_with_group_credit_or_without_groups() {
    for options in [
        "run=seed000-s1 duration=3s features=GROUP_SLEEPER_CREDIT",
        "run=seed000-s1 duration=3s group=none",
    ] {
        let run = lab(options);
        let p = probe(&run, "seed000-s1", "sleeper");
        assert!(us(&p, "p99_us") <= MS, "{options}: {p}");
    }
}

#[test]
fn seed000_script2_waits_for_the_other_group_with_groups_not_without() {
    // uid 1's group never sleeps (its hog), so the credit cannot help at the top: when uid 2's
    // group is running, the sleeper waits for the rest of its slice — more than most of one
    // group slice at worst. Inside its own group it never waits: as a task it gets 20 ms of
    // sleeper credit, twice the wakeup granularity, and preempts its hog at once. So the
    // levels do not add up: at most one group slice, plus the ticks that notice it.
    let run = lab("run=seed000-s2 duration=3s");
    let p = probe(&run, "seed000-s2", "sleeper");
    assert!(
        us(&p, "max_us") > GROUP_SLICE * 8 / 10 && us(&p, "max_us") <= GROUP_SLICE + 2 * TICK,
        "{p}"
    );
    let run = lab("run=seed000-s2 duration=3s group=none");
    let p = probe(&run, "seed000-s2", "sleeper");
    assert!(us(&p, "p99_us") <= MS, "{p}");
}

#[test]
fn seed002_stalls_for_seconds_under_o1_not_under_cfs() {
    // O(1): a lat3 credited with its runqueue waits stays interactive and goes back to the
    // active array; the other waits for the array swap or the starvation limit.
    let run = lab("run=seed002-a policy=o1 duration=4s");
    let worst = run
        .results_of("latency", "seed002-a")
        .iter()
        .map(|p| us(p, "max_us"))
        .max()
        .unwrap();
    assert!(worst >= 500 * MS, "o1 maxlat {worst} µs:\n{}", run.stdout);
    // CFS (2.6.36): two tasks share each 6 ms period; no gap exceeds the latency plus a tick.
    let run = lab("run=seed002-a duration=2s");
    for p in run.results_of("latency", "seed002-a") {
        assert!(us(&p, "max_us") <= 6 * MS + TICK, "cfs: {p}");
    }
    assert!(
        run.lines()
            .filter(|l| l.starts_with("seed002-a: 1: "))
            .count()
            >= 1,
        "no lat3 lines"
    );
}

#[test]
fn seed002_run_b_stalls_two_and_a_half_seconds_under_o1() {
    // The thread's 1 s loop stalled 2 499.6 ms beside a 10 s loop. EXPIRED_STARVING lets the
    // expired lat3 wait STARVATION_LIMIT × nr_running = 2 s (the expiring task counted) past
    // the first expiry since the swap, plus the interactive one's 100 ms slices in progress.
    // It comes about 13 s in, after the 10 s loop's first cycle.
    let run = lab("run=seed002-b policy=o1 duration=15s");
    let p = probe(&run, "seed002-b", "lat3-1");
    assert!(
        (2_400 * MS..=2_600 * MS).contains(&us(&p, "max_us")),
        "{p}\n{}",
        run.stdout
    );
}

#[test]
fn seed003_start_debit_costs_the_waker_latency() {
    // Each timer thread is a new task: START_DEBIT places it a virtual slice right of
    // min_vruntime, behind the jobs; without it the thread starts at min_vruntime.
    let avg = |options: &str| us(&probe(&lab(options), "seed003", "waker"), "avg_us");
    let (with_debit, without) = (
        avg("run=seed003 duration=2s"),
        avg("run=seed003 duration=2s features=NO_START_DEBIT"),
    );
    assert!(
        without < with_debit,
        "NO_START_DEBIT {without} µs, START_DEBIT {with_debit} µs"
    );
}

#[test]
fn custom_tasks_split_per_uid_with_groups() {
    let run = lab("run=custom tasks=hog@1,hog@2*3 group=uid duration=1s");
    let cpu = run.results_of("cpu", "custom");
    let uid1: f64 = cpu
        .iter()
        .filter(|r| r["uid"] == 1)
        .map(|r| r["share"].as_f64().unwrap())
        .sum();
    assert!((uid1 - 0.5).abs() <= 0.02, "uid 1 got {uid1}: {cpu:?}");
}

#[test]
fn the_trace_is_printed_as_ftrace_text() {
    let run = lab("run=custom tasks=sleeper:10ms,hog trace=on duration=200ms");
    let text = run
        .stdout
        .split("--- TRACE BEGIN ---")
        .nth(1)
        .expect("no trace")
        .split("--- TRACE END ---")
        .next()
        .unwrap();
    // The serial line ends lines with CR LF; `lines()` takes either.
    let mut lines = text.lines().skip_while(|l| l.is_empty());
    assert_eq!(lines.next(), Some("# tracer: nop"));
    let events: Vec<&str> = lines.filter(|l| !l.starts_with('#')).collect();
    assert!(
        events
            .iter()
            .any(|l| l.contains(": sched_switch: prev_comm=")),
        "no switches"
    );
    assert!(
        events
            .iter()
            .any(|l| l.contains(": sched_waking: comm=sleeper")),
        "no wake-ups of the sleeper"
    );
    // Linux 6.x's columns: `%16s-%-7d [%03d] ` then five flag characters (irqs off: `d`).
    for line in events {
        let cpu = line.find(" [000] d").unwrap_or_else(|| panic!("{line}"));
        assert_eq!(cpu, 24, "task column of {line}");
        assert_eq!(&line[cpu + 12..cpu + 13], " ", "five flags in {line}");
    }
}
