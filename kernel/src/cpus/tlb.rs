//! TLB shootdown (Linux's `flush_tlb_mm_range` and `native_flush_tlb_multi`,
//! arch/x86/mm/tlb.c, reduced to whole flushes): after a change that takes a mapping away
//! or narrows it — `munmap`, `mprotect`, a copy-on-write page replaced, fork making a
//! parent's pages read-only, page tables freed — every other CPU running a thread of the
//! same address space flushes its TLB, and the change waits for them before it frees a
//! frame: a thread on another CPU could otherwise still reach, through a translation it
//! cached, a page that is gone or has another owner.
//!
//! Which CPUs: those in the address space's mask (`loaded_on`, Linux's `mm_cpumask`). A
//! CPU that switches away from it loads another CR3 (a kernel thread loads the kernel's),
//! which drops its translations; one that switches to it after the change loads the new
//! tables. When no other CPU runs the space — always, on one CPU —
//! the shootdown is a look at the mask: the same instructions whatever `smp=` says, so
//! that a run on CPU 0 alone keeps its figures with idle CPUs beside it.
//!
//! The caller may hold locks and have interrupts off: the CPUs asked may be spinning, with
//! their interrupts off, on one of those locks, and they serve the request while they spin
//! (`sync::cross_call`).

use super::ipi;
use super::loaded_on::LoadedOn;

/// Flushes the TLB of every other CPU running an address space (`loaded_on`), and waits
/// until each has.
pub fn shoot_down(loaded_on: &LoadedOn) {
    // The caller's page-table writes come before the look at the mask (`others`' fence):
    // a CPU not in it yet joins it before it loads its CR3, so it will load the new tables.
    if let Err(cpu) = ipi::call_on_each(loaded_on.others(), flush_all) {
        panic!("CPU {cpu} did not flush its TLB when asked");
    }
}

/// The request's work, on the CPU asked.
fn flush_all() -> u64 {
    crate::arch::paging::flush_tlb_all();
    0
}
