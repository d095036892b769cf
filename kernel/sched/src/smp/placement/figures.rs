//! Each CPU's load figures as a placement reads them ([`Figures`]): a list made whole
//! beforehand (a fork's placement, the tests), or a machine read CPU by CPU as the
//! placement asks (a wake-up's: `runqueues::Machine`), so that a wake-up reads only the
//! CPUs its era looks at — as Linux's `select_task_rq_fair` touches only the runqueues
//! its domains lead it to.

use super::super::busiest::CpuStat;
use core::ops::Index;

/// The CPUs' load figures, by CPU.
pub trait Figures: Index<usize, Output = CpuStat> {
    /// How many CPUs there are.
    fn cpus(&self) -> usize;

    /// Whether CPU `cpu` runs its idle task: all that a search for an idle CPU reads of
    /// most CPUs, which a reader may know without the rest of the figures.
    fn idle(&self, cpu: usize) -> bool {
        self[cpu].idle
    }
}

impl Figures for [CpuStat] {
    fn cpus(&self) -> usize {
        self.len()
    }
}

impl Figures for alloc::vec::Vec<CpuStat> {
    fn cpus(&self) -> usize {
        self.len()
    }
}

impl<const N: usize> Figures for [CpuStat; N] {
    fn cpus(&self) -> usize {
        N
    }
}
