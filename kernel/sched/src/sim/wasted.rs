//! The Wasted Cores lab in the simulator: the four load-balancing bugs of Lozi et al., "The
//! Linux Scheduler: a Decade of Wasted Cores" (EuroSys 2016), each as a workload on the
//! paper's machine ([`Topology::opteron_6272`]: 64 cores in 8 NUMA nodes), run with Linux
//! 4.1's behaviour and with each fix (docs/wasted-cores.md).
//!
//! cfslab runs 6.6's balancer and placement with five of their mechanisms set back to
//! 4.1's by `features=` switches ([`crate::features::Feature::is_balancing`]); a bug's
//! "4.1" run sets all five back, and each fix turns one on again:
//!
//! | bug | 4.1 | the paper's fix | Linux's fix |
//! |---|---|---|---|
//! | Group Imbalance | `NO_LB_GROUP_TYPES` | `LB_MIN_LOAD` | `LB_GROUP_TYPES` (5.5) |
//! | Scheduling Group Construction | `NO_NUMA_GROUPS_FROM_SELF` | `NUMA_GROUPS_FROM_SELF` | the same (4.13) |
//! | Overload-on-Wakeup | `NO_WAKE_LONGEST_IDLE`, `NO_NEWIDLE_ON_SHORT_IDLE` | `WAKE_LONGEST_IDLE` | none |
//! | Missing Scheduling Domains | `NO_HOTPLUG_KEEPS_NUMA` | `HOTPLUG_KEEPS_NUMA` | the same (4.9) |
//!
//! Each run reports the workload's completion time, the invariant checker's figures and
//! each CPU's runqueue length over time ([`Heatmap`]).

use super::smp::SmpSim;
use super::smp::heatmap::Heatmap;
use super::workload::{Hog, MakeJ};
use super::{Action, Behavior, Ctx, SimConfig};
use crate::Fair;
use crate::features::Feature;
use crate::params::{Era, FairParams, Grouping};
use crate::policy::{ForkKind, Nanos, TaskId};
use crate::smp::cpuset::CpuSet;
use crate::smp::invariant::{DEFAULT_THRESHOLD_NS, Report};
use crate::smp::topology::Topology;
use alloc::boxed::Box;
use alloc::vec::Vec;

const MS: Nanos = 1_000_000;

/// One of the paper's four bugs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bug {
    /// §3.1: a node's average load hides its idle cores.
    GroupImbalance,
    /// §3.2: NUMA groups built from CPU 0's side.
    GroupConstruction,
    /// §3.3: a wakee kept on its busy node.
    OverloadOnWakeup,
    /// §3.4: no NUMA domains after a CPU comes back online.
    MissingDomains,
}

impl Bug {
    /// Every bug, in the paper's order.
    pub const ALL: [Bug; 4] = [
        Bug::GroupImbalance,
        Bug::GroupConstruction,
        Bug::OverloadOnWakeup,
        Bug::MissingDomains,
    ];

    /// Its scenario's name (`run=`).
    pub fn scenario(self) -> &'static str {
        match self {
            Bug::GroupImbalance => "wasted-group-imbalance",
            Bug::GroupConstruction => "wasted-group-construction",
            Bug::OverloadOnWakeup => "wasted-overload-wakeup",
            Bug::MissingDomains => "wasted-missing-domains",
        }
    }

    /// The runs of its lab: 4.1, then each fix, named, with the switches each sets on top
    /// of 6.6's preset.
    pub fn variants(self) -> Vec<(&'static str, Vec<(Feature, bool)>)> {
        let with = |fix: Option<Feature>| {
            let mut set: Vec<(Feature, bool)> =
                Feature::LINUX_4_1_OFF.iter().map(|&f| (f, false)).collect();
            if let Some(f) = fix {
                set.retain(|&(g, _)| g != f);
                set.push((f, true));
            }
            set
        };
        let mut runs = alloc::vec![("4.1", with(None))];
        match self {
            Bug::GroupImbalance => {
                let mut paper = with(None);
                paper.push((Feature::LbMinLoad, true));
                runs.push(("paper's fix", paper));
                runs.push(("Linux 5.5", with(Some(Feature::LbGroupTypes))));
            }
            Bug::GroupConstruction => {
                runs.push(("fix (paper, 4.13)", with(Some(Feature::NumaGroupsFromSelf))));
            }
            Bug::OverloadOnWakeup => {
                runs.push(("paper's fix", with(Some(Feature::WakeLongestIdle))));
                runs.push((
                    "5.16's newly-idle pass",
                    with(Some(Feature::NewidleOnShortIdle)),
                ));
            }
            Bug::MissingDomains => {
                runs.push(("fix (paper, 4.9)", with(Some(Feature::HotplugKeepsNuma))));
            }
        }
        runs
    }
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// When the workload finished, from its start.
    pub completion_ns: Nanos,
    /// When the invariant's watch began: the workload's warm-up.
    pub warm_up_ns: Nanos,
    /// The invariant checker's figures over the run.
    pub invariant: Report,
    /// Each CPU's runqueue length, every tick.
    pub heatmap: Heatmap,
    /// The migrations the balancer made.
    pub migrations: u64,
}

/// The policy of each CPU: 6.6 (EEVDF, PELT) with per-uid groups — the paper's autogroups —
/// and `set` on top of its switches.
fn policy(set: &[(Feature, bool)]) -> impl Fn() -> Fair + '_ {
    move || {
        let mut p = FairParams::preset(Era::V6_6);
        p.grouping = Grouping::Uid;
        for &(f, on) in set {
            p.features.set(f, on);
        }
        Fair::new(p)
    }
}

fn config() -> SimConfig {
    SimConfig {
        tick_ns: 4 * MS,
        ..SimConfig::default()
    }
}

/// The CPU time of each thread of the Scheduling Group Construction workload.
pub const WORKER_NS: Nanos = 4000 * MS;

/// Burns `ns` of CPU, then exits: one thread of a parallel computation.
struct Worker(Nanos);

impl Behavior for Worker {
    fn name(&self) -> &str {
        "worker"
    }
    fn next(&mut self, _: &mut Ctx) -> Action {
        match core::mem::take(&mut self.0) {
            0 => Action::Exit,
            ns => Action::Run(ns),
        }
    }
}

/// Runs `bug`'s workload with the switches `set` until it finishes (or a minute has
/// passed).
pub fn run(bug: Bug, set: &[(Feature, bool)]) -> Outcome {
    let t = Topology::opteron_6272();
    let mut sim = SmpSim::new(&t, policy(set), config(), true, DEFAULT_THRESHOLD_NS);
    sim.record_heatmap(config().tick_ns);
    let limit = 60_000 * MS;
    let (done, warm_up) = match bug {
        Bug::GroupImbalance => {
            // §3.1: a kernel `make` beside two R processes, each in its own group (the
            // paper's autogroups: uids here). 640 compile jobs of 50–500 ms, 64 at once;
            // the two hogs start on nodes 0 and 4.
            let make = MakeJ::new(64, false)
                .with_jobs_of((50 * MS, 500 * MS))
                .with_total(640);
            let make = sim.spawn(Box::new(make), 1, 0, 8, t.all());
            sim.spawn(Box::new(Hog), 2, 0, 0, t.all());
            sim.spawn(Box::new(Hog), 3, 0, 32, t.all());
            (
                run_until_exited(&mut sim, &[make], 500 * MS, limit),
                500 * MS,
            )
        }
        Bug::GroupConstruction => {
            // §3.2: an application pinned (`taskset`) to nodes 1 and 2, two hops apart,
            // 16 threads — as many as the two nodes' cores — all started on node 1, as
            // threads start on their parent's node. Each computes for 4 s. Spreading them
            // takes a pass of the top level per thread, one every 64 ms or so: the first
            // second is the warm-up.
            let nodes = t.node_cpus(1) | t.node_cpus(2);
            let workers: Vec<TaskId> = (0..16)
                .map(|i| sim.spawn(Box::new(Worker(WORKER_NS)), 1, 0, 8 + i % 8, nodes))
                .collect();
            (
                run_until_exited(&mut sim, &workers, 1000 * MS, limit),
                1000 * MS,
            )
        }
        Bug::OverloadOnWakeup => {
            // §3.3: a database's 64 worker threads, each a run of transactions (1–5 ms of
            // CPU, then an I/O wait of 0.1–0.5 ms). 63 start one a core; the 64th, made on
            // node 0, first waits 200 ms for a long read, while the core it would take
            // (CPU 63) idles. When it wakes, node 0 is full.
            // (It starts first and is asleep when the others start: no CPU ever holds two.)
            let late = Transactions::new(LONG_READ_NS);
            let mut workers = alloc::vec![sim.spawn(Box::new(late), 1, 0, 0, t.all())];
            sim.run_until(1);
            workers.extend(
                (0..63).map(|cpu| sim.spawn(Box::new(Transactions::new(0)), 1, 0, cpu, t.all())),
            );
            (
                run_until_exited(&mut sim, &workers, LONG_READ_NS, limit),
                LONG_READ_NS,
            )
        }
        Bug::MissingDomains => {
            // §3.4: CPU 1 is taken offline and brought back; then an application starts
            // 64 threads from CPU 0, each computing for 1 s.
            sim.cycle_cpu(1);
            let app = Parallel::new(64, 1000 * MS);
            let app = sim.spawn(Box::new(app), 1, 0, 0, t.all());
            (
                run_until_exited(&mut sim, &[app], 500 * MS, limit),
                500 * MS,
            )
        }
    };
    Outcome {
        completion_ns: done,
        warm_up_ns: warm_up,
        invariant: sim.invariant(),
        heatmap: sim.heatmap().expect("recorded").clone(),
        migrations: sim.migrations,
    }
}

/// Transactions each worker of the database runs.
const TRANSACTIONS: u32 = 300;

/// A transaction's CPU time, at least and at most.
const TRANSACTION_NS: (Nanos, Nanos) = (MS, 5 * MS);

/// A transaction's I/O wait, at least and at most: under the migration cost (0.5 ms), so
/// that the CPU a worker leaves idle for it does not balance in 4.1 (`smp::avg_idle`).
const IO_WAIT_NS: (Nanos, Nanos) = (100_000, 500_000);

/// How long the database's last worker waits before its first transaction.
const LONG_READ_NS: Nanos = 200 * MS;

/// A database worker: after a first wait of `first_wait` ns, [`TRANSACTIONS`] transactions,
/// each [`TRANSACTION_NS`] of CPU and then an [`IO_WAIT_NS`] wait (a timer wakes it); then
/// it exits.
struct Transactions {
    first_wait: Nanos,
    left: u32,
    computing: bool,
}

impl Transactions {
    fn new(first_wait: Nanos) -> Self {
        Transactions {
            first_wait,
            left: TRANSACTIONS,
            computing: false,
        }
    }
}

impl Behavior for Transactions {
    fn name(&self) -> &str {
        "transaction"
    }
    fn next(&mut self, ctx: &mut Ctx) -> Action {
        if self.first_wait > 0 {
            return Action::Sleep(core::mem::take(&mut self.first_wait));
        }
        if self.computing {
            self.computing = false;
            self.left -= 1;
            return Action::Sleep(ctx.rng.within(IO_WAIT_NS));
        }
        if self.left == 0 {
            return Action::Exit;
        }
        self.computing = true;
        Action::Run(ctx.rng.within(TRANSACTION_NS))
    }
}

/// A parallel application: forks `threads` workers of `ns` each, waits for them, exits.
struct Parallel {
    threads: u32,
    ns: Nanos,
    forked: u32,
    reaped: u32,
    waiting: bool,
}

impl Parallel {
    fn new(threads: u32, ns: Nanos) -> Self {
        Parallel {
            threads,
            ns,
            forked: 0,
            reaped: 0,
            waiting: false,
        }
    }
}

impl Behavior for Parallel {
    fn name(&self) -> &str {
        "parallel"
    }
    fn next(&mut self, _: &mut Ctx) -> Action {
        if core::mem::take(&mut self.waiting) {
            self.reaped += 1;
        }
        if self.forked < self.threads {
            self.forked += 1;
            return Action::Spawn(Box::new(Worker(self.ns)), ForkKind::Fork);
        }
        if self.reaped < self.threads {
            self.waiting = true;
            return Action::WaitChild;
        }
        Action::Exit
    }
}

/// Runs until every task of `tasks` has exited; returns when the last did (or `limit`).
/// The invariant is checked from `warm_up` on: a workload's start, while its tasks are
/// created and spread, is not the steady state the checker is about.
fn run_until_exited(
    sim: &mut SmpSim<Fair>,
    tasks: &[TaskId],
    warm_up: Nanos,
    limit: Nanos,
) -> Nanos {
    sim.run_until(warm_up);
    sim.reset_measurements();
    let last_exit = |sim: &SmpSim<Fair>| {
        let exits: Option<Vec<Nanos>> = tasks.iter().map(|&t| sim.tasks()[t].exited_ns).collect();
        exits.map(|e| e.into_iter().max().unwrap_or(0))
    };
    while sim.now() < limit {
        if let Some(done) = last_exit(sim) {
            return done;
        }
        sim.run_until(sim.now() + 10 * MS);
    }
    limit
}

/// The CPUs of `nodes` on the paper's machine.
pub fn cpus_of_nodes(nodes: &[usize]) -> CpuSet {
    let t = Topology::opteron_6272();
    nodes
        .iter()
        .fold(CpuSet::EMPTY, |acc, &n| acc | t.node_cpus(n))
}

#[cfg(test)]
mod tests;
