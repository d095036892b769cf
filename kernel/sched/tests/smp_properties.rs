//! Property tests of the simulator on several CPUs, under every era's balancer and
//! placement: random machines (2–4 CPUs: plain, hyperthreads, or two NUMA nodes), random tasks (hogs,
//! sleepers, lat3's spin-and-sleep), random affinities and start CPUs, groups per uid or
//! none. At every millisecond:
//! - a task is on exactly one runqueue — its runqueue and its policy there know it, no
//!   other does;
//! - it is on a CPU its affinity allows.
//!
//! And over the run:
//! - every task that is runnable runs within a bound;
//! - with nice-0 hogs free to run anywhere and no groups, once the balance intervals have
//!   passed no CPU idles while another has a task waiting that it could take (the Wasted
//!   Cores invariant, at no threshold). With nice levels or groups it does not hold before
//!   6.6: see the test.
//!
//! The random seed is fixed, so every run (and CI) tries the same cases;
//! `PROPTEST_RNG_SEED=N` explores others.

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use sched::rq::State;
use sched::sim::SimConfig;
use sched::sim::smp::SmpSim;
use sched::sim::workload::{Hog, Lat3, Sleeper};
use sched::smp::cpuset::CpuSet;
use sched::smp::invariant::DEFAULT_THRESHOLD_NS;
use sched::smp::runqueues::Runqueues;
use sched::smp::topology::Topology;
use sched::{Era, Fair, FairParams, Grouping, Policy, TaskId};

const MS: u64 = 1_000_000;

/// The longest any runnable task may wait for its CPU here: a few of the eras' periods
/// (at most 8 tasks on a CPU, nice −5 to 5: CFS runs each within its period, about
/// 20–60 ms scaled by the CPU count; EEVDF within its lag bound) — a task left behind for
/// good would wait the whole second.
const WAIT_BOUND_NS: u64 = 250 * MS;

#[derive(Debug, Clone, Copy)]
enum Kind {
    Hog,
    Sleeper,
    Lat3,
}

#[derive(Debug, Clone, Copy)]
struct TaskSpec {
    kind: Kind,
    uid: u32,
    nice: i8,
    start: usize,
    /// Affinity bits (before the start CPU is added, so that it is allowed).
    allowed: u64,
}

fn task_spec() -> impl Strategy<Value = TaskSpec> {
    let kind = prop_oneof![Just(Kind::Hog), Just(Kind::Sleeper), Just(Kind::Lat3)];
    (kind, 1u32..4, -5i8..=5, 0usize..4, 0u64..16).prop_map(|(kind, uid, nice, start, allowed)| {
        TaskSpec {
            kind,
            uid,
            nice,
            start,
            allowed,
        }
    })
}

fn era() -> impl Strategy<Value = Era> {
    prop::sample::select(Era::ALL.iter().map(|(_, e)| *e).collect::<Vec<_>>())
}

fn grouping() -> impl Strategy<Value = Grouping> {
    prop::sample::select(vec![Grouping::Uid, Grouping::None])
}

/// A machine of `cpus` CPUs of `shape`: plain (0), or — with an even count — cores of two
/// hyperthreads (1), or two NUMA nodes (2).
fn topology(cpus: usize, shape: u8) -> Topology {
    match shape {
        1 if cpus.is_multiple_of(2) => Topology::smp(1, cpus / 2, 2),
        2 if cpus.is_multiple_of(2) => Topology::ring_of_nodes(2, cpus / 2),
        _ => Topology::flat(cpus),
    }
}

fn machine(era: Era, grouping: Grouping, t: &Topology) -> SmpSim<Fair> {
    let policy = move || {
        let mut p = FairParams::preset(era);
        p.grouping = grouping;
        Fair::new(p)
    };
    let config = SimConfig {
        tick_ns: 4 * MS,
        ..SimConfig::default()
    };
    SmpSim::new(t, policy, config, true, DEFAULT_THRESHOLD_NS)
}

/// `task` is known to exactly one CPU's runqueue and policy — `cpu_of`'s — which its
/// affinity allows.
fn check_one_home(sim: &SmpSim<Fair>, task: TaskId, allowed: CpuSet) -> Result<(), TestCaseError> {
    let home = sim.cpu_of(task);
    for cpu in 0..sim.len() {
        let rq = sim.rq(cpu);
        let known = rq.get(task).is_some();
        let in_policy = rq.policy().task_info(task).is_some();
        prop_assert_eq!(
            known,
            cpu == home,
            "task {} on CPU {}'s runqueue",
            task,
            cpu
        );
        prop_assert_eq!(
            in_policy,
            cpu == home,
            "task {} in CPU {}'s policy",
            task,
            cpu
        );
    }
    prop_assert!(
        allowed.contains(home),
        "task {} on CPU {} outside {:?}",
        task,
        home,
        allowed
    );
    Ok(())
}

fn seeded(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: RngSeed::Fixed(
            std::env::var("PROPTEST_RNG_SEED")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0x5eed_0000_0000_0026),
        ),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(seeded(48))]

    #[test]
    fn tasks_have_one_home_within_their_affinity_and_never_starve(
        era in era(),
        grouping in grouping(),
        cpus in 2usize..=4,
        shape in 0u8..3,
        specs in prop::collection::vec(task_spec(), 1..8),
    ) {
        let t = topology(cpus, shape);
        let mut sim = machine(era, grouping, &t);
        let mut allowed = Vec::new();
        for s in &specs {
            let start = s.start % cpus;
            let mask = CpuSet::from_bits(s.allowed & t.all().bits()).with(start);
            let behavior: Box<dyn sched::sim::Behavior> = match s.kind {
                Kind::Hog => Box::new(Hog),
                Kind::Sleeper => Box::new(Sleeper::new(10 * MS)),
                Kind::Lat3 => Box::new(Lat3::new(MS)),
            };
            sim.spawn(behavior, s.uid, s.nice, start, mask);
            allowed.push(mask);
        }
        for ms in 1..=1000 {
            sim.run_until(ms * MS);
            for (task, &mask) in allowed.iter().enumerate() {
                check_one_home(&sim, TaskId::new(task), mask)?;
            }
        }
        for (task, st) in sim.tasks().iter().enumerate() {
            let longest = st.waits.iter().copied().max().unwrap_or(0);
            prop_assert!(
                longest <= WAIT_BOUND_NS,
                "{:?}: task {} waited {} ms", era, task, longest / MS
            );
            prop_assert!(st.cpu_ns > 0, "{:?}: task {} never ran", era, task);
        }
    }

    #[test]
    fn once_balanced_no_cpu_idles_beside_a_waiting_hog(
        era in era(),
        cpus in 2usize..=4,
        shape in 0u8..3,
        hogs in prop::collection::vec((1u32..4, 0usize..4), 1..9),
    ) {
        // Nice-0 hogs without groups, free to run anywhere, started anywhere: after a second of balancing
        // (the slowest busy interval here is 2.6.24's 64 ms) no CPU may idle at all while
        // another has a hog waiting — not even briefly (the invariant at no threshold).
        // Not with nice levels: a heavy hog alone on a core of hyperthreads hides its idle
        // sibling from every CFS era (`sim/smp/tests.rs` shows it, worked). Nor with
        // groups: a group of three hogs weighs its shares, as much as another group's one
        // hog, so on two cores of two threads the lone hog's core looks as loaded as the
        // core where the three share two threads (the Wasted Cores paper's Group
        // Imbalance, found here in 2.6.35).
        let t = topology(cpus, shape);
        let mut sim = machine(era, Grouping::None, &t);
        for &(uid, start) in &hogs {
            sim.spawn(Box::new(Hog), uid, 0, start % cpus, t.all());
        }
        sim.run_until(1000 * MS);
        let before = sim.invariant();
        sim.run_until(3000 * MS);
        let after = sim.invariant();
        prop_assert_eq!(
            after.total_ns, before.total_ns,
            "{:?}: a CPU idled beside a waiting hog ({:?} → {:?})", era, before, after
        );
        if hogs.len() >= cpus {
            for cpu in 0..cpus {
                let rq = sim.rq(cpu);
                prop_assert!(rq.current() != rq.idle(), "{:?}: CPU {} idle", era, cpu);
                prop_assert_eq!(rq.state(rq.current()), State::Running);
            }
        }
    }
}
