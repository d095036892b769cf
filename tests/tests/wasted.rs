//! The Wasted Cores bugs in the kernel, at QEMU's scale: 8 vCPUs in 4 NUMA nodes of two on a
//! ring (`--numa 4`: nodes 1 and 3, like 0 and 2, are two hops apart), running
//! `userland/c/wasted.c` under 6.6's balancer with 4.1's behaviour switched back, then with
//! the paper's fix (docs/wasted-cores.md). Several CPUs under icount are not exactly
//! deterministic, so each test asserts what the mechanism allows — a node no task can
//! reach, a node that takes work — not one run's counts. The simulator has the paper's
//! scale and the full matrix (`make wasted`).

use serde_json::Value;

/// The program `run=name` runs (`bootopts::wasted`), to run it with other switches.
fn argv_of(name: &str) -> &'static str {
    let scenario = bootopts::wasted::scenario(name);
    scenario.expect("a wasted scenario").argv
}

/// The machine of the lab's kernel scenarios (`bootopts::wasted::CPUS` and `NODES`), as
/// the boot tool's flags.
fn machine() -> Vec<String> {
    let (cpus, nodes) = (bootopts::wasted::CPUS, bootopts::wasted::NODES);
    [
        "--icount-shift",
        "2",
        "--smp",
        &cpus.to_string(),
        "--numa",
        &nodes.to_string(),
    ]
    .map(String::from)
    .to_vec()
}

/// The program's per-node counts (`...: node0=N node1=N ...`) and the invariant's line,
/// run under `options` with 6.6's policy and the checker on.
fn wasted(options: &str, argv: &str) -> (Vec<u64>, Value) {
    counts(&format!("policy=eevdf invariant=on {options} -- {argv}"))
}

/// The same for a run of the boot options `options` (a `run=wasted-*` scenario, or a
/// program after ` -- `).
fn counts(options: &str) -> (Vec<u64>, Value) {
    let flags = machine();
    let run = systests::boot_with(
        options,
        &flags.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    if run.stdout.contains(" group=uid ") {
        nothing_leaked_but_three_uids_groups(&run);
    } else {
        systests::assert_nothing_leaked(&run);
    }
    let output = systests::program_output(&run);
    let line = output
        .lines()
        .find(|l| l.contains(" node0="))
        .unwrap_or_else(|| panic!("no node counts in:\n{output}"));
    let nodes = line
        .split_whitespace()
        .filter_map(|w| w.split_once('='))
        .map(|(_, n)| n.parse().expect("a count"))
        .collect();
    (nodes, run.result("invariant"))
}

/// Every frame is back, and the heap has grown by no more than the harness allows each CPU
/// (`systests::assert_nothing_leaked`) and, on each of the 8 CPUs, each of the three uids'
/// groups: made the first time a uid's task runs there, a group is kept for the boot
/// (measured: 50 KiB with no groups, 97–107 KiB with the three, for 16 or 48 jobs alike).
fn nothing_leaked_but_three_uids_groups(run: &systests::Run) {
    let memory = run.result("memory");
    assert_eq!(memory["frames_after"], memory["frames_before"], "{memory}");
    let grew = memory["heap_bytes_after"].as_i64().unwrap()
        - memory["heap_bytes_before"].as_i64().unwrap();
    assert!((0..(12_288 + 3 * 8_192) * 8).contains(&grew), "{memory}");
}

#[test]
fn a_pinned_application_never_reaches_its_second_node_until_groups_are_built_from_each_cpu() {
    // Four threads allowed nodes 1 and 3, started on node 1, 200 ms of CPU each. 4.1's
    // construction gives every CPU the top-level groups CPU 0 sees, nodes {3, 0, 1} and
    // {1, 2, 3}: node 3's CPUs find node 1 in both their groups — their own — and never
    // pull. Node 3 idles while two threads wait on node 1: a violation.
    // The scenario `run=wasted-group-construction` is that program with 4.1's switches.
    let argv = argv_of("wasted-group-construction");
    let (bug, invariant) = counts("run=wasted-group-construction");
    assert_eq!(bug[3], 0, "{bug:?}");
    assert!(invariant["violations"].as_u64() >= Some(1), "{invariant}");
    // Built from node 3's side, its top level has node 1 in a group apart, and 4.1's
    // balancer pulls from it (one thread, at least: with the other nodes idle in the
    // groups, its idle-CPU rule may then call the rest balanced).
    let (fix, _) = wasted("features=NO_LB_GROUP_TYPES", argv);
    assert!(fix[3] >= 1, "{fix:?}");
    // 6.6's own balancer leaves them on node 1 at this scale: node 3's top-level groups,
    // its own {2, 3, 0} and node 1's {0, 1, 2}, both have spare capacity — node 1 shares
    // its group with two idle nodes its threads may not use — so it moves tasks by the
    // groups' idle CPUs, 6 against 4, and a NUMA level leaves an imbalance of 2 or less
    // alone (`adjust_numa_imbalance`). Nor does 6.6's mark of a group that affinity kept
    // from balancing fire: node 3 would need node 1's group {0, 1, 2} marked, which only
    // node 1's CPUs' passes one level down can do, and they, two threads each, find nothing
    // to pull; the idle CPUs refused the threads (nodes 0 and 2) mark groups of their own.
    let (six_six, _) = wasted("", argv);
    assert_eq!(six_six[3], 0, "{six_six:?}");
}

#[test]
fn a_hog_hides_its_nodes_idle_cpu_until_groups_are_compared_by_minimum_load() {
    // A build of 96 jobs of 50 ms, 8 at a time, in uid 1, beside hogs of uids 2 and 3
    // pinned to the first CPUs of nodes 0 and 2, with per-uid groups. 4.1's balancer and
    // fork placement weigh a node by its average load — the hog's 1024 over two CPUs,
    // against jobs that weigh 1024 / 8 each — so the hogs' nodes' other CPUs neither get
    // new jobs nor steal any, while jobs wait elsewhere: fewer than their fair share end
    // there — two of the six CPUs free of hogs, 32 of the 96 (measured: 0–15 while a
    // newly-idle pass held every runqueue, 23–30 since it holds two; one to four
    // violations, 0.5–3.2 s of the invariant broken; how many reach those nodes depends on
    // where QEMU's round-robin happens to switch vCPUs, which follows the host's time).
    // The scenario `run=wasted-group-imbalance` (4.1's switches, per-uid groups); its fix
    // by the same program with the paper's switch on.
    let argv = argv_of("wasted-group-imbalance");
    let (bug, invariant) = counts("run=wasted-group-imbalance");
    assert!(bug[0] + bug[2] < 32, "fewer than their share: {bug:?}");
    assert!(invariant["violations"].as_u64() >= Some(1), "{invariant}");
    assert!(
        invariant["idle_while_waiting_us"].as_u64() >= Some(300_000),
        "{invariant}"
    );
    // Compared by their least loaded CPUs, the hogs' nodes' idle CPUs are lighter than any
    // CPU of a node running jobs: they steal from them, and no CPU idles beside a waiting
    // job for the checker's 100 ms. How many jobs they end up running moves with the CPUs'
    // interleaving (measured: 21–37 while a newly-idle pass held every runqueue; since it
    // holds two, 45 in the release build and 18 in this debug one, below the bug's 23 —
    // the passes of several CPUs overlap now, and the debug build's are slow), so what is
    // asserted of the fix is what it fixes: the time cores idle beside waiting work, and
    // CPU time wasted (measured: 0 of 504 ms, and 683 of 1 151 ms; release: 0 of 592 ms,
    // 311 of 882 ms).
    let (fix, fixed) = wasted("group=uid features=NO_LB_GROUP_TYPES,LB_MIN_LOAD", argv);
    assert!(fix[0] + fix[2] >= 12, "{fix:?}");
    let us = |v: &Value, what: &str| v[what].as_u64().unwrap();
    let idle_waiting = |v: &Value| us(v, "idle_while_waiting_us");
    assert!(
        idle_waiting(&fixed) * 4 <= idle_waiting(&invariant),
        "{fixed} {invariant}"
    );
    assert!(
        us(&fixed, "wasted_cpu_us") < us(&invariant, "wasted_cpu_us"),
        "{fixed} {invariant}"
    );
}

#[test]
fn a_worker_woken_on_a_full_node_waits_there_until_woken_on_the_core_idle_longest() {
    // Seven threads pinned one a CPU from CPU 0 compute; a database's worker, made on node
    // 0 and free to run anywhere, first sleeps 50 ms, then runs short transactions between
    // short I/O waits. When it wakes, node 0 (CPUs 0 and 1) is full and CPU 7 has been idle
    // since the start. 4.1's placement looks for an idle CPU only in node 0's cache, finds
    // none and wakes it on its previous CPU, 0; at this scale its node's group is then
    // overloaded (three tasks on two CPUs) and the idle balancer moves it to CPU 7 a few
    // milliseconds later (measured: 0.2–4.5 ms). On the paper's eight-core nodes one task too
    // many hides in the groups' averages and stays: the simulator shows that.
    let bug = late_wake("run=wasted-overload-wakeup");
    assert_eq!(bug.slept_on, 0, "{bug:?}");
    let (after_us, to) = bug.moved.expect("the balancer moves it");
    assert!(after_us > 0 && to == 7, "{bug:?}");
    // The paper's fix wakes it straight on the CPU idle longest: 7.
    let fix = late_wake("run=wasted-overload-wakeup features=WAKE_LONGEST_IDLE");
    assert_eq!((fix.slept_on, fix.moved), (0, Some((0, 7))), "{fix:?}");
}

/// Where the database's worker of `run=wasted-overload-wakeup` (with `options`) woke, from
/// the run's trace: its first `sched_waking` names the CPU it slept on; its first
/// `sched_migrate_task` from then on, how long after the wake-up it moved (0: at the
/// wake-up, placed there), and where.
#[derive(Debug)]
struct LateWake {
    slept_on: u64,
    moved: Option<(u64, u64)>,
}

fn late_wake(options: &str) -> LateWake {
    let name = format!(
        "cfslab-wakeup-{}-{}.trace",
        std::process::id(),
        options.len()
    );
    let trace = std::env::temp_dir().join(name);
    let trace_arg = trace.display().to_string();
    let mut flags = machine();
    flags.extend(["--trace".to_string(), trace_arg]);
    let run = systests::boot_with(
        options,
        &flags.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    systests::assert_nothing_leaked(&run);
    let pid = run
        .stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix(bootopts::wasted::WAKEUP_WORKER))
        .expect("the worker's pid")
        .to_string();
    let text = std::fs::read_to_string(&trace).expect("the trace");
    let _ = std::fs::remove_file(&trace);
    let _ = std::fs::remove_file(trace.with_extension("json"));
    // `... [CPU] FLAGS SECS.USECS: EVENT: comm=wasted pid=P ...`: the time and a field.
    let of_worker = |event: &str| {
        let tag = format!(" {event}: comm=wasted pid={pid} ");
        text.lines()
            .filter(move |l| l.contains(&tag))
            .map(|l| {
                let stamp = l
                    .split(": ")
                    .next()
                    .unwrap()
                    .split_whitespace()
                    .last()
                    .unwrap();
                let us = stamp.replace('.', "").parse::<u64>().unwrap();
                (us, l.to_string())
            })
            .collect::<Vec<_>>()
    };
    let field = |l: &str, key: &str| -> u64 {
        let v = l.split(&format!(" {key}=")).nth(1).expect(key);
        v.split_whitespace().next().unwrap().parse().unwrap()
    };
    let (at, waking) = of_worker("sched_waking")
        .into_iter()
        .next()
        .expect("a wake-up");
    let moved = of_worker("sched_migrate_task")
        .into_iter()
        .find(|(t, _)| *t >= at)
        .map(|(t, l)| (t - at, field(&l, "dest_cpu")));
    LateWake {
        slept_on: field(&waking, "target_cpu"),
        moved,
    }
}

#[test]
fn a_cpu_brought_back_online_leaves_every_cpu_without_its_numa_levels() {
    // CPU 7 goes offline and comes back (`echo 0`, `echo 1` to its `online` file), then 8
    // threads of 200 ms are forked on node 0 and allowed every node. With 4.1's rebuild
    // the domains stop at the node: fork placement and balancing never look past node 0,
    // whose two CPUs run all 8 while six CPUs idle — a violation lasting most of the run
    // (measured: 0.8 s of 100 ms+ waits).
    let (bug, invariant) = counts("run=wasted-missing-domains");
    assert_eq!(bug[1..], [0, 0, 0], "{bug:?}");
    assert!(invariant["violations"].as_u64() >= Some(1), "{invariant}");
    assert!(
        invariant["idle_while_waiting_us"].as_u64() >= Some(300_000),
        "{invariant}"
    );
    // Rebuilt with their NUMA levels (Linux 4.9's fix), the threads reach the other nodes
    // (measured: two a node; no violation, or one just over the threshold while they
    // spread: a fraction of 4.1's idle time).
    let (fix, fixed) = counts("run=wasted-missing-domains features=HOTPLUG_KEEPS_NUMA");
    assert!(fix[1..].iter().sum::<u64>() >= 4, "{fix:?}");
    let idle_us = |v: &Value| v["idle_while_waiting_us"].as_u64().unwrap();
    assert!(
        idle_us(&fixed) * 4 <= idle_us(&invariant),
        "{fixed} {invariant}"
    );
}

#[test]
fn a_scenario_on_a_machine_without_its_nodes_says_what_it_needs() {
    // One CPU: the program refuses with one line, and the run fails.
    let run = systests::boot_with("run=wasted-group-construction", &["--icount-shift", "2"]);
    assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
    let needs = "wasted: needs 4 NUMA nodes of 2 CPUs (boot with --smp 8 --numa 4)";
    assert!(run.stdout.contains(needs), "{}", run.stdout);
}
