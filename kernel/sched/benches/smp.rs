//! The N-CPU simulator's speed (`make bench`): the Wasted Cores paper's machine — 64 CPUs in
//! 8 NUMA nodes — running a `make`-like workload of 640 jobs at once for 10 s of simulated
//! time (the goal: at most 10 s of host time), and the cost of one `load_balance` call of
//! the top domain at 2, 8 and 64 CPUs, each CPU running one hog (a pass that scans every
//! group and finds the machine balanced: the common case). It prints its figures; `boot
//! docs bench` keeps them in docs/data/bench.json.

use sched::Fair;
use sched::params::{Era, FairParams, Grouping};
use sched::sim::workload::{Hog, MakeJ};
use sched::sim::{SimConfig, smp::SmpSim};
use sched::smp::balancer::{DomainState, load_balance};
use sched::smp::busiest::IdleType;
use sched::smp::invariant::DEFAULT_THRESHOLD_NS;
use sched::smp::runqueues::{Balancing, Runqueues};
use sched::smp::topology::Topology;
use std::hint::black_box;
use std::time::Instant;

const MS: u64 = 1_000_000;

fn config() -> SimConfig {
    SimConfig {
        tick_ns: 4 * MS,
        ..SimConfig::default()
    }
}

fn cfs_2_6_24() -> Fair {
    let mut p = FairParams::preset(Era::V2_6_24);
    p.grouping = Grouping::None;
    Fair::new(p)
}

/// 640 jobs at once on the paper's machine for 10 simulated seconds: the host seconds.
fn make_on_64_cpus() -> f64 {
    let t = Topology::eight_nodes_of_eight();
    let mut sim = SmpSim::new(&t, cfs_2_6_24, config(), true, DEFAULT_THRESHOLD_NS);
    sim.spawn(Box::new(MakeJ::new(640, false)), 1, 0, 0, t.all());
    let start = Instant::now();
    sim.run_until(10_000 * MS);
    let took = start.elapsed().as_secs_f64();
    let started = sim.tasks().len();
    println!(
        "sim: 64 CPUs, 8 nodes, make -j640: 10 s simulated in {took:.2} s of host time ({started} tasks started)"
    );
    took
}

/// One `load_balance` of CPU 0's top domain on `cpus` plain CPUs, one hog each: ns a call
/// (the median of 101 rounds of 100 calls).
fn load_balance_ns(cpus: usize) -> u64 {
    let t = Topology::flat(cpus);
    let mut sim = SmpSim::new(&t, cfs_2_6_24, config(), true, DEFAULT_THRESHOLD_NS);
    for cpu in 0..cpus {
        sim.spawn(Box::new(Hog), 1, 0, cpu, t.all());
    }
    sim.run_until(100 * MS);
    let domains = sim.balance(0).domains.clone();
    let top = domains.len() - 1;
    let mut rounds: Vec<u64> = (0..101)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..100 {
                let mut state = DomainState::new(&domains[top], 0);
                let outcome = load_balance(
                    &mut state,
                    &domains[top],
                    None,
                    0,
                    IdleType::NotIdle,
                    &mut Balancing(&mut sim),
                );
                black_box(outcome);
            }
            start.elapsed().as_nanos() as u64 / 100
        })
        .collect();
    rounds.sort_unstable();
    let ns = rounds[rounds.len() / 2];
    println!("load_balance: {cpus} CPUs, one hog each: {ns} ns a call");
    ns
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs it once, quickly.
    let quick = !std::env::args().any(|a| a == "--bench");
    if quick {
        load_balance_ns(2);
        return;
    }
    for cpus in [2, 8, 64] {
        load_balance_ns(cpus);
    }
    make_on_64_cpus();
}
