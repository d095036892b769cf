//! The machine as a wake-up's placement reads it: each CPU's figures ([`CpuFigures`]: its
//! load, when it went idle, its domains) read the first time the placement asks for them,
//! from whoever holds the runqueues ([`ReadCpu`]). The simulator and the kernel's slow path
//! read them off the runqueues they hold; the kernel's placed wake-up takes each CPU's lock
//! alone as the placement reaches it, and knows whether a CPU is idle from what its switch
//! last said, taking no lock — so a wake-up touches the CPUs its era looks at and no
//! other, as Linux's `select_task_rq_fair` reads only the runqueues its domains lead it to.
//!
//! Linux reads other CPUs' figures without their locks and decides on figures that may
//! have moved by then; so may these, each CPU's read whole, at its own moment.

use super::{CpuBalance, cpu_stat};
use crate::policy::{Nanos, Policy};
use crate::rq::Rq;
use crate::smp::busiest::CpuStat;
use crate::smp::domains::Domain;
use crate::smp::placement::Figures;
use crate::smp::shares::SharesSplit;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::cell::OnceCell;
use core::ops::Index;

/// What a wake-up's placement reads of one CPU.
#[derive(Debug, Clone)]
pub struct CpuFigures {
    /// Its load figures.
    pub stat: CpuStat,
    /// When it went idle with nothing to pull (`rq->idle_stamp`).
    pub idle_stamp: Option<Nanos>,
    /// Its domains, bottom up.
    pub domains: Arc<[Domain]>,
}

impl CpuFigures {
    /// The figures of the CPU whose runqueue is `rq`, balanced by `b`, shares split by
    /// `split`.
    pub fn read<P: Policy + ?Sized>(rq: &Rq<P>, b: &CpuBalance, split: SharesSplit) -> Self {
        CpuFigures {
            stat: cpu_stat(rq, b, split),
            idle_stamp: b.idle_stamp,
            domains: b.domains.clone(),
        }
    }

    /// A CPU with no balancer (one the balancer being rebuilt leaves for a moment): busy,
    /// with no domains, so that no placement chooses it.
    pub fn absent() -> Self {
        CpuFigures {
            stat: CpuStat::default(),
            idle_stamp: None,
            domains: Arc::from(Vec::new()),
        }
    }
}

/// Where a [`Machine`] reads a CPU's figures from.
pub trait ReadCpu {
    /// CPU `cpu`'s figures now.
    fn figures(&self, cpu: usize) -> CpuFigures;

    /// Whether CPU `cpu` runs its idle task now.
    fn idle(&self, cpu: usize) -> bool {
        self.figures(cpu).stat.idle
    }
}

/// The CPUs' figures, each read on first use (see the module's docs).
pub struct Machine<'r> {
    cpus: Vec<OnceCell<CpuFigures>>,
    reader: &'r dyn ReadCpu,
}

impl<'r> Machine<'r> {
    /// `cpus` CPUs, read from `reader`.
    pub fn new(cpus: usize, reader: &'r dyn ReadCpu) -> Self {
        Machine {
            cpus: (0..cpus).map(|_| OnceCell::new()).collect(),
            reader,
        }
    }

    /// CPU `cpu`'s figures, read already: the wakee's CPU's and the waker's, read under
    /// locks the wake-up takes anyway.
    pub fn knows(&mut self, cpu: usize, figures: CpuFigures) {
        if let Some(cell) = self.cpus.get_mut(cpu) {
            let _ = cell.set(figures);
        }
    }

    fn figures(&self, cpu: usize) -> &CpuFigures {
        self.cpus[cpu].get_or_init(|| self.reader.figures(cpu))
    }

    /// When CPU `cpu` went idle with nothing to pull.
    pub fn idle_stamp(&self, cpu: usize) -> Option<Nanos> {
        self.figures(cpu).idle_stamp
    }

    /// CPU `cpu`'s domains, bottom up.
    pub fn domains(&self, cpu: usize) -> &[Domain] {
        &self.figures(cpu).domains
    }
}

impl Index<usize> for Machine<'_> {
    type Output = CpuStat;

    fn index(&self, cpu: usize) -> &CpuStat {
        &self.figures(cpu).stat
    }
}

impl Figures for Machine<'_> {
    fn cpus(&self) -> usize {
        self.cpus.len()
    }

    fn idle(&self, cpu: usize) -> bool {
        match self.cpus[cpu].get() {
            Some(figures) => figures.stat.idle,
            None => self.reader.idle(cpu),
        }
    }
}
