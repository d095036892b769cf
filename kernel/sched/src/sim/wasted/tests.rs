//! Each bug at the paper's scale: with 4.1's behaviour, cores idle beside waiting work and
//! the workload is slower; with each fix, neither. The assertions name who stayed idle
//! (the nodes' mean runqueue lengths) and the checker's figures, with margins around what
//! the mechanism predicts, not one run's figures.

use super::*;
use crate::smp::runqueues::Runqueues;
use std::println;

/// Every run of `bug`'s lab, by name, with its figures printed (`--nocapture`).
fn runs(bug: Bug) -> Vec<(&'static str, Outcome)> {
    bug.variants()
        .into_iter()
        .map(|(name, set)| {
            let o = run(bug, &set);
            let nodes: Vec<f64> = (0..8).map(|n| node_mean(&o, n)).collect();
            println!(
                "{}: {name}: done in {:.3} s, {:?}, nodes {nodes:.2?}",
                bug.scenario(),
                o.completion_ns as f64 / 1e9,
                o.invariant,
            );
            (name, o)
        })
        .collect()
}

/// The mean runqueue length of node `node`'s CPUs over the run.
fn node_mean(o: &Outcome, node: usize) -> f64 {
    let cpus = cpus_of_nodes(&[node]);
    cpus.iter().map(|c| o.heatmap.mean(c)).sum::<f64>() / cpus.len() as f64
}

/// How long the checker watched: from the warm-up to the end.
fn watched(o: &Outcome) -> Nanos {
    o.completion_ns - o.warm_up_ns
}

#[test]
fn group_imbalance_idles_the_hogs_nodes_and_both_fixes_put_them_to_work() {
    let r = runs(Bug::GroupImbalance);
    let (bug, paper, linux) = (&r[0].1, &r[1].1, &r[2].1);
    // 4.1: the hogs' nodes 0 and 4 look heavy on average (a hog weighs 1024, a make job
    // 1024 / 64): new jobs are placed elsewhere and their idle cores steal none, while
    // every other node's cores have jobs waiting. The invariant stays broken nearly all
    // the run, with ten or more CPUs wasted on average (14 idle cores, less the moments a
    // job reaches them).
    for node in 0..8 {
        let mean = node_mean(bug, node);
        match node {
            0 | 4 => assert!(mean < 0.3, "node {node}: {mean}"),
            _ => assert!(mean > 0.9, "node {node}: {mean}"),
        }
    }
    let span = watched(bug);
    assert!(
        bug.invariant.total_ns * 10 >= span * 8,
        "{:?}",
        bug.invariant
    );
    assert!(
        bug.invariant.wasted_cpu_ns >= 8 * span,
        "{:?}",
        bug.invariant
    );
    // Linux 5.5's classification sees the hogs' nodes as having spare capacity beside
    // overloaded ones and fills them: no violation, next to no waste, every node busy.
    assert_eq!(linux.invariant.violations, 0);
    assert!(linux.invariant.wasted_cpu_ns * 20 <= bug.invariant.wasted_cpu_ns);
    for node in 0..8 {
        let mean = node_mean(linux, node);
        assert!((0.85..1.05).contains(&mean), "node {node}: {mean}");
    }
    // The build takes 15 % longer or more with the bug (the paper measured 13 %).
    assert!(bug.completion_ns * 100 >= linux.completion_ns * 115);
    // The paper's fix lets an idle core steal from a group whose least loaded CPU is
    // busier than it: the hogs' nodes work, and the slowdown all but goes. Some waste is
    // left — forks still avoid those nodes (the patch left `find_idlest_group` alone), so
    // their cores take each job by a balancing pass — and with it a few violations.
    assert!(paper.completion_ns * 100 <= linux.completion_ns * 110);
    assert!(paper.invariant.wasted_cpu_ns * 4 <= bug.invariant.wasted_cpu_ns);
    assert!(node_mean(paper, 0) > 0.6 && node_mean(paper, 4) > 0.6);
}

#[test]
fn group_construction_keeps_a_pinned_application_on_one_node_until_fixed() {
    let r = runs(Bug::GroupConstruction);
    let (bug, fix) = (&r[0].1, &r[1].1);
    // 4.1: node 2's CPUs see node 1 in both their top-level groups (as CPU 0 built them)
    // and never in a group apart: the 16 threads run two to a core on node 1 for the
    // whole run, twice their CPU time, while node 2 idles and the invariant stays broken.
    assert!(node_mean(bug, 2) < 0.01 && node_mean(bug, 1) > 1.9);
    assert!(bug.completion_ns >= 2 * WORKER_NS - 10 * MS);
    assert!(bug.invariant.total_ns * 100 >= watched(bug) * 95);
    // Built from each CPU's side, node 2's top level sees node 1 apart and pulls half of
    // the threads (a pass every 64 ms or so at first); after that, no violation.
    assert_eq!(fix.invariant.violations, 0, "{:?}", fix.invariant);
    assert!(fix.completion_ns * 100 <= WORKER_NS * 120);
    assert!(node_mean(fix, 2) > 0.75);
}

#[test]
fn overload_on_wakeup_keeps_a_ninth_worker_on_a_full_node_until_fixed() {
    let r = runs(Bug::OverloadOnWakeup);
    let (bug, fix, newidle) = (&r[0].1, &r[1].1, &r[2].1);
    let cpu_63 = |o: &Outcome| o.heatmap.mean(63);
    // 4.1: the late worker wakes with node 0 full and is placed inside node 0, which then
    // has nine workers for eight cores, while CPU 63 idles throughout. Its idle spells are
    // short, so node 0's and node 7's CPUs skip their newly-idle passes, and the periodic
    // passes see the nodes' groups as balanced: nothing moves it out. Each I/O wait of
    // node 0's workers ends the broken stretch for a moment, so no stretch reaches the
    // 100 ms threshold; the waste is in the CPU time CPU 63 (and node 0's CPUs, when a
    // worker's I/O wait leaves one idle beside a stacked core) idled beside waiting work:
    // about half a CPU over the run (measured), a fifth at the least.
    assert!(cpu_63(bug) < 0.05, "{}", cpu_63(bug));
    assert!(
        bug.invariant.wasted_cpu_ns * 5 >= watched(bug),
        "{:?}",
        bug.invariant
    );
    // Nine workers' 0.9 s of CPU each on eight cores, at least 9/8 of the time; measured
    // from the wake-up, at least 15% longer than with the fix.
    let after_wake = |o: &Outcome| o.completion_ns - o.warm_up_ns;
    assert!(after_wake(bug) * 100 >= after_wake(fix) * 115);
    // The paper's fix wakes the late worker on the core idle longest: CPU 63. Nothing is
    // wasted from then on.
    assert_eq!(fix.invariant.wasted_cpu_ns, 0, "{:?}", fix.invariant);
    assert!(cpu_63(fix) > 0.5, "{}", cpu_63(fix));
    // 5.16's newly-idle pass: a CPU left idle by an I/O wait balances again, and pulls
    // the extra worker out of node 0. It does not stop there: each newly-idle pass that
    // finds the imbalance sets its domain's interval back to the minimum, so the busy
    // CPUs' periodic passes keep taking the extra worker from one another — hundreds of
    // moves, against 4.1's handful — and no core stays stacked for long. The run is as
    // fast as with the fix (within 5%), though CPU 63 itself is seldom the one that takes
    // the worker, and its idle time still counts as wasted.
    assert!(
        newidle.migrations > 10 * bug.migrations,
        "{}",
        newidle.migrations
    );
    assert!(after_wake(newidle) < after_wake(bug));
    assert!(after_wake(newidle) * 100 <= after_wake(fix) * 105);
    assert!(newidle.invariant.wasted_cpu_ns < bug.invariant.wasted_cpu_ns);
}

#[test]
fn missing_domains_keep_every_new_thread_on_its_parents_node_until_fixed() {
    let r = runs(Bug::MissingDomains);
    let (bug, fix) = (&r[0].1, &r[1].1);
    // 4.1: after CPU 1 went offline and came back, no domain spans more than a node.
    // The application's 64 threads are forked onto node 0 and stay there, eight to a
    // core: eight times their CPU time, less the moments the first forks ran alone.
    assert!(node_mean(bug, 0) > 7.0);
    assert!((1..8).all(|n| node_mean(bug, n) == 0.0));
    assert!(bug.completion_ns >= 7 * 1000 * MS);
    assert!(bug.invariant.total_ns * 100 >= watched(bug) * 95);
    // With the NUMA levels kept, forks spread over the machine: a second's work each.
    assert_eq!(fix.invariant.violations, 0, "{:?}", fix.invariant);
    assert!(fix.completion_ns <= 1300 * MS);
    assert!((0..8).all(|n| node_mean(fix, n) > 0.75));
}

#[test]
fn the_missing_domains_are_the_levels_above_the_node() {
    // What the rebuild leaves each CPU: its node only, with the bug; with the fix, the
    // same domains as at boot.
    let t = Topology::opteron_6272();
    let preset = crate::smp::domains::Rules::V6_6;
    let mut buggy = preset.era_features();
    buggy.set(Feature::HotplugKeepsNuma, false);
    let spans = |f| -> Vec<CpuSet> {
        crate::smp::domains::build_after_hotplug(&t, 20, preset, f)
            .iter()
            .map(|d| d.span)
            .collect()
    };
    assert_eq!(spans(buggy), [t.node_cpus(2)]);
    let boot = crate::smp::domains::build(&t, 20, preset);
    assert_eq!(
        spans(preset.era_features()),
        boot.iter().map(|d| d.span).collect::<Vec<_>>()
    );
    assert_eq!(boot.last().unwrap().span, t.all());
}

/// Runs 1 ms, sleeps until 20 ms, runs 1 ms, exits.
struct Nap(u8);

impl Behavior for Nap {
    fn name(&self) -> &str {
        "nap"
    }
    fn next(&mut self, _: &mut Ctx) -> Action {
        self.0 += 1;
        match self.0 {
            1 => Action::Run(MS),
            2 => Action::SleepUntil(20 * MS),
            3 => Action::Run(MS),
            _ => Action::Exit,
        }
    }
}

#[test]
fn with_the_papers_wake_up_fix_a_wakee_goes_to_the_core_idle_longest() {
    // Two nodes of two cores. Hogs keep CPUs 0 and 1 (node 0) busy; CPU 3 goes idle at
    // 5 ms, CPU 2 at 10 ms. A task that slept on CPU 0 wakes at 20 ms. 4.1 (and 6.6)
    // look for an idle core only in node 0's cache: none, so it wakes behind the hog on
    // CPU 0. The paper's fix takes the core idle longest anywhere: CPU 3.
    for (fix, expected) in [(false, 0), (true, 3)] {
        let t = Topology::ring_of_nodes(2, 2);
        let set = [(Feature::WakeLongestIdle, fix)];
        let mut sim = SmpSim::new(&t, policy(&set), config(), true, DEFAULT_THRESHOLD_NS);
        sim.spawn(Box::new(Hog), 1, 0, 0, CpuSet::one(0));
        sim.spawn(Box::new(Hog), 1, 0, 1, CpuSet::one(1));
        sim.spawn(Box::new(Worker(10 * MS)), 1, 0, 2, t.all());
        sim.spawn(Box::new(Worker(5 * MS)), 1, 0, 3, t.all());
        let nap = sim.spawn(Box::new(Nap(0)), 1, 0, 0, t.all());
        sim.run_until(19 * MS);
        assert_eq!(sim.cpu_of(nap), 0, "asleep where it ran");
        let stamps: Vec<_> = (2..4).map(|c| sim.balance(c).idle_stamp).collect();
        assert_eq!(stamps, [Some(10 * MS), Some(5 * MS)]);
        sim.run_until(20 * MS + 1);
        assert_eq!(sim.cpu_of(nap), expected, "WAKE_LONGEST_IDLE {fix}");
    }
}
