//! No documented combination may bring the kernel down: every scenario under every policy,
//! scenarios in several orders, and the task kinds together — with short windows, so that
//! the matrix stays cheap. Each run must end with status 0 and a report for every task it
//! started (each of these once panicked or hung).

use systests::{Run, boot_with};

/// Every task kind in one custom scenario, with periods short enough for a short window.
const EVERY_KIND: &str = "tasks=sleeper:20ms,hog@2,lat3:50ms,waker:1ms,makej:4/io";

/// The scenarios `run=lab` expands to, in its order.
const SEEDS: [&str; 5] = [
    "seed000-s1",
    "seed000-s2",
    "seed002-a",
    "seed002-b",
    "seed003",
];

fn run(options: &str) -> Run {
    let run = boot_with(options, &["--icount-shift", "2", "--timeout", "120"]);
    assert_eq!(
        run.status, 0,
        "options {options}:\n{}\n{}",
        run.stdout, run.stderr
    );
    run
}

/// The scenarios that reported CPU time, in the order they ran.
fn scenarios_reported(run: &Run) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for r in run.results() {
        if r["kind"] == "cpu" {
            let name = r["scenario"].as_str().unwrap().to_string();
            if seen.last() != Some(&name) {
                seen.push(name);
            }
        }
    }
    seen
}

#[test]
fn every_scenario_runs_under_every_policy() {
    for policy in ["cfs", "eevdf", "o1"] {
        let options =
            format!("policy={policy} run=lab,seed003-io,custom {EVERY_KIND} duration=150ms");
        let run = run(&options);
        let mut expected: Vec<&str> = SEEDS.to_vec();
        expected.extend(["seed003-io", "custom"]);
        assert_eq!(scenarios_reported(&run), expected, "{options}");
        // One cpu line per task of the custom scenario.
        assert_eq!(run.results_of("cpu", "custom").len(), 5, "{options}");
        // Every 1 ms expiry is either a sample (a thread ran) or an overrun (it came while
        // the previous one was pending), whatever the policy does to the threads' latency:
        // from the waker's first expiry — once it has first run, after the tasks ahead of it
        // and a random start offset of up to a period — to the end of the 150 ms window, at
        // most 150 and, under CFS and EEVDF, well over 100. Under O(1) the hog ahead of the
        // waker has a 100 ms slice: the waker may first run (and arm its first expiry) only
        // near the window's end, with as few as one expiry, or not at all, and then has no
        // probe.
        let waker = run
            .results_of("latency", "custom")
            .into_iter()
            .find(|r| r["probe"] == "waker");
        match waker {
            Some(w) => {
                let expiries = w["n"].as_u64().unwrap() + w["missed"].as_u64().unwrap();
                let least = if policy == "o1" { 1 } else { 100 };
                assert!((least..=150).contains(&expiries), "{policy}: {w}");
            }
            None => assert_eq!(policy, "o1", "no waker probe:\n{}", run.stdout),
        }
    }
}

#[test]
fn scenarios_run_in_any_order() {
    for order in [
        "seed003,seed000-s1",
        "seed002-b,seed003,seed002-a",
        "seed003,seed002-b,seed002-a,seed000-s2,seed000-s1",
    ] {
        let run = run(&format!("run={order} duration=100ms"));
        assert_eq!(
            scenarios_reported(&run),
            order.split(',').collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_child_that_preempts_its_spawner_does_not_hang_the_run() {
    // Under O(1) a nice -5 makej's vfork children preempt it inside the fork; each must know
    // its own id and its parent must still reap it.
    let run = run("policy=o1 run=custom tasks=makej%-5 duration=300ms");
    assert_eq!(run.results_of("cpu", "custom").len(), 1);
}
