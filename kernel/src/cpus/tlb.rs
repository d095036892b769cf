//! TLB shootdown (Linux's `flush_tlb_mm_range` and `native_flush_tlb_multi`,
//! arch/x86/mm/tlb.c, reduced to whole flushes): after a change that takes a mapping away
//! or narrows it — `munmap`, `mprotect`, a copy-on-write page replaced, fork making a
//! parent's pages read-only, page tables freed — every other CPU running a thread of the
//! same address space flushes its TLB, and the change waits for them before it frees a
//! frame: a thread on another CPU could otherwise still reach, through a translation it
//! cached, a page that is gone or has another owner.
//!
//! Which CPUs: those whose running task is in the address space (`PerCpu::space`). A CPU
//! that switches away from it loads another CR3 (a kernel thread loads the kernel's), which
//! drops its translations, so no other CPU can hold any. One that switches to it after the
//! change loads the new tables.
//!
//! The caller may hold locks and have interrupts off: the CPUs asked may be spinning, with
//! their interrupts off, on one of those locks, and they serve the request while they spin
//! (`sync::cross_call`).

use super::ipi;
use crate::percpu::this_cpu;
use core::sync::atomic::{Ordering, fence};

/// Flushes the TLB of every other CPU running in the address space `space` (its `Arc`'s
/// pointer, as `PerCpu::space` holds it), and waits until each has.
pub fn shoot_down(space: *const ()) {
    let Some(online) = ipi::online_ids() else {
        return;
    };
    // The caller's page-table writes before the look at where each CPU runs: a CPU that
    // is not seen in the space yet will load its CR3 after them.
    fence(Ordering::SeqCst);
    let me = this_cpu().index();
    for (cpu, apic_id) in online.iter().enumerate() {
        let runs_there = crate::percpu::cpu(cpu).is_some_and(|c| c.space_of_task() == space);
        if cpu != me && apic_id.is_some() && runs_there {
            let flushed = ipi::call_on(cpu, flush_all);
            assert!(
                flushed.is_some(),
                "CPU {cpu} did not flush its TLB when asked"
            );
        }
    }
}

/// The request's work, on the CPU asked.
fn flush_all() -> u64 {
    crate::arch::paging::flush_tlb_all();
    0
}
