//! Parked CPUs from the outside: with every CPU up but the lab's tasks on CPU 0 alone, the
//! seed experiment's figures are one CPU's, to within the spread a wake-up's tick gives, and
//! two runs on four CPUs print the same figures to the last digit.

use serde_json::Value;
use systests::{Run, boot_with};

/// The `seed003` RESULT records of a run: every figure of the experiment (latencies, each
/// sample, CPU times, the window).
fn seed003_figures(run: &Run) -> Vec<Value> {
    let records: Vec<Value> = run
        .results()
        .into_iter()
        .filter(|r| r["scenario"] == "seed003" && r["kind"] != "other_cpus")
        .collect();
    assert!(records.len() >= 4, "seed003's RESULTs:\n{}", run.stdout);
    records
}

/// How far apart a figure of two runs may be, in µs, and why (see the test below).
const SPREAD_US: f64 = 250.0;

/// One tick at HZ 250, in µs: how far a wake-up latency may move besides (see below).
const TICK_US: f64 = 4000.0;

/// One figure that differs between two runs: where it is, and its two values.
struct Difference {
    at: String,
    alone: f64,
    here: f64,
}

impl Difference {
    /// Whether the difference is within the spread the test allows: a latency count may
    /// gain or lose the sample that lands on the window's edge, a share moves in its third
    /// decimal, every figure that is not a latency (the tasks' CPU times, in µs) by at most
    /// [`SPREAD_US`], and a latency statistic — the mean, the minimum, a percentile, the
    /// maximum — by at most two ticks more.
    ///
    /// Why two ticks: a wake-up a few instructions later can fall past the tick that would
    /// have run it, and then that sample moves by a tick; it can find the next one taken too
    /// (measured: a change that only resized the kernel's runqueue records moved seed003's
    /// p99 and max by 4002 µs and its p50 by 1340 at `smp=4`, not at `smp=1`; seen on CI: the
    /// maximum and p99 by 7998 µs, p90 by 5845). Each statistic is an order statistic of the
    /// samples (or their mean), and an order statistic of samples each moved by at most `d`
    /// moves by at most `d` itself, whichever samples cross which (for the same number of
    /// samples), so one bound serves them
    /// all; a per-statistic bound (p90 by one tick, p99 by two) was tighter than that argument
    /// allows and failed on CI. The window's own length is a wake-up's lateness too: it ends
    /// when the boot task runs after its timer, beside make's jobs, and what the window's
    /// other tasks had (`other_us`) is the window less the listed tasks and idle time, so it
    /// moves with it (seen on CI: both by about 500 µs). A share is compared to within its
    /// printed third decimal (0.011 against 0.012 is one step, whatever the floats' last bits
    /// say).
    fn within_spread(&self) -> bool {
        let by = (self.alone - self.here).abs();
        match self.at.rsplit('.').next() {
            Some("n" | "missed") => by <= 1.0,
            Some("share") => (by * 1000.0).round() <= 1.0,
            Some(
                "min_us" | "avg_us" | "p50_us" | "p90_us" | "p99_us" | "max_us" | "window_us"
                | "other_us",
            ) => by <= 2.0 * TICK_US + SPREAD_US,
            _ => by <= SPREAD_US,
        }
    }
}

/// Walks two runs' records side by side: the text must be equal, and every number that
/// differs is listed in `out`. The records of each sample (`kind: samples`) are left out:
/// one sample more or less shifts them all, and their latency record sums them up.
fn differences(a: &Value, b: &Value, at: &str, out: &mut Vec<Difference>) {
    match (a, b) {
        (Value::Object(x), _) if x.get("kind").is_some_and(|k| k == "samples") => {}
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(x.len(), y.len(), "{at}: {a} against {b}");
            for (key, v) in x {
                differences(v, &y[key], &format!("{at}.{key}"), out);
            }
        }
        (Value::Number(_), Value::Number(_)) => {
            let (alone, here) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            if alone != here {
                let at = at.to_string();
                out.push(Difference { at, alone, here });
            }
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}

#[test]
fn every_cpu_comes_up_and_a_parked_cpu_moves_no_figure() {
    let options = "run=seed003 duration=300ms";
    // One CPU, said outright (under SYSTESTS_SMP the harness would give it more).
    let alone = boot_with(options, &["--smp", "1"]);
    assert_eq!(alone.status, 0, "{}", alone.stdout);
    // One CPU says nothing about CPUs: the uniprocessor console stays as it was.
    assert!(!alone.stdout.contains("cpus:"), "{}", alone.stdout);
    assert!(!alone.stdout.contains("other_cpus"), "{}", alone.stdout);
    let expected = seed003_figures(&alone);
    let mut first_run: Option<Vec<Value>> = None;
    for round in 0..2 {
        let run = boot_with(options, &["--smp", "4"]);
        assert_eq!(run.status, 0, "{}", run.stdout);
        assert_eq!(
            run.line_after("cpus: "),
            Some(
                "4 of 4 online (APIC ids [0, 1, 2, 3]), each answering IPIs and scheduling \
                 tasks of its own"
            ),
            "{}",
            run.stdout
        );
        assert!(
            run.line_after("boot options: ")
                .unwrap()
                .ends_with(" smp=4")
        );
        // The CPUs excluded each other: every CPU's additions under one spin lock, each a
        // read and a separate write, all counted (`cpus::contention`; the kernel asserts
        // it too, and would have ended the run as a failure).
        let cpus = run.result("cpus");
        assert_eq!(cpus["online"], 4, "{cpus}");
        assert!(cpus["lock_rounds"].as_u64().unwrap() > 0, "{cpus}");
        assert_eq!(cpus["counted"], cpus["lock_rounds"], "{cpus}");
        // Each AP answered a call-function IPI with its own APIC id (`cpus::bring_up`), and
        // said it runs with its number read through its own GS base.
        // Under icount the machine has one instruction counter, and a halted CPU spends
        // none of it. The APs stayed parked (halted, their tick stopped) through the whole
        // window: they took no tick in it (`lab::report::window`). One that did not would
        // take HZ 250's ticks, 75 in 300 ms, or more if it ran anything.
        let others = run.result("other_cpus");
        assert_eq!(others["scenario"], "seed003", "{others}");
        assert_eq!(others["ticks"], 0, "{others}");
        // The machine is anchored before the APs start (`time::anchor`), so the second run
        // prints every record of the first, each sample's included, to the last digit.
        let got = seed003_figures(&run);
        match &first_run {
            None => first_run = Some(got.clone()),
            Some(first) => assert_eq!(&got, first, "smp=4's second run differs from its first"),
        }
        // CPU 0 runs nearly the uniprocessor run's instructions, so its figures are
        // that run's, give or take the work several CPUs add on it: the boot's waits for
        // the APs, the heap the APs' state was taken from, laid out differently, and the
        // checks of the other CPUs a tick or a wake-up makes. Work a few instructions
        // longer mostly moves a figure by 1 µs (measured: 50 runs, idle and loaded
        // hosts), but now and then it moves a tick or a wake-up across a decision — which
        // task a tick finds running — and the tasks' CPU times move by tens of µs (seen
        // once on CI: 44 µs), a latency by a tick.
        // SPREAD_US bounds the first, well under one tick (4 ms); a latency statistic may
        // move by a tick more (`Difference::within_spread`). Each difference is printed.
        assert_eq!(got.len(), expected.len(), "{}", run.stdout);
        let mut found = Vec::new();
        for (alone, here) in expected.iter().zip(&got) {
            differences(alone, here, "seed003", &mut found);
        }
        println!(
            "smp=4 run {round}: {} figures differ from smp=1's",
            found.len()
        );
        for d in &found {
            println!(
                "smp=4 run {round}: {} is {} alone, {} here",
                d.at, d.alone, d.here
            );
        }
        let beyond: Vec<&str> = found
            .iter()
            .filter(|d| !d.within_spread())
            .map(|d| d.at.as_str())
            .collect();
        assert!(
            beyond.is_empty(),
            "beyond the spread: {beyond:?}\n--- smp=1:\n{}\n--- smp=4:\n{}",
            alone.stdout,
            run.stdout
        );
    }
}
