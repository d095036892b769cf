//! The Wasted Cores paper's invariant, checked (Lozi et al., EuroSys 2016, §4.1): *no CPU
//! stays idle while a task has waited longer than a threshold in another CPU's runqueue* —
//! a task it may run (its affinity allows the idle CPU). The paper's checker looked every
//! second and called a violation a bug if it still held 100 ms later; this one is told
//! every change of the machine's state, so it measures each violation exactly: when the
//! first task's wait passed the threshold while an allowed CPU was idle, and when that
//! stopped being so. (The authors' published checker counts ten consecutive failing
//! one-second checks instead; cfslab follows the paper's 100 ms.)
//!
//! It reports how many violations there were, their total and their longest duration:
//! the time cores were wasted.

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
    /// Since when it has waited.
    pub since: u64,
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
    /// When, at the earliest, some task of this snapshot has waited `threshold` while a CPU
    /// it may run on, not its own, is idle; `None` if no waiting task has such a CPU.
    fn first_breach(&self, threshold: u64) -> Option<u64> {
        self.waiting
            .iter()
            .filter(|w| !(self.idle & w.allowed).without(w.cpu).is_empty())
            .map(|w| w.since.saturating_add(threshold))
            .min()
    }
}

/// The checker (see the module's docs).
#[derive(Debug, Clone)]
pub struct Checker {
    threshold: u64,
    state: Snapshot,
    since: u64,
    /// When the violation under way began.
    open: Option<u64>,
    violations: u64,
    total: u64,
    longest: u64,
}

impl Checker {
    /// A checker with `threshold` (ns), watching from time `now` a machine with nothing
    /// waiting.
    pub fn new(threshold: u64, now: u64) -> Checker {
        Checker {
            threshold,
            state: Snapshot::default(),
            since: now,
            open: None,
            violations: 0,
            total: 0,
            longest: 0,
        }
    }

    /// The machine is `state` from `now` on (it was the last state until then).
    pub fn observe(&mut self, now: u64, state: Snapshot) {
        self.settle(now);
        self.state = state;
    }

    /// Accounts the time from the last change to `now`, in the last state: a breach
    /// within it opens a violation, or continues the one under way if it holds from the
    /// stretch's start; no breach closes it, at that start.
    fn settle(&mut self, now: u64) {
        let start = self.since;
        self.since = now;
        match self.state.first_breach(self.threshold) {
            Some(at) if at < now => {
                let from = at.max(start);
                if self.open.is_none() || from > start {
                    self.close_at(start);
                    self.open = Some(from);
                    self.violations += 1;
                }
            }
            _ => self.close_at(start),
        }
    }

    fn close_at(&mut self, end: u64) {
        if let Some(open) = self.open.take() {
            let lasted = end - open;
            self.total += lasted;
            self.longest = self.longest.max(lasted);
        }
    }

    /// Violations so far, the time they lasted in all (the one under way up to `now`), and
    /// the longest.
    pub fn report(&mut self, now: u64) -> Report {
        self.settle(now);
        let running = self.open.map_or(0, |open| now - open);
        Report {
            threshold_ns: self.threshold,
            violations: self.violations,
            total_ns: self.total + running,
            longest_ns: self.longest.max(running),
        }
    }
}

/// What the checker found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// The threshold it checked.
    pub threshold_ns: u64,
    /// How many times the invariant broke.
    pub violations: u64,
    /// How long it was broken in all.
    pub total_ns: u64,
    /// The longest single violation.
    pub longest_ns: u64,
}

impl Report {
    /// The run's `RESULT {"kind":"invariant",...}` line (docs/boot-options.md): times in
    /// microseconds.
    pub fn result_line(&self) -> String {
        alloc::format!(
            "RESULT {{\"kind\":\"invariant\",\"threshold_us\":{},\"violations\":{},\"idle_while_waiting_us\":{},\"longest_us\":{}}}",
            self.threshold_ns / 1000,
            self.violations,
            self.total_ns / 1000,
            self.longest_ns / 1000
        )
    }
}

#[cfg(test)]
mod tests;
