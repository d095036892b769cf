//! Host reproductions of the three seed experiments (../shared/seeds/) with the simulator,
//! asserting what the theory of cfs-semantics.md predicts. Each prints its table; run with
//! `cargo test -p sched --features sim --test seeds -- --nocapture` to see them.

use sched::sim::workload::{Hog, Lat3, MakeJ, Sleeper, Waker};
use sched::sim::{Sim, SimConfig};
use sched::stats::Summary;
use sched::{Era, Fair, FairParams, Feature, Grouping, O1, Policy};

const MS: u64 = 1_000_000;
/// The CFS and EEVDF eras tick at their default HZ=250; 2.6.11's O(1) at 1000.
const TICK: u64 = 4 * MS;
const O1_TICK: u64 = MS;

/// A simulated machine ticking every `tick_ns`, with random seed `seed`.
fn machine(tick_ns: u64, seed: u64) -> SimConfig {
    SimConfig {
        tick_ns,
        seed,
        ..SimConfig::default()
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / MS as f64
}

/// seed 000 (Jan 2008, 2.6.24): the sleeper's overshoot, script 1 (uid 1: sleeper; uid 2:
/// two hogs) or script 2 (uid 1: sleeper and a hog; uid 2: a hog), 20 s.
fn seed000(script: u8, grouping: Grouping, group_credit: bool) -> Summary {
    let mut params = FairParams::preset(Era::V2_6_24);
    params.grouping = grouping;
    params
        .features
        .set(Feature::GroupSleeperCredit, group_credit);
    let mut sim = Sim::new(Fair::new(params), machine(TICK, 1));
    let sleeper = sim.spawn(Box::new(Sleeper::new(100 * MS)), 1, 0);
    let hog_uids: &[u32] = if script == 1 { &[2, 2] } else { &[1, 2] };
    for &uid in hog_uids {
        sim.spawn(Box::new(Hog), uid, 0);
    }
    sim.run_until(20_000 * MS);
    Summary::of(&sim.tasks()[sleeper].samples)
}

/// One top-level group slice under 2.6.24 with two busy uids: period(2) = 20 ms, and each
/// group's weight is half the root queue's load.
const GROUP_SLICE: u64 = 10 * MS;

#[test]
fn seed000_group_scheduling_and_the_sleeper() {
    println!("\nseed000 (2.6.24, one CPU, HZ=250, 20 s): sleeper overshoot in ms");
    println!("script  grouping  group-sleeper-credit    n     p50     p99     max");
    let mut rows = Vec::new();
    for script in [1, 2] {
        for (grouping, credit) in [
            (Grouping::Uid, false),
            (Grouping::Uid, true),
            (Grouping::None, false),
        ] {
            let s = seed000(script, grouping, credit);
            println!(
                "{script:>6}  {:>8}  {:>20}  {:>5}  {:>6.3}  {:>6.3}  {:>6.3}",
                format!("{grouping:?}").to_lowercase(),
                if grouping == Grouping::None {
                    "-"
                } else if credit {
                    "on"
                } else {
                    "off"
                },
                s.n,
                ms(s.p50),
                ms(s.p99),
                ms(s.max)
            );
            assert!(s.n >= 150, "too few samples: {s:?}");
            rows.push((script, grouping, credit, s));
        }
    }
    for (script, grouping, credit, s) in rows {
        match (script, grouping, credit) {
            // The waking group entity gets no sleeper credit, so it waits for uid 2's group
            // to finish its top-level slice: up to one group slice, noticed at a tick — more
            // than a tick in the typical case (with the credit it preempts at once). How
            // much depends on where in uid 2's slice the wake-up lands: the sleeper's own
            // run restarts that slice, so the phase repeats from cycle to cycle.
            (1, Grouping::Uid, false) => {
                assert!(
                    s.p50 > TICK && s.max <= GROUP_SLICE + 2 * TICK,
                    "script 1: {s:?}"
                )
            }
            // Script 2 adds the task level: uid 1's group is never idle (its hog), so the
            // credit cannot help at the top, and the sleeper can wait for uid 2's group slice
            // and then for its own hog's — the thread's "sum over the levels", at most two.
            (2, Grouping::Uid, _) => {
                assert!(
                    s.max > GROUP_SLICE * 8 / 10 && s.max <= 2 * GROUP_SLICE + 2 * TICK,
                    "script 2: {s:?}"
                )
            }
            // With the credit (script 1), or without groups: the sleeper preempts at once.
            _ => assert!(
                s.p99 <= MS,
                "script {script} {grouping:?} credit {credit}: {s:?}"
            ),
        }
    }
}

/// seed 003 (Sep 2010, 2.6.36): `wakeup-latency` (10 ms timer) beside `make -j10`, 30 s.
/// Returns the latency summary and the missed expiries.
fn seed003(era: Era, features: &[(Feature, bool)], min_gran_div: u64) -> (Summary, u64) {
    let mut params = FairParams::preset(era);
    for &(feature, on) in features {
        params.features.set(feature, on);
    }
    if min_gran_div > 1 {
        let min_gran = params.tunables.min_granularity_ns / min_gran_div;
        params.set_latency(None, Some(min_gran));
    }
    let mut sim = Sim::new(Fair::new(params), machine(TICK, 3));
    let waker = sim.spawn(Box::new(Waker::new(10 * MS)), 1, 0);
    sim.spawn(Box::new(MakeJ::new(10)), 1, 0);
    sim.run_until(30_000 * MS);
    let samples: Vec<u64> = sim
        .tasks()
        .iter()
        .filter(|t| t.name == "waker-thread")
        .flat_map(|t| t.samples.iter().copied())
        .collect();
    (Summary::of(&samples), sim.tasks()[waker].missed)
}

#[test]
fn seed003_start_debit_and_the_waker() {
    use Feature::*;
    println!(
        "\nseed003 (2.6.36 unless named, one CPU, HZ=250, 30 s): wakeup-latency (10 ms) beside make -j10, µs"
    );
    println!(
        "{:<28} {:>10} {:>10} {:>7}",
        "variant", "maximum", "average", "missed"
    );
    /// (name, era, feature overrides, divisor of min_granularity)
    type Variant = (&'static str, Era, Vec<(Feature, bool)>, u64);
    let cfs = Era::V2_6_36;
    let variants: [Variant; 7] = [
        ("vanilla", cfs, vec![], 1),
        ("DYN_GRANULARITY", cfs, vec![(DynGranularity, true)], 1),
        ("min_granularity/3", cfs, vec![], 3),
        ("NO_START_DEBIT", cfs, vec![(StartDebit, false)], 1),
        (
            "CLAMP_CHILD_RIGHTMOST",
            cfs,
            vec![(ClampChildRightmost, true)],
            1,
        ),
        (
            "NO_VFORK_SLEEPER_CREDIT",
            cfs,
            vec![(VforkSleeperCredit, false)],
            1,
        ),
        ("EEVDF (6.6)", Era::V6_6, vec![], 1),
    ];
    let mut results = Vec::new();
    for (name, era, features, div) in variants {
        let (s, missed) = seed003(era, &features, div);
        println!(
            "{name:<28} {:>10.1} {:>10.1} {missed:>7}",
            s.max as f64 / 1e3,
            s.avg as f64 / 1e3
        );
        assert!(s.n >= 2900, "{name}: too few samples: {s:?}");
        results.push((name, s));
    }
    let avg = |name: &str| results.iter().find(|(n, _)| *n == name).unwrap().1.avg;
    // START_DEBIT places each timer thread a whole virtual slice to the right of
    // min_vruntime, behind every job; without it the thread starts at min_vruntime and runs
    // sooner. The thread (Sep 2010) saw 8430 → 5159 µs on average.
    assert!(
        avg("NO_START_DEBIT") < avg("vanilla"),
        "NO_START_DEBIT does not lower the average latency"
    );
    // EEVDF places each new thread at V with lag 0 and a *full*-slice deadline (6.6 places
    // it twice, and the second placement has no ENQUEUE_INITIAL): it is eligible at once but
    // queues behind every job whose deadline comes first — milliseconds, not the half-slice
    // head start (≈0.5 ms average) a single placement would give.
    assert!(
        avg("EEVDF (6.6)") > 2 * 750 * 1_000,
        "EEVDF average {} µs",
        avg("EEVDF (6.6)") / 1_000
    );
}

/// seed 002 (Mar 2005, 2.6.11): two `lat3` side by side, 30 s. Returns each one's longest
/// time kept off the CPU (its `maxlat`) and how many gaps exceeded 1 ms (`nbmax`).
fn seed002<P: Policy>(policy: P, tick_ns: u64, loops_ms: [u64; 2]) -> Vec<(u64, usize)> {
    let mut sim = Sim::new(policy, machine(tick_ns, 1));
    let tasks: Vec<usize> = loops_ms
        .iter()
        .map(|&l| sim.spawn(Box::new(Lat3::new(l * MS)), 1, 0))
        .collect();
    sim.run_until(30_000 * MS);
    tasks
        .iter()
        .map(|&t| {
            let waits = &sim.tasks()[t].waits;
            (
                waits.iter().copied().max().unwrap_or(0),
                waits.iter().filter(|&&w| w > MS).count(),
            )
        })
        .collect()
}

#[test]
fn seed002_multi_second_stalls_under_o1_not_cfs() {
    println!(
        "\nseed002 (one CPU, HZ=1000 for o1, 250 for cfs, 30 s): lat3 maxlat (ms) and nbmax per instance"
    );
    println!(
        "{:<6} {:<24} {:>10} {:>6} {:>10} {:>6}",
        "policy", "run", "maxlat P0", "nbmax", "maxlat P1", "nbmax"
    );
    let cfs_params = || {
        let mut p = FairParams::preset(Era::V2_6_36);
        p.grouping = Grouping::None;
        p
    };
    for (run, loops) in [
        ("A: 1 s + 1 s loops", [1_000, 1_000]),
        ("B: 1 s + 10 s loops", [1_000, 10_000]),
    ] {
        let o1 = seed002(O1::new(O1_TICK), O1_TICK, loops);
        let cfs = seed002(Fair::new(cfs_params()), TICK, loops);
        for (name, r) in [("o1", &o1), ("cfs", &cfs)] {
            println!(
                "{name:<6} {run:<24} {:>10.1} {:>6} {:>10.1} {:>6}",
                ms(r[0].0),
                r[0].1,
                ms(r[1].0),
                r[1].1
            );
        }
        // O(1): the lat3 that keeps being credited with its runqueue waits stays interactive
        // and returns to the active array; the other waits in the expired array for the swap
        // or the starvation limit — stalls of the order of a second.
        assert!(
            o1.iter().map(|r| r.0).max().unwrap() >= 500 * MS,
            "o1 {run}: {o1:?}"
        );
        // CFS: two runnable tasks share each 6 ms period; a task is never kept off the CPU
        // longer than sched_latency plus the tick that ends the other's slice.
        let bound = cfs_params().tunables.latency_ns + TICK;
        assert!(cfs.iter().all(|r| r.0 <= bound), "cfs {run}: {cfs:?}");
        if loops[1] == 10_000 {
            // Run B: the thread's 1 s loop stalled 2 499.6 ms. EXPIRED_STARVING waits
            // STARVATION_LIMIT × nr_running (2 s, the expiring task counted) past the first
            // expiry since the swap, plus the rest of the interactive task's 100 ms slices
            // in progress; counting one task fewer gave 1 s less.
            let stall = o1[0].0;
            assert!(
                (2_400 * MS..=2_600 * MS).contains(&stall),
                "o1 run B stalled {} ms, the thread 2 499.6 ms",
                ms(stall)
            );
        }
    }
}
