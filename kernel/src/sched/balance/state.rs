//! What the scheduler keeps for balancing (`sched::balance`), apart from what it does with
//! it: the machine's shape, the balancer's per-CPU state in the era in force, the Wasted
//! Cores invariant's checker, and whether CPU 0 is isolated.

use crate::config::Config;
use ::sched::smp::domains::Rules;
use ::sched::smp::invariant::Checker;
use ::sched::smp::runqueues::CpuBalance;
use ::sched::smp::shares::SharesSplit;
use ::sched::smp::topology::Topology;
use alloc::vec::Vec;

/// What the scheduler keeps for balancing.
pub struct BalanceState {
    /// The load balancer, with a fair policy on two CPUs or more.
    pub(super) balancer: Option<Balancer>,
    /// The Wasted Cores invariant's checker, with `invariant=on`.
    pub(super) invariant: Option<Checker>,
    /// The machine's shape (`cpus::topology`), which the balancer's domains are built from.
    pub(super) topology: Topology,
    /// CPU 0 is out of balancing (`isolate_boot_cpu`).
    pub(super) boot_cpu_isolated: bool,
    /// A CPU has come back online since the boot (`hotplug`): the domains are rebuilt
    /// as after a hotplug from then on (`build_after_hotplug`).
    pub(super) cpu_came_back: bool,
}

impl BalanceState {
    /// Nothing balanced yet (the scheduler builds the balancer once its CPUs are up), on
    /// the machine `topology`, the invariant checked if `config` asks. A boot that runs the
    /// lab (no program after ` -- `) isolates CPU 0 from the start (`isolate_boot_cpu`),
    /// so that no balancing moves the boot's own tasks either: the lab then starts from
    /// the state a machine of one CPU has.
    pub fn new(config: &Config, topology: Topology) -> BalanceState {
        let threshold_ns = u64::from(config.invariant_ms) * 1_000_000;
        BalanceState {
            balancer: None,
            invariant: config.invariant.then(|| Checker::new(threshold_ns)),
            topology,
            boot_cpu_isolated: config.program.is_empty(),
            cpu_came_back: false,
        }
    }
}

/// The balancer's state, with a fair policy on two CPUs or more.
pub struct Balancer {
    /// Each CPU's balancing state, by CPU number (a CPU that did not come up has one that
    /// no domain names).
    pub(super) cpus: Vec<CpuBalance>,
    /// How the era splits a group's shares across CPUs.
    pub(super) split: SharesSplit,
    /// Which era's balancer and wake-up placement run.
    pub(super) rules: Rules,
}
