//! The simulator keeps a newly-idle pass to the runqueues it says it works on
//! (`Runqueues::focus` and `reach`), as the kernel's lender of a pass holds only those
//! locks and panics at a reach past them: a pass that read or moved anything else would
//! pass every test here and break the kernel. The simulator holds every runqueue, so it
//! only checks.

use crate::smp::cpuset::CpuSet;

/// What a pass under way works on (`None`: no pass under way, nothing checked).
#[derive(Debug, Default)]
pub(super) struct Focus(Option<CpuSet>);

impl Focus {
    /// A newly-idle pass starts: it holds nothing yet.
    pub(super) fn start(&mut self) {
        self.0 = Some(CpuSet::EMPTY);
    }

    /// The pass is over.
    pub(super) fn end(&mut self) {
        self.0 = None;
    }

    /// The pass works on `cpus` from here.
    pub(super) fn focus(&mut self, cpus: CpuSet) {
        if self.0.is_some() {
            self.0 = Some(cpus);
        }
    }

    /// The pass reaches `cpu`: held already, or it alone from here.
    pub(super) fn reach(&mut self, cpu: usize) {
        if self.0.is_some_and(|held| !held.contains(cpu)) {
            self.0 = Some(CpuSet::one(cpu));
        }
    }

    /// Panics if a pass under way touches `cpu` without working on it.
    #[track_caller]
    pub(super) fn check(&self, cpu: usize) {
        if let Some(held) = self.0 {
            assert!(
                held.contains(cpu),
                "a newly-idle pass reached CPU {cpu} out of its focus {held:?}"
            );
        }
    }
}
