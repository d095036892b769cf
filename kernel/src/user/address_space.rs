//! A process's address space: its own level-4 page table, whose lower half (entries 0–255,
//! addresses below 0x0000_8000_0000_0000) is the program's and whose upper half is a copy
//! of the kernel's entries — the same kernel mappings in every process, as in Linux.
//!
//! The kernel reads and writes a program's memory through the physical-memory map, after
//! walking the program's own table: a bad user pointer is an error (`EFAULT`), never a
//! kernel page fault, and nothing depends on which table CR3 holds.

use crate::mm::{MEMORY, Memory, MemoryError};
use alloc::vec::Vec;
use core::sync::atomic::Ordering::Relaxed;
use x86_64::VirtAddr;
use x86_64::instructions::interrupts;
use x86_64::structures::paging::{
    FrameAllocator, FrameDeallocator, Mapper, OffsetPageTable, Page, PageTable,
    PageTableFlags as F, PhysFrame, Size4KiB,
};

/// Programs live below this address (the lower half, less a guard page at its top).
pub const USER_END: u64 = 0x0000_7fff_ffff_f000;
pub(super) const PAGE: u64 = 4096;

/// A user pointer that does not point at the program's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault;

/// The most memory one process may map (Linux's RLIMIT_AS, in spirit): one more page gives
/// ENOMEM. With [`crate::sched::MAX_PROCESSES`] processes this is not a promise that all
/// can have it at once; running out of frames gives ENOMEM too, never a panic.
pub const MAX_PROCESS_BYTES: u64 = 64 << 20;

pub struct AddressSpace {
    level_4: PhysFrame,
    /// Pages mapped in the lower half (shared copy-on-write pages count in each owner).
    pages: core::sync::atomic::AtomicU64,
    /// Where `brk` and anonymous `mmap`s put memory.
    pub layout: spin::Mutex<Layout>,
    /// The 2 MiB chunks of the lower half that have a level-1 table (see `page_walk`).
    pub(super) chunks: spin::Mutex<Vec<u64>>,
}

/// The program break and the next anonymous mapping's address.
#[derive(Debug, Clone, Copy, Default)]
pub struct Layout {
    /// Where the break started (the end of the program's last segment) and where it is.
    pub brk_start: u64,
    pub brk: u64,
    /// Anonymous mappings grow down from here (below the stack).
    pub mmap_next: u64,
}

/// The top of the anonymous-mapping area (well below the stack).
pub const MMAP_TOP: u64 = 0x0000_7000_0000_0000;

pub(super) fn with_memory<R>(f: impl FnOnce(&mut Memory) -> R) -> R {
    interrupts::without_interrupts(|| f(MEMORY.lock().as_mut().expect("memory set up")))
}

impl AddressSpace {
    /// An empty address space: no user mappings, the kernel's upper half.
    pub fn new() -> Result<AddressSpace, MemoryError> {
        with_memory(|m| {
            let frame = m
                .frames
                .allocate_frame()
                .ok_or(MemoryError::Mapping("a page table"))?;
            let offset = m.mapper.phys_offset();
            let table: &mut PageTable =
                // SAFETY: a fresh frame, reached through the physical-memory map.
                unsafe { &mut *(offset + frame.start_address().as_u64()).as_mut_ptr() };
            table.zero();
            for i in 256..512 {
                table[i] = m.mapper.level_4_table()[i].clone();
            }
            Ok(AddressSpace {
                level_4: frame,
                pages: core::sync::atomic::AtomicU64::new(0),
                layout: spin::Mutex::new(Layout {
                    mmap_next: MMAP_TOP,
                    ..Layout::default()
                }),
                chunks: spin::Mutex::new(Vec::new()),
            })
        })
    }

    /// Pages mapped in the lower half.
    pub fn mapped_pages(&self) -> u64 {
        self.pages.load(Relaxed)
    }

    /// A forked child starts with its parent's pages (shared, but counted in each).
    pub(super) fn set_mapped_pages(&self, pages: u64) {
        self.pages.store(pages, Relaxed);
    }

    /// The frame CR3 must hold while the program runs.
    pub fn level_4_frame(&self) -> PhysFrame {
        self.level_4
    }

    pub(super) fn with_mapper<R>(
        &self,
        f: impl FnOnce(&mut OffsetPageTable, &mut Memory) -> R,
    ) -> R {
        with_memory(|m| {
            let offset = m.mapper.phys_offset();
            // SAFETY: our level-4 table, reached through the physical-memory map; only
            // this mapper touches its lower half while the memory lock is held.
            let table: &mut PageTable =
                unsafe { &mut *(offset + self.level_4.start_address().as_u64()).as_mut_ptr() };
            // SAFETY: as above; the offset is the physical-memory map's.
            let mut mapper = unsafe { OffsetPageTable::new(table, offset) };
            f(&mut mapper, m)
        })
    }

    /// Maps zeroed pages for `start..start + len` (page-aligned outward), user-accessible,
    /// writable if asked. Pages already mapped are left as they are.
    pub fn map_zeroed(&self, start: u64, len: u64, writable: bool) -> Result<(), MemoryError> {
        if start.checked_add(len).is_none_or(|end| end > USER_END) {
            return Err(MemoryError::Mapping("user memory beyond the lower half"));
        }
        let first = start & !(PAGE - 1);
        let end = (start + len).next_multiple_of(PAGE);
        self.with_mapper(|mapper, m| {
            let offset = mapper.phys_offset();
            for addr in (first..end).step_by(PAGE as usize) {
                let page = Page::<Size4KiB>::containing_address(VirtAddr::new(addr));
                if mapper.translate_page(page).is_ok() {
                    continue;
                }
                if self.pages.load(Relaxed) >= MAX_PROCESS_BYTES / PAGE {
                    return Err(MemoryError::Mapping("user memory (the process's limit)"));
                }
                let frame = m
                    .frames
                    .allocate_frame()
                    .ok_or(MemoryError::Mapping("user memory (out of frames)"))?;
                // SAFETY: a fresh frame, through the physical-memory map.
                unsafe {
                    core::ptr::write_bytes(
                        (offset + frame.start_address().as_u64()).as_mut_ptr::<u8>(),
                        0,
                        PAGE as usize,
                    )
                };
                let mut flags = F::PRESENT | F::USER_ACCESSIBLE;
                if writable {
                    flags |= F::WRITABLE;
                }
                let parents = F::PRESENT | F::WRITABLE | F::USER_ACCESSIBLE;
                self.note_chunk(addr);
                // SAFETY: a fresh frame at a page of this address space's lower half: no
                // other mapping aliases it.
                let mapped = unsafe {
                    mapper.map_to_with_table_flags(page, frame, flags, parents, &mut m.frames)
                };
                match mapped {
                    Ok(flush) => flush.ignore(),
                    Err(_) => {
                        // No table frame left: the page's frame goes back.
                        // SAFETY: the fresh frame was mapped nowhere.
                        unsafe { m.frames.deallocate_frame(frame) };
                        return Err(MemoryError::Mapping("user memory (out of frames)"));
                    }
                }
                self.pages.fetch_add(1, Relaxed);
            }
            Ok(())
        })
    }

    /// Unmaps the pages of `start..start + len` (page-aligned outward) and frees their
    /// frames (a shared one when its last owner goes); pages not mapped are skipped. Only
    /// the mapped pages are visited, so a huge range costs what is mapped in it, not its
    /// length. The caller flushes the TLB (CR3 reload) if this address space is loaded.
    pub fn unmap(&self, start: u64, len: u64) {
        let first = start & !(PAGE - 1);
        let end = start
            .saturating_add(len)
            .next_multiple_of(PAGE)
            .min(USER_END);
        let mut pages = Vec::new();
        with_memory(|m| {
            self.for_each_page(m, |addr, _| {
                if (first..end).contains(&addr) {
                    pages.push(addr);
                }
            })
        });
        self.with_mapper(|mapper, m| {
            for addr in pages {
                let page = Page::<Size4KiB>::containing_address(VirtAddr::new(addr));
                if let Ok((frame, flush)) = mapper.unmap(page) {
                    flush.flush();
                    m.release_user_frame(frame);
                    self.pages.fetch_sub(1, Relaxed);
                }
            }
        })
    }

    /// Makes the mapped pages of `start..start + len` (page-aligned) accessible to the
    /// program or not (`mprotect` to PROT_NONE and back: a thread stack's guard page).
    /// Returns how many pages were mapped there. The range is the running program's, so
    /// each page's TLB entry is flushed here.
    pub fn set_user_access(&self, start: u64, len: u64, accessible: bool) -> u64 {
        let end = start.saturating_add(len).min(USER_END);
        let mut changed = 0;
        with_memory(|m| {
            self.for_each_page(m, |addr, entry| {
                if (start..end).contains(&addr) {
                    let mut flags = entry.flags();
                    flags.set(F::USER_ACCESSIBLE, accessible);
                    entry.set_flags(flags);
                    x86_64::instructions::tlb::flush(VirtAddr::new(addr));
                    changed += 1;
                }
            })
        });
        changed
    }
}

impl Drop for AddressSpace {
    /// Gives back every page of the lower half (a frame shared copy-on-write only when its
    /// last owner goes), the tables that map them, and the level-4 table. The caller makes
    /// sure CR3 no longer holds it.
    fn drop(&mut self) {
        with_memory(|m| {
            let mut pages = Vec::new();
            self.for_each_page(m, |_, entry| pages.extend(entry.frame().ok()));
            for frame in pages {
                m.release_user_frame(frame);
            }
            for frame in self.tables(m).into_iter().chain([self.level_4]) {
                // SAFETY: each table belonged to this address space alone, which goes.
                unsafe { m.frames.deallocate_frame(frame) };
            }
        })
    }
}
