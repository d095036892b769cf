//! The simulator on several CPUs: one runqueue per CPU, each driving its own instance of the
//! policy through the same protocol as the kernel's (`crate::rq`), all CPUs running at
//! once at full speed — unlike QEMU under `-icount`, where busy vCPUs share one
//! instruction counter — so that completion times and wasted cores show as they would on
//! a real machine.
//!
//! The machine is a [`Topology`]; the era's balancer ([`crate::smp::balancer`]) runs at each
//! CPU's tick when its domains are due and when a CPU is about to go idle; the Wasted Cores
//! invariant ([`crate::smp::invariant`]) watches every change, and a [`heatmap`] may record
//! the runqueues. A timer wakes a task from the CPU it slept on, placed as the era places a
//! wake-up ([`crate::smp::placement`]). An active balance pushes the busiest CPU's running
//! task at once (its migration thread preempts it).
//!
//! Deterministic: the same inputs give the same schedule, bit for bit.

use super::timers::Timers;
use super::{Action, Behavior, IDLE, SimConfig, SimTask, Waiting, exit_wakes};
use crate::features::Features;
use crate::policy::{Nanos, Policy, SyncWake, TaskId, Uid, Wakeup};
use crate::programs::Rng;
use crate::rq::Rq;
use crate::smp::cpuset::CpuSet;
use crate::smp::domains::Rules;
use crate::smp::invariant::{Checker, Report};
use crate::smp::runqueues::{self, CpuBalance, SyncWaker};
use crate::smp::shares::SharesSplit;
use crate::smp::topology::Topology;
use crate::weights::Nice;
use alloc::boxed::Box;
use alloc::vec::Vec;
use focus::Focus;
use heatmap::Heatmap;

/// The stopper of each simulated CPU: a number no simulated task has (nor the idle task).
/// It runs inline, in no time (`SmpSim::run_stopper`).
const STOPPER: TaskId = TaskId::new(usize::MAX - 1);

/// One simulated CPU.
struct Cpu<P: Policy> {
    rq: Rq<P>,
    balance: CpuBalance,
    /// A task this CPU's stopper is to push, and the CPU it goes to (active balancing,
    /// exec balancing): the task that ran when it was asked.
    push: Option<(TaskId, usize)>,
}

/// The simulated machine of several CPUs (see the module's docs).
pub struct SmpSim<P: Policy> {
    cpus: Vec<Cpu<P>>,
    config: SimConfig,
    balancing: bool,
    now: Nanos,
    tasks: Vec<SimTask>,
    cpu_of: Vec<usize>,
    allowed: Vec<CpuSet>,
    timers: Timers,
    rng: Rng,
    checker: Checker,
    /// Tasks moved from one CPU to another by the balancer.
    pub migrations: u64,
    /// How the era splits a group's shares across CPUs.
    split: SharesSplit,
    /// Which era's balancer and wake-up placement run.
    rules: Rules,
    /// Each CPU's runqueue length over time, if asked for ([`SmpSim::record_heatmap`]).
    heatmap: Option<Heatmap>,
    /// The machine and the balancing switches, for rebuilding the domains.
    topology: Topology,
    features: Features,
    /// What a newly-idle pass under way works on, checked at each reach ([`focus`]).
    focus: Focus,
}

impl<P: Policy> SmpSim<P> {
    /// The machine `topology`, each CPU with a policy from `policy`, balancing (the era's
    /// balancer) or not, the invariant checked with `threshold` ns.
    pub fn new(
        topology: &Topology,
        policy: impl Fn() -> P,
        config: SimConfig,
        balancing: bool,
        threshold: Nanos,
    ) -> Self {
        let params = policy().fair_params().cloned();
        let era = params.as_ref().map(|p| p.era);
        let split = era.and_then(SharesSplit::of).unwrap_or(SharesSplit::Full);
        let rules = era.map_or(Rules::V2_6_24, Rules::of);
        let features = params.map_or(rules.era_features(), |p| p.features);
        let cpus = (0..topology.len())
            .map(|cpu| {
                let mut rq = Rq::new(cpu, Box::new(policy()), IDLE);
                rq.install_stopper(STOPPER, 0);
                Cpu {
                    rq,
                    balance: CpuBalance::new(topology, cpu, rules, features, 0),
                    push: None,
                }
            })
            .collect();
        SmpSim {
            cpus,
            config,
            balancing,
            now: 0,
            tasks: Vec::new(),
            cpu_of: Vec::new(),
            allowed: Vec::new(),
            timers: Timers::new(),
            rng: Rng::new(config.seed),
            checker: Checker::new(threshold),
            migrations: 0,
            split,
            rules,
            heatmap: None,
            topology: topology.clone(),
            features,
            focus: Focus::default(),
        }
    }

    /// Lets task `task` run on `allowed` from now on (`sched_setaffinity` of a task whose
    /// CPU stays allowed: it moves only if a balancer moves it).
    pub fn set_allowed(&mut self, task: TaskId, allowed: CpuSet) {
        assert!(allowed.contains(self.cpu_of[task]), "its CPU stays allowed");
        self.allowed[task] = allowed;
    }

    /// The simulated clock.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Every task so far, by id.
    pub fn tasks(&self) -> &[SimTask] {
        &self.tasks
    }

    /// The CPU task `task` is on.
    pub fn cpu_of(&self, task: TaskId) -> usize {
        self.cpu_of[task]
    }

    /// Forgets every task's measurements and the invariant's so far: what follows is
    /// measured alone.
    pub fn reset_measurements(&mut self) {
        self.tasks.iter_mut().for_each(SimTask::reset_measurements);
        self.checker = Checker::new(self.checker.threshold());
    }

    /// The invariant's figures up to now.
    pub fn invariant(&self) -> Report {
        self.checker.report(self.now)
    }

    /// Starts a task now on `cpu`, allowed on `allowed`.
    pub fn spawn(
        &mut self,
        behavior: Box<dyn Behavior>,
        uid: Uid,
        nice: Nice,
        cpu: usize,
        allowed: CpuSet,
    ) -> TaskId {
        let id = TaskId::new(self.tasks.len());
        self.tasks.push(SimTask::new(behavior, uid, None));
        self.cpu_of.push(cpu);
        self.allowed.push(allowed);
        self.cpus[cpu].rq.spawn(id, uid, nice, self.now);
        id
    }

    fn current(&self, cpu: usize) -> Option<TaskId> {
        Some(self.cpus[cpu].rq.current()).filter(|&t| t != IDLE && t != STOPPER)
    }

    fn work_left(&self, task: TaskId) -> Nanos {
        self.tasks[task].work_left(self.now)
    }

    /// `schedule()` on `cpu`: a CPU about to go idle balances first (2.6.24's
    /// `idle_balance`; not when its stopper is to run, which the pick chooses first), then
    /// the pick; if it chose the stopper, the stopper runs at once and the CPU schedules
    /// again, as the kernel's stopper does as it sleeps.
    fn schedule(&mut self, cpu: usize) {
        loop {
            if self.balancing && self.cpus[cpu].rq.about_to_idle() {
                self.focus.start();
                runqueues::idle_balance(self, cpu);
                self.focus.end();
            }
            let now = self.now;
            let pick = self.cpus[cpu].rq.pick(|| now);
            if pick.next == STOPPER {
                self.run_stopper(cpu);
                continue;
            }
            if pick.next != IDLE {
                self.tasks[pick.next].record_wait(pick.waited);
            }
            return;
        }
    }

    /// Lets `cpu`'s running task make its zero-time decisions until it has CPU work or
    /// blocks.
    fn drive(&mut self, cpu: usize) {
        let mut decisions = 0;
        while let Some(task) = self.current(cpu) {
            if self.cpus[cpu].rq.need_resched() {
                self.schedule(cpu);
                continue;
            }
            if self.work_left(task) > 0 {
                return;
            }
            decisions += 1;
            assert!(decisions < 100_000, "task {task} makes no progress");
            let action = self.tasks[task].next_action(task, self.now, &mut self.rng);
            self.perform(cpu, task, action);
        }
    }

    fn perform(&mut self, cpu: usize, task: TaskId, action: Action) {
        let now = self.now;
        match action {
            Action::Run(ns) => self.tasks[task].run_left = ns,
            Action::SpinUntil(t) => self.tasks[task].spin_until = t,
            Action::Sleep(ns) => self.sleep_until(cpu, task, now.saturating_add(ns)),
            Action::SleepUntil(t) => self.sleep_until(cpu, task, t),
            Action::Spawn(behavior, kind) => self.fork(cpu, task, behavior, kind),
            // `sched_exec` comes first in `do_execve`, before the vfork parent is let go.
            Action::Exec => {
                self.exec_balance(cpu, task);
                self.release_vfork_parent(cpu, task);
            }
            Action::WaitChild => {
                if !self.tasks[task].reap_one() {
                    self.cpus[cpu].rq.block_current(now);
                    self.tasks[task].waiting = Some(Waiting::Child);
                }
            }
            Action::Exit => {
                // As `do_exit`: the vfork parent released (`exit_mm`), the parent told
                // (`exit_notify`, a synchronous wake-up: the child is about to go), while
                // the child still counts on its CPU; then its last switch.
                self.release_vfork_parent(cpu, task);
                if let Some(parent) = exit_wakes(&mut self.tasks, task) {
                    let info = self.cpus[cpu].rq.policy().task_info(task);
                    let waker = info.map(|i| SyncWaker {
                        weight: i.weight,
                        uid: self.tasks[task].uid,
                        exiting: true,
                    });
                    let wakeup = Wakeup {
                        sync: SyncWake::WakerExits,
                        ..Wakeup::default()
                    };
                    self.wake_from(parent, cpu, wakeup, waker);
                }
                self.tasks[task].exited_ns = Some(now);
                self.cpus[cpu].rq.exit_current(now);
            }
        }
    }

    fn sleep_until(&mut self, cpu: usize, task: TaskId, at: Nanos) {
        self.timers.arm(task, at, self.now, &self.config);
        self.cpus[cpu].rq.block_current(self.now);
        self.tasks[task].waiting = Some(Waiting::Timer);
    }

    /// Runs the machine until the clock reads `end`.
    pub fn run_until(&mut self, end: Nanos) {
        let n = self.cpus.len();
        while self.now < end {
            self.settle_cpus();
            let snapshot = runqueues::snapshot(self, CpuSet::first(n));
            self.checker.observe(self.now, &snapshot);
            self.sample_heatmap(&snapshot);
            let tick = self.config.tick_ns;
            let next_tick = (self.now / tick + 1) * tick;
            let next_timer = self.timers.next();
            let work_done = (0..n)
                .filter_map(|c| self.current(c))
                .map(|t| self.now + self.work_left(t))
                .min()
                .unwrap_or(Nanos::MAX);
            let t = next_tick.min(next_timer).min(work_done).min(end);
            self.advance(t);
            while let Some(task) = self.timers.pop_due(self.now) {
                self.timer_wake(task);
            }
            if self.now == next_tick {
                for cpu in 0..n {
                    self.cpus[cpu].rq.tick(self.now, true);
                    self.balance_tick(cpu);
                }
            }
        }
    }

    /// Lets every CPU switch and its task decide until none asks to switch: a wake-up,
    /// fork or push onto a CPU already visited in a pass is seen in the next pass, at the
    /// same instant, not at the next event.
    fn settle_cpus(&mut self) {
        for pass in 0.. {
            assert!(pass < 10_000, "the CPUs never settle at {}", self.now);
            for cpu in 0..self.cpus.len() {
                if self.cpus[cpu].rq.need_resched() {
                    self.schedule(cpu);
                }
                self.drive(cpu);
            }
            if !self.cpus.iter().any(|c| c.rq.need_resched()) {
                return;
            }
        }
    }

    /// Every CPU's running task has run from `self.now` to `t`.
    fn advance(&mut self, t: Nanos) {
        for cpu in 0..self.cpus.len() {
            if let Some(task) = self.current(cpu) {
                let ran = t - self.now;
                let task = &mut self.tasks[task];
                task.charge(ran);
            }
        }
        self.now = t;
    }
}

mod as_runqueues;
mod focus;
pub mod heatmap;
mod hotplug;
mod moving;
mod placing;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod v6_6_tests;
