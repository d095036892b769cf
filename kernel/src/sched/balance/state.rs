//! What the scheduler keeps for balancing (`sched::balance`), apart from what it does with
//! it: the machine's shape, the balancer's per-CPU state in the era in force, the Wasted
//! Cores invariant's checker, and whether CPU 0 is isolated.

use crate::config::Config;
use ::sched::smp::busiest::CpuStat;
use ::sched::smp::domains::Rules;
use ::sched::smp::invariant::Checker;
use ::sched::smp::runqueues::CpuBalance;
use ::sched::smp::shares::SharesSplit;
use ::sched::smp::topology::Topology;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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
        CHECKING_INVARIANT.store(config.invariant, Ordering::Relaxed);
        BalanceState {
            balancer: None,
            invariant: config.invariant.then(|| Checker::new(threshold_ns)),
            topology,
            boot_cpu_isolated: config.program.is_empty(),
            cpu_came_back: false,
        }
    }
}

/// The balancer's state, with a fair policy on two CPUs or more. Each CPU's own part is on
/// its runqueue ([`CpuBalancing`]).
#[derive(Debug, Clone, Copy)]
pub struct Balancer {
    /// How the era splits a group's shares across CPUs.
    pub(super) split: SharesSplit,
    /// Which era's balancer and wake-up placement run.
    pub(super) rules: Rules,
}

/// One CPU's part of the balancer — its domains, load history and idle spells, and the
/// era's rules they follow — kept on its runqueue (`Runqueue::balance`), as Linux keeps
/// `idle_stamp`, `avg_idle`, `next_balance` and the domains in `struct rq`: a wake-up onto
/// the CPU and the CPU's check before a newly-idle pass need that runqueue's lock alone.
pub struct CpuBalancing {
    pub(in crate::sched) state: CpuBalance,
    pub(in crate::sched) rules: Rules,
    pub(in crate::sched) split: SharesSplit,
    /// The figures this CPU's newly-idle passes last read of each CPU (`lent::Lent::seen`).
    pub(in crate::sched) seen: Vec<Option<Seen>>,
}

/// A CPU's figures as a newly-idle pass read them, and when (`lent::Lent::stat`).
#[derive(Debug, Clone, Copy)]
pub(in crate::sched) struct Seen {
    pub(in crate::sched) stat: CpuStat,
    pub(in crate::sched) at: u64,
}

/// What is left of a tick's balancing once its CPU's own share is done
/// (`Runqueue::balance_tick_here`), for the tick to take every runqueue only when needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickRest {
    /// Nothing: no balancer, or no pass due.
    Nothing,
    /// This CPU's load history is updated; a pass may be due, this CPU's or an idle one's.
    Passes,
    /// All of it: the era's tick reads every CPU before its own load (6.6's group loads).
    Whole,
}

/// The invariant's checker runs (`invariant=on`): a copy the tick reads without a lock.
static CHECKING_INVARIANT: AtomicBool = AtomicBool::new(false);

/// Whether the invariant's checker runs (see [`CHECKING_INVARIANT`]).
pub(in crate::sched) fn checking_invariant() -> bool {
    CHECKING_INVARIANT.load(Ordering::Relaxed)
}

/// Each CPU's `next_balance` (in jiffies), written whenever the balancer sets it, so that a
/// tick can tell without any lock whether a pass — its own CPU's or a tickless idle CPU's —
/// is due (Linux's `nohz.next_balance` plays this part for the idle CPUs).
static NEXT_BALANCE: [AtomicU64; CPUS] = [const { AtomicU64::new(0) }; CPUS];
const CPUS: usize = bootopts::MAX_CPUS as usize;

/// CPU `cpu`'s next pass is due at tick `jiffies` (see [`NEXT_BALANCE`]).
pub(in crate::sched) fn publish_next_balance(cpu: usize, jiffies: u64) {
    NEXT_BALANCE[cpu].store(jiffies, Ordering::Relaxed);
}

/// Whether, at tick `jiffies`, a CPU whose tick has stopped other than `cpu` is due a pass
/// that `cpu`'s tick runs on its behalf (`Scheduler::balance_tick`): a superset of the
/// passes that run, read without a lock. It looks at the other online CPUs alone, one bit
/// of `online` each: a tick pays for the CPUs there are, not for every CPU there could be.
pub(in crate::sched) fn idle_pass_may_be_due(cpu: usize, jiffies: u64, online: u64) -> bool {
    let mut others = online & !(1 << cpu);
    while others != 0 {
        let other = others.trailing_zeros() as usize;
        others &= others - 1;
        let due = NEXT_BALANCE[other].load(Ordering::Relaxed) <= jiffies;
        if due && crate::percpu::cpu(other).is_some_and(|c| !c.tick_on()) {
            return true;
        }
    }
    false
}
