//! Each CPU's runqueue length over time, sampled at a fixed period: the data of the Wasted
//! Cores paper's pictures (its Figures 2 and 3: a row per core, coloured by how many
//! threads its runqueue holds), and of the lab's own.

use super::SmpSim;
use crate::policy::{Nanos, Policy};
use crate::smp::invariant::Snapshot;
use alloc::vec;
use alloc::vec::Vec;

impl<P: Policy> SmpSim<P> {
    /// From now on, samples each CPU's runqueue length every `every_ns`.
    pub fn record_heatmap(&mut self, every_ns: Nanos) {
        self.heatmap = Some(Heatmap::new(self.cpus.len(), self.now, every_ns));
    }

    /// The runqueue lengths sampled so far, if asked for.
    pub fn heatmap(&self) -> Option<&Heatmap> {
        self.heatmap.as_ref()
    }

    /// The machine is `state` now: the heatmap, if recorded, takes its samples.
    pub(super) fn sample_heatmap(&mut self, state: &Snapshot) {
        if self.heatmap.is_none() {
            return;
        }
        let running: Vec<bool> = (0..self.cpus.len())
            .map(|c| self.current(c).is_some())
            .collect();
        let now = self.now;
        if let Some(h) = self.heatmap.as_mut() {
            h.observe(now, state, &running);
        }
    }
}

/// Runqueue lengths, one sample of every CPU each `every_ns` (see the module's docs): each
/// sample is taken at the first change of the machine at or after its period's boundary,
/// so it is exact when the period is a multiple of the tick (every tick is a change).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heatmap {
    /// The sampling period.
    pub every_ns: Nanos,
    /// When the first sample was taken.
    pub start_ns: Nanos,
    /// Per sample, each CPU's runnable tasks, the running one included (at most 255).
    pub samples: Vec<Vec<u8>>,
    cpus: usize,
    next_ns: Nanos,
}

impl Heatmap {
    /// A heatmap of `cpus` CPUs sampled every `every_ns` from `start_ns`.
    pub fn new(cpus: usize, start_ns: Nanos, every_ns: Nanos) -> Heatmap {
        assert!(every_ns > 0, "a sampling period");
        Heatmap {
            every_ns,
            start_ns,
            samples: Vec::new(),
            cpus,
            next_ns: start_ns,
        }
    }

    /// The machine is `state` at `now`: a sample is taken for each period boundary reached.
    pub fn observe(&mut self, now: Nanos, state: &Snapshot, running: &[bool]) {
        if now < self.next_ns {
            return;
        }
        let mut row = vec![0u8; self.cpus];
        for (cpu, n) in row.iter_mut().enumerate() {
            *n = u8::from(running[cpu]);
        }
        for w in &state.waiting {
            row[w.cpu] = row[w.cpu].saturating_add(1);
        }
        while self.next_ns <= now {
            self.samples.push(row.clone());
            self.next_ns += self.every_ns;
        }
    }

    /// CPU `cpu`'s mean runqueue length over the samples.
    pub fn mean(&self, cpu: usize) -> f64 {
        let sum: u64 = self.samples.iter().map(|s| u64::from(s[cpu])).sum();
        sum as f64 / self.samples.len().max(1) as f64
    }

    /// The share of the samples in which CPU `cpu` had nothing to run.
    pub fn idle_share(&self, cpu: usize) -> f64 {
        let idle = self.samples.iter().filter(|s| s[cpu] == 0).count();
        idle as f64 / self.samples.len().max(1) as f64
    }
}
