//! Copy-on-write `fork` (Linux's `copy_page_range` and `do_wp_page`). A fork copies no
//! page: the child maps the parent's frames, and every writable page becomes read-only in
//! both, marked copy-on-write in a bit the CPU ignores. The first write to such a page —
//! the program's own store, which faults, or the kernel's copy to it — gives the writer a
//! private copy; the last owner simply gets write access back. So a fork costs page
//! tables, not memory, and a fork followed by `execve` copies almost nothing.

use super::address_space::{AddressSpace, PAGE};
use crate::arch::paging::TranslateResult;
use crate::arch::paging::VirtAddr;
use crate::arch::paging::{FrameAllocator, Mapper, Page, PageTableFlags as F, Size4KiB, Translate};
use crate::mm::MemoryError;

use super::protection::COW;

impl AddressSpace {
    /// A child address space for `fork`: the same frames, writable pages copy-on-write in
    /// both. The caller is the parent, whose address space is loaded: the TLB is flushed,
    /// so its next store to a shared page faults.
    ///
    /// Everything happens under one hold of the memory lock, as Linux's `dup_mmap` holds
    /// the parent's `mmap_lock` for writing: a sibling thread on another CPU that faults
    /// or unmaps in the middle would otherwise find a page marked copy-on-write but its
    /// frame not yet counted as shared — its write fault would take the frame back as its
    /// own (the child then sees the parent's later writes), and its `munmap` would free a
    /// frame the child is about to map.
    pub fn fork(&self) -> Result<AddressSpace, MemoryError> {
        let child = AddressSpace::new()?;
        // The parent's layout is held across the walk (Layout ranks below Memory), so that
        // the child's is the parent's at one instant; the child's is set once it is
        // released (two locks of one rank are never held together). A sibling's `mmap`
        // places its range under the layout lock but maps its pages after, a chunk at a
        // time: a fork in between gives the child the range with part of its pages (Linux
        // holds `mmap_lock` across both).
        let parents_layout = self.layout.lock();
        // The parent's page tables change (its writable pages become copy-on-write); the
        // child's are its own until it is returned, so no one else can walk them.
        self.with_memory_and_tables(|m| {
            child.copy_chunks(self);
            let mut pages = alloc::vec::Vec::new();
            self.for_each_page(m, |addr, entry| {
                let mut flags = entry.flags();
                if flags.contains(F::WRITABLE) {
                    flags = (flags - F::WRITABLE) | COW;
                    entry.set_flags(flags);
                }
                if let Ok(frame) = entry.frame() {
                    pages.push((addr, frame, flags));
                }
            });
            crate::arch::paging::flush_tlb_all();
            // The parent's other threads, on other CPUs, must fault on their next store too.
            self.shoot_down();
            child.map_shared(m, pages)
        })?;
        let layout = parents_layout.clone();
        drop(parents_layout);
        *child.layout.lock() = layout;
        Ok(child)
    }

    /// Maps each of `pages` (address, frame, flags) into this new child, one more owner
    /// for each frame; the memory lock is held (`m`). Each page counts in the child's pages
    /// as it is mapped (`map_page`), and the tables the mappings make in its limit, as a
    /// parent's do: `pages` is every page the parent counts, so the child's count ends equal
    /// to the parent's.
    fn map_shared(
        &self,
        m: &mut crate::mm::Memory,
        pages: alloc::vec::Vec<(u64, crate::arch::paging::PhysFrame, F)>,
    ) -> Result<(), MemoryError> {
        for (addr, frame, flags) in pages {
            let entry = self
                .free_entry(m, addr)?
                .ok_or(MemoryError::Mapping("a forked page, mapped twice"))?;
            // SAFETY: the parent's frame, now read-only in both (`fork` made the writable
            // ones copy-on-write): neither can change it without a fault that first gives
            // the writer a copy of its own.
            unsafe { self.map_page(entry, frame, flags) };
            m.shares.share(frame);
        }
        Ok(())
    }

    /// If the page at `addr` is copy-on-write, makes it the caller's own and writable again:
    /// a fresh copy if others still share the frame, else the same frame. `Ok(false)` if the
    /// page is not copy-on-write (nothing to do).
    pub fn break_cow(&self, addr: u64) -> Result<bool, MemoryError> {
        let page = Page::<Size4KiB>::containing_address(VirtAddr::new(addr));
        self.with_mapper(|mapper, m| {
            let TranslateResult::Mapped { frame, flags, .. } =
                mapper.translate(page.start_address())
            else {
                return Ok(false);
            };
            if !flags.contains(COW) {
                // Writable already: another thread broke it, and this CPU faulted on a
                // translation it had cached before. Dropped, the store runs again.
                if flags.contains(F::WRITABLE | F::USER_ACCESSIBLE) {
                    crate::arch::paging::flush_tlb(page.start_address());
                    return Ok(true);
                }
                return Ok(false);
            }
            let flags = (flags - COW) | F::WRITABLE;
            let frame = crate::arch::paging::PhysFrame::<Size4KiB>::containing_address(
                frame.start_address(),
            );
            if m.shares.is_shared(frame) {
                let copy = m
                    .frames
                    .allocate_frame()
                    .ok_or(MemoryError::Mapping("a copy-on-write page (out of frames)"))?;
                let offset = mapper.phys_offset();
                // SAFETY: both frames through the physical-memory map, 4 KiB each; `copy`
                // is fresh.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        (offset + frame.start_address().as_u64()).as_ptr::<u8>(),
                        (offset + copy.start_address().as_u64()).as_mut_ptr::<u8>(),
                        PAGE as usize,
                    )
                };
                // The shared frame keeps its other owners; this page gets the copy.
                mapper
                    .unmap(page)
                    .map_err(|_| MemoryError::Mapping("a copy-on-write page"))?
                    .1
                    .flush();
                m.release_user_frame(frame);
                // SAFETY: `copy` is fresh and mapped only here.
                unsafe { mapper.map_to(page, copy, flags, &mut m.frames) }
                    .map_err(|_| MemoryError::Mapping("a copy-on-write page"))?
                    .flush();
                // This thread's siblings on other CPUs must see the copy, not the frame
                // its other owners keep (and may free).
                self.shoot_down();
            } else {
                // SAFETY: the last owner of the frame gets write access back.
                unsafe { mapper.update_flags(page, flags) }
                    .map_err(|_| MemoryError::Mapping("a copy-on-write page"))?
                    .flush();
            }
            Ok(true)
        })
    }
}

/// A write fault in ring 3 at `addr` on a present page: true if it was a copy-on-write page
/// (now the program's own), so the store can be retried.
pub fn resolve_write_fault(addr: u64) -> bool {
    crate::sched::current_address_space()
        .is_some_and(|space| space.break_cow(addr & !(PAGE - 1)).unwrap_or(false))
}

/// A fault in ring 3 at `addr` on a page that was not present: true if the page is there
/// now, so the access can run again. A copy-on-write copy on another CPU replaces the
/// shared frame by unmapping it and mapping the copy ([`AddressSpace::break_cow`], as
/// Linux's `wp_page_copy` clears the entry, then sets it): a sibling thread that touches the
/// page in between faults on a page that is, a moment later, mapped again. Linux's fault
/// path finds the new entry under the page-table lock and returns; so does this, under the
/// page tables' lock, which the copy holds from the unmap to the map.
pub fn resolve_replaced_page(addr: u64) -> bool {
    crate::sched::current_address_space().is_some_and(|space| {
        let page = VirtAddr::new(addr & !(PAGE - 1));
        space.with_tables(|mapper| match mapper.translate(page) {
            TranslateResult::Mapped { flags, .. } => flags.contains(F::USER_ACCESSIBLE),
            _ => false,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user::address_space::with_memory;

    fn frames_in_use() -> u64 {
        with_memory(|m| m.frames.frames_in_use())
    }

    /// A fork copies page tables only; a write copies one page; the two stay private; and
    /// every frame comes back once both are gone.
    #[test_case]
    fn fork_shares_frames_until_a_write_and_frees_them_all() {
        const BASE: u64 = 0x40_0000;
        let baseline = frames_in_use();
        let parent = AddressSpace::new().unwrap();
        parent.map_zeroed(BASE, 16 * PAGE, true).unwrap();
        parent.write(BASE, &[1; 16 * PAGE as usize]).unwrap();
        let before_fork = frames_in_use();

        let child = parent.fork().unwrap();
        // The child's level-4, -3, -2 and -1 tables, and no page.
        assert_eq!(frames_in_use() - before_fork, 4);
        assert_eq!(with_memory(|m| m.shares.shared_frames()), 16);
        assert_eq!((parent.mapped_pages(), child.mapped_pages()), (16, 16));

        child.write(BASE + 5 * PAGE + 7, &[2, 2]).unwrap();
        assert_eq!(frames_in_use() - before_fork, 5, "one page copied");
        let (mut mine, mut theirs) = ([0u8; 3], [0u8; 3]);
        parent.read(BASE + 5 * PAGE + 6, &mut mine).unwrap();
        child.read(BASE + 5 * PAGE + 6, &mut theirs).unwrap();
        assert_eq!((mine, theirs), ([1, 1, 1], [1, 2, 2]));

        // The parent is now the last owner of page 5's old frame: no copy, write access back.
        parent.write(BASE + 5 * PAGE, &[3]).unwrap();
        assert_eq!(frames_in_use() - before_fork, 5);

        drop(child);
        assert_eq!(frames_in_use(), before_fork);
        assert_eq!(with_memory(|m| m.shares.shared_frames()), 0);
        drop(parent);
        assert_eq!(frames_in_use(), baseline);
    }
}
