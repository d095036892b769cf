//! The page-table vocabulary the memory manager speaks (`mm`, `user`): addresses, frames,
//! pages, tables and their flags, from the `x86_64` crate, plus the TLB flushes and the
//! active table. Memory management is the kernel's; the shape of a page table is the
//! machine's, so it is named here and nowhere else.

pub use x86_64::structures::paging::mapper::{MapToError, TranslateResult};
pub use x86_64::structures::paging::page_table::PageTableEntry;
pub use x86_64::structures::paging::{
    FrameAllocator, FrameDeallocator, Mapper, OffsetPageTable, Page, PageTable, PageTableFlags,
    PhysFrame, Size4KiB, Translate,
};
pub use x86_64::{PhysAddr, VirtAddr};

/// Forgets the TLB's translation of the page at `addr`.
#[inline]
pub fn flush_tlb(addr: VirtAddr) {
    x86_64::instructions::tlb::flush(addr);
}

/// Forgets every non-global translation in the TLB.
#[inline]
pub fn flush_tlb_all() {
    x86_64::instructions::tlb::flush_all();
}

/// The level-4 table the CPU translates through now (CR3).
pub fn active_level_4_frame() -> PhysFrame {
    x86_64::registers::control::Cr3::read().0
}
