//! The Wasted Cores paper's invariant, checked (Lozi et al., EuroSys 2016, §4.1): *no CPU
//! stays idle while a task waits in another CPU's runqueue* — a task it may run (its
//! affinity allows the idle CPU). Balancing runs at intervals, so the invariant breaks for
//! short stretches all the time; the paper's checker looked every second and called a
//! stretch a bug if it was still there 100 ms later. This one is told every change of the
//! machine's state, so it measures each stretch exactly, and counts as a violation every
//! stretch longer than the threshold (100 ms by default). (The authors' published checker
//! counts ten consecutive failing one-second checks instead; cfslab follows the paper.)
//!
//! It reports how many violations there were, their total and their longest duration: the
//! time cores were wasted beside waiting work; and the CPU time wasted in stretches of any
//! length, each idle CPU that waiting work could use counted.

use super::cpuset::CpuSet;
use alloc::string::String;
use alloc::vec::Vec;

/// The paper's threshold: 100 ms.
pub const DEFAULT_THRESHOLD_NS: u64 = 100_000_000;

/// A task waiting for a CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    /// The CPU whose runqueue it waits in.
    pub cpu: usize,
    /// The CPUs it may run on.
    pub allowed: CpuSet,
}

/// The machine as the invariant sees it, from one change to the next.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// The CPUs running their idle task.
    pub idle: CpuSet,
    /// Every task runnable and not running.
    pub waiting: Vec<Waiting>,
}

impl Snapshot {
    /// Whether the invariant is broken: some task waits while a CPU it may run on, not its
    /// own, is idle.
    pub fn broken(&self) -> bool {
        self.waiting
            .iter()
            .any(|w| !(self.idle & w.allowed).without(w.cpu).is_empty())
    }

    /// How many idle CPUs waiting tasks could put to work at once, at most: the idle CPUs
    /// some waiting task may run on, but no more than the tasks that may run on one. (An
    /// upper bound: exact when the waiting tasks may all use the same idle CPUs, as in the
    /// lab's workloads; with affinities that cross, a matching could give fewer.)
    pub fn wasted_cpus(&self) -> u64 {
        let mut usable = CpuSet::EMPTY;
        let mut tasks = 0;
        for w in &self.waiting {
            let idle = (self.idle & w.allowed).without(w.cpu);
            if !idle.is_empty() {
                usable = usable | idle;
                tasks += 1;
            }
        }
        tasks.min(usable.len() as u64)
    }
}

/// The checker (see the module's docs).
#[derive(Debug, Clone)]
pub struct Checker {
    threshold: u64,
    /// Since when the invariant has been broken, if it is.
    broken_since: Option<u64>,
    violations: u64,
    total: u64,
    longest: u64,
    /// Since when, and how many, CPUs have idled beside work they could take.
    wasting: (u64, u64),
    /// CPU time so wasted, in stretches of any length.
    wasted: u64,
}

impl Checker {
    /// A checker with `threshold` (ns), the machine's invariant holding so far.
    pub fn new(threshold: u64) -> Checker {
        Checker {
            threshold,
            broken_since: None,
            violations: 0,
            total: 0,
            longest: 0,
            wasting: (0, 0),
            wasted: 0,
        }
    }

    /// The threshold it checks (ns).
    pub fn threshold(&self) -> u64 {
        self.threshold
    }

    /// The machine is `state` from `now` on.
    pub fn observe(&mut self, now: u64, state: &Snapshot) {
        let (since, cpus) = self.wasting;
        self.wasted += cpus * now.saturating_sub(since);
        self.wasting = (now, state.wasted_cpus());
        match (self.broken_since, state.broken()) {
            (None, true) => self.broken_since = Some(now),
            (Some(since), false) => {
                self.broken_since = None;
                self.count(now - since);
            }
            _ => {}
        }
    }

    /// A stretch of `lasted` ns is over: a violation if longer than the threshold.
    fn count(&mut self, lasted: u64) {
        if lasted > self.threshold {
            self.violations += 1;
            self.total += lasted;
            self.longest = self.longest.max(lasted);
        }
    }

    /// The violations up to `now`, the stretch under way counted as if it ended now.
    pub fn report(&self, now: u64) -> Report {
        let mut up_to_now = self.clone();
        if let Some(since) = up_to_now.broken_since.take() {
            up_to_now.count(now - since);
        }
        let (since, cpus) = self.wasting;
        Report {
            threshold_ns: self.threshold,
            violations: up_to_now.violations,
            total_ns: up_to_now.total,
            longest_ns: up_to_now.longest,
            wasted_cpu_ns: self.wasted + cpus * now.saturating_sub(since),
        }
    }
}

/// What the checker found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// The threshold it checked.
    pub threshold_ns: u64,
    /// How many times the invariant stayed broken longer than the threshold.
    pub violations: u64,
    /// How long those violations lasted in all.
    pub total_ns: u64,
    /// The longest of them.
    pub longest_ns: u64,
    /// CPU time wasted: the time each CPU idled while a task waited that it could have run,
    /// however briefly (a core idle for 10 ms beside two waiting tasks wastes 10 ms); at
    /// most, with crossing affinities (see [`Snapshot::wasted_cpus`]).
    pub wasted_cpu_ns: u64,
}

impl Report {
    /// The run's `RESULT {"kind":"invariant",...}` line: times in microseconds.
    pub fn result_line(&self) -> String {
        alloc::format!(
            "RESULT {{\"kind\":\"invariant\",\"threshold_us\":{},\"violations\":{},\"idle_while_waiting_us\":{},\"longest_us\":{},\"wasted_cpu_us\":{}}}",
            self.threshold_ns / 1000,
            self.violations,
            self.total_ns / 1000,
            self.longest_ns / 1000,
            self.wasted_cpu_ns / 1000
        )
    }
}

#[cfg(test)]
mod tests;
