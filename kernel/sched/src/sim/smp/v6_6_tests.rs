//! The simulator under 6.6's balancer: shares from load averages, moves by count then by
//! load, and an idle hyperthread that weighted balancing hides and 6.6 does not.

use super::tests::{config, five_hogs, one_hog_beside_four, two_cpus_grouped};
use super::*;
use crate::Fair;
use crate::params::{Era, FairParams};
use crate::sim::workload::Hog;
use crate::smp::invariant::DEFAULT_THRESHOLD_NS;

const MS: u64 = 1_000_000;

#[test]
fn in_6_6_a_group_on_two_cpus_splits_its_shares_by_load_average() {
    use crate::smp::runqueues::Runqueues;
    // uid 1 runs a hog pinned to each of two CPUs, with 6.6's per-uid groups. Each CPU's
    // queue of the group averages 1024 (a task runnable all the time), so the group's
    // load over the machine, `tg->load_avg`, is 2048, and each CPU's entity weighs
    // `calc_group_shares` = 1024 × 1024 / 2048 = 512: half the group's shares on each,
    // where 2.6.24 gave it all 1024 on both. A CPU's load is its entity's average, 512.
    let mut sim = two_cpus_grouped(Era::V6_6);
    for cpu in 0..2 {
        sim.spawn(Box::new(Hog), 1, 0, cpu, CpuSet::one(cpu));
    }
    sim.run_until(1000 * MS);
    for cpu in 0..2 {
        let policy = sim.rq(cpu).policy();
        let weight = policy.group_shares()[0];
        assert!(
            weight.0 == 1 && weight.1.abs_diff(512) <= 2,
            "CPU {cpu}: {weight:?}"
        );
        let load = policy.load_avg().unwrap().load;
        assert!(load.abs_diff(512) <= 2, "CPU {cpu}: {load}");
    }
    assert_eq!(sim.migrations, 0, "pinned");
}

#[test]
fn in_6_6_tasks_move_by_count_first_then_by_load() {
    // The same five hogs under 6.6 (groups per uid, shares from PELT). At the first tick
    // CPU 1 is idle beside five tasks: its group has spare capacity and CPU 0's is
    // overloaded, so *tasks* move — half the difference, 5 / 2 = 2 (the two least recently
    // run, both uid 2's). Then both CPUs are busy and overloaded and *load* moves, at CPU 1's
    // busy interval (2 ms × `busy_factor` 16 = 32 ms): uid 2's share on CPU 0 follows its
    // load average there (1024 × 1024 / 3072 = 341 at first), CPU 0 stays heavier, and a
    // uid 2 task goes at 36 ms and the last at 68 ms. uid 1's hog ends alone: each user has
    // half the machine, as from 2.6.33 — by another road.
    let mut sim = five_hogs(Era::V6_6);
    let mut moves = Vec::new();
    for ms in 1..=200 {
        let before = sim.migrations;
        sim.run_until(ms * MS);
        if sim.migrations != before {
            moves.push((ms, sim.migrations));
        }
    }
    assert_eq!(moves, [(4, 2), (36, 3), (68, 4)]);
    let (cpus, uid1, uid2) = one_hog_beside_four(Era::V6_6);
    assert_eq!(cpus, [0, 1, 1, 1, 1]);
    assert!(
        (uid1 - 0.5).abs() < 0.02 && (uid2 - 0.5).abs() < 0.02,
        "{uid1} {uid2}"
    );
}

#[test]
fn a_heavy_hog_alone_on_a_core_hides_its_idle_sibling_until_6_6() {
    // Two cores of two hyperthreads; a nice −5 hog (weight 3121) and three nice-0 hogs (3072
    // together), all started on CPU 0. Whatever the CFS era, the balancer ends with the heavy hog
    // alone on one core and the three others on the other core's two threads: one of them always
    // waits, while the heavy hog's sibling thread idles. The idle thread's core is the heavier one
    // — 3121 against 3072 (per unit of power in 2.6.36, 2713 against 2670) — so at the level of
    // cores it has nothing to pull, and at the level of threads it sees its sibling run a single
    // task, which cannot be pulled. Load balanced by weight hides an idle CPU: the Wasted Cores
    // paper's theme. The invariant counts one stretch that never ends. 6.6 classifies the busy core
    // as overloaded (three tasks on two threads) and the other as having spare capacity, and moves
    // a task: one hog per thread.
    for era in [Era::V2_6_24, Era::V2_6_32, Era::V2_6_36, Era::V6_6] {
        let t = Topology::smp(1, 2, 2);
        let preset = || Fair::new(FairParams::preset(era));
        let mut sim = SmpSim::new(&t, preset, config(), true, DEFAULT_THRESHOLD_NS);
        sim.spawn(Box::new(Hog), 1, -5, 0, t.all());
        for _ in 0..3 {
            sim.spawn(Box::new(Hog), 1, 0, 0, t.all());
        }
        sim.run_until(3000 * MS);
        let r = sim.invariant();
        if era == Era::V6_6 {
            assert_eq!((r.violations, r.total_ns), (0, 0), "{era:?}");
            let mut cpus: Vec<usize> = (0..4).map(|t| sim.cpu_of(TaskId::new(t))).collect();
            cpus.sort_unstable();
            assert_eq!(cpus, [0, 1, 2, 3]);
        } else {
            assert_eq!(r.violations, 1, "{era:?}: {r:?}");
            assert!(r.total_ns >= 2500 * MS, "{era:?}: {r:?}");
        }
    }
}

/// Two packages of two CPUs under 6.6, a hog on each CPU of `on` — one that may not run on
/// CPU 0 where `off_0` says so.
fn two_packages(on: &[(usize, bool)]) -> SmpSim<Fair> {
    let t = Topology::smp(2, 2, 1);
    let preset = || Fair::new(FairParams::preset(Era::V6_6));
    let mut sim = SmpSim::new(&t, preset, config(), true, DEFAULT_THRESHOLD_NS);
    for &(cpu, off_0) in on {
        let allowed = if off_0 { t.all().without(0) } else { t.all() };
        sim.spawn(Box::new(Hog), 1, 0, cpu, allowed);
    }
    sim
}

/// Which CPU each of the first four tasks is on.
fn placement(sim: &SmpSim<Fair>) -> [usize; 4] {
    core::array::from_fn(|t| sim.cpu_of(TaskId::new(t)))
}

#[test]
fn a_group_its_affinity_kept_from_balancing_is_marked_and_the_level_above_takes_a_task() {
    use crate::smp::runqueues::Runqueues;
    // Two packages, {0, 1} and {2, 3}. CPU 1 runs two hogs that may not run on CPU 0; CPUs 2 and 3
    // a free hog each. CPU 0's pass over its package finds CPU 1 overloaded and can take neither
    // hog: it marks its package imbalanced one level up. Unmarked, that level would see two tasks
    // on two CPUs — fully busy, nothing for a busy CPU to pull — and CPU 0 would idle for good
    // beside a waiting hog it cannot run but could free a CPU for. Marked, the package is a group
    // of the type `imbalanced`: CPU 2, at its next pass at the top level (64 ms in: a busy CPU's 4
    // ms × `busy_factor` 16), takes one task from it — a pinned hog, which may run there. Then
    // package {2, 3} runs three tasks on two CPUs, and CPU 0 takes a free hog from it (once the
    // pinned one, which it would send back to CPU 1 on its sibling's behalf, is not the first it
    // looks at): one hog per CPU.
    let mut sim = two_packages(&[(1, true), (1, true), (2, false), (3, false)]);
    let top = sim.balance(0).domains[1].clone();
    let package = top.groups[0].cpus;
    assert_eq!(package, CpuSet::first(2));
    let marked = |sim: &SmpSim<Fair>| {
        let keeper = sim.balance(0);
        keeper
            .imbalanced_groups
            .contains(top.topology_level, package)
    };
    sim.run_until(4 * MS);
    assert!(marked(&sim), "CPU 0's first pass marks its package");
    assert_eq!((placement(&sim), sim.migrations), ([1, 1, 2, 3], 0));
    // CPU 1's own pass at the package level, finding nothing to pull from CPU 0, clears
    // the mark (its package's, shared); CPU 0's next sets it again. Both run at a tick
    // before CPU 2's, so a move at a tick happens with the mark set.
    let mut first_move = None;
    for ms in 5..=1000 {
        sim.run_until(ms * MS);
        if sim.migrations > 0 && first_move.is_none() {
            first_move = Some((ms, marked(&sim), placement(&sim)));
        }
    }
    let (ms, was_marked, cpus) = first_move.expect("a task moves");
    assert!(was_marked, "at {ms} ms, unmarked: {cpus:?}");
    assert_eq!(cpus[2..], [2, 3], "a pinned hog left CPU 1 first: {cpus:?}");
    let mut cpus = placement(&sim);
    assert!(cpus[0] != 0 && cpus[1] != 0, "the pinned hogs: {cpus:?}");
    cpus.sort_unstable();
    assert_eq!(cpus, [0, 1, 2, 3], "one hog per CPU");
}

#[test]
fn a_pass_that_cannot_take_a_pinned_task_moves_it_to_another_cpu_of_its_group() {
    use crate::smp::busiest::IdleType;
    use crate::smp::runqueues::Runqueues;
    use crate::smp::schedstat::index;
    // Four hogs that may not run on CPU 0: three on CPU 2, one on CPU 3; CPUs 0 and 1
    // idle. At the top level only one CPU of package {0, 1} balances — its first idle
    // one, CPU 0 — and CPU 0 may take none of the hogs. With the retry for another CPU of
    // its group (`LBF_DST_PINNED`), its first pass moves them to CPU 1 instead: the
    // package has two CPUs of spare capacity, so utilisation moves — as much as CPU 2 can
    // give without being left empty, two hogs. Without it CPU 1 would idle for good while
    // hogs wait on CPU 2 (one violation of the invariant that never ends); CPU 1's own
    // pass at the top level never runs, since CPU 0 is the one that balances for both.
    let mut sim = two_packages(&[(2, true), (2, true), (2, true), (3, true)]);
    sim.run_until(4 * MS);
    assert_eq!(placement(&sim), [2, 1, 1, 3]);
    let gained = sim.balance(0).states[1].stats.gained[index(IdleType::Idle)];
    assert_eq!(gained, 2, "CPU 0's pass moved both, to CPU 1: it runs none");
    sim.run_until(1000 * MS);
    let r = sim.invariant();
    assert_eq!((r.violations, r.total_ns), (0, 0), "{r:?}");
    let mut cpus = placement(&sim);
    cpus.sort_unstable();
    assert_eq!(cpus[1..], [1, 2, 3], "CPUs 1 to 3 busy: {cpus:?}");
}
