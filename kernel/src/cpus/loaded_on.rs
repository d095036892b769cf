//! The CPUs running an address space, one bit each (Linux's `mm_cpumask`): those a change
//! to its mappings must flush (`tlb`), and those `membarrier` interrupts.
//!
//! A CPU joins as it picks a task of the address space, before it loads its CR3, and
//! leaves as it picks another, before it loads the next CR3
//! (`sched::current::set_current_space`). So a CPU missing from the mask either has not
//! loaded the tables yet — it will load the new ones — or has dropped their translations
//! with its CR3.

use crate::percpu::this_cpu;
use core::sync::atomic::{AtomicU64, Ordering::SeqCst, fence};

/// An address space's mask of the CPUs running it (see the module's docs).
#[derive(Default)]
pub struct LoadedOn(AtomicU64);

impl LoadedOn {
    /// CPU `cpu` runs a task of the address space from now on (`running`), or no longer.
    pub fn set(&self, cpu: usize, running: bool) {
        if running {
            self.0.fetch_or(1 << cpu, SeqCst);
        } else {
            self.0.fetch_and(!(1 << cpu), SeqCst);
        }
    }

    /// The CPUs other than this one running it, read after a full barrier: the caller's
    /// writes before it (a page-table change, `membarrier`'s caller's stores) are visible to
    /// a CPU that joins after the look.
    pub fn others(&self) -> u64 {
        fence(SeqCst);
        self.0.load(SeqCst) & !(1 << this_cpu().index())
    }
}
