//! A process's address space: its own level-4 page table, whose lower half (entries 0–255,
//! addresses below 0x0000_8000_0000_0000) is the program's and whose upper half is a copy
//! of the kernel's entries — the same kernel mappings in every process, as in Linux.
//!
//! The kernel reads and writes a program's memory through the physical-memory map, after
//! walking the program's own table: a bad user pointer is an error (`EFAULT`), never a
//! kernel page fault, and nothing depends on which table CR3 holds.

use super::layout::Layout;
use super::page_walk::CHUNK;
use crate::arch::paging::{
    FrameAllocator, FrameDeallocator, Mapper, OffsetPageTable, Page, PageTable,
    PageTableFlags as F, PhysFrame, Size4KiB,
};
use crate::arch::paging::{PageTableEntry, VirtAddr};
use crate::cpus::loaded_on::LoadedOn;
use crate::mm::{MEMORY, Memory, MemoryError};
use crate::sync::{Rank, SpinLock};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

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
    /// Where all of physical memory is mapped (the memory's own offset, kept here so that
    /// a copy reaches the tables without the memory lock).
    phys_offset: VirtAddr,
    /// The lock of the lower half's page tables (Linux's `mm->page_table_lock`). A change
    /// to them — a mapping made, changed or gone, a frame given back — holds the memory
    /// lock and this one ([`Self::with_mapper`], [`Self::with_memory_and_tables`]); a
    /// copy to or from the program holds this one alone ([`Self::with_tables`]). So two
    /// processes copy at once on two CPUs, where under the memory lock every `read` and
    /// `write` of every process queued behind each other's.
    page_tables: SpinLock<()>,
    /// Pages mapped in the lower half (shared copy-on-write pages count in each owner).
    pages: AtomicU64,
    /// Page tables of the lower half (levels 3, 2 and 1): they count in the limit too.
    pub(super) tables: AtomicU64,
    /// Where `brk` and anonymous `mmap`s put memory.
    pub layout: SpinLock<Layout>,
    /// The 2 MiB chunks of the lower half that have a level-1 table, and the span of it
    /// ever used (see `page_walk`).
    pub(super) chunks: SpinLock<super::page_walk::Chunks>,
    /// The CPUs running a task of this address space (Linux's `mm_cpumask`): those a
    /// change to its mappings must flush (`cpus::tlb`).
    pub loaded_on: LoadedOn,
    /// The process registered for `membarrier`'s private expedited command.
    pub membarrier_registered: AtomicBool,
}

pub(super) fn with_memory<R>(f: impl FnOnce(&mut Memory) -> R) -> R {
    f(MEMORY.lock().as_mut().expect("memory set up"))
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
            // The lower half starts empty and the upper half is the kernel's: each entry is
            // written once (zeroing the whole table first cost a second pass over half).
            for i in 0..256 {
                table[i].set_unused();
            }
            for i in 256..512 {
                table[i] = m.mapper.level_4_table()[i].clone();
            }
            Ok(AddressSpace {
                level_4: frame,
                phys_offset: offset,
                page_tables: SpinLock::new(Rank::PageTables, ()),
                pages: AtomicU64::new(0),
                tables: AtomicU64::new(0),
                loaded_on: LoadedOn::default(),
                membarrier_registered: AtomicBool::new(false),
                layout: SpinLock::new(Rank::Layout, Layout::default()),
                chunks: SpinLock::new(Rank::Chunks, super::page_walk::Chunks::default()),
            })
        })
    }

    /// Pages mapped in the lower half.
    pub fn mapped_pages(&self) -> u64 {
        self.pages.load(Relaxed)
    }

    /// The frame CR3 must hold while the program runs.
    pub fn level_4_frame(&self) -> PhysFrame {
        self.level_4
    }

    /// The lower half's page tables and the frames, to change: the memory lock, then the
    /// page tables' (see [`AddressSpace::page_tables`]).
    pub(super) fn with_mapper<R>(
        &self,
        f: impl FnOnce(&mut OffsetPageTable, &mut Memory) -> R,
    ) -> R {
        self.with_memory_and_tables(|m| f(&mut self.mapper(), m))
    }

    /// The memory lock, then this address space's page tables' lock: what every change to
    /// its lower half holds (the walks that change entries in place take `m`).
    pub(super) fn with_memory_and_tables<R>(&self, f: impl FnOnce(&mut Memory) -> R) -> R {
        with_memory(|m| {
            let _tables = self.page_tables.lock();
            f(m)
        })
    }

    /// The lower half's page tables to read, under their own lock alone: a copy to or from
    /// the program, which reaches its frames through the physical-memory map. No frame
    /// mapped there is given back while the lock is held (that is a change).
    pub(super) fn with_tables<R>(&self, f: impl FnOnce(&OffsetPageTable) -> R) -> R {
        let _tables = self.page_tables.lock();
        f(&self.mapper())
    }

    /// A mapper of the lower half; the caller holds the page tables' lock.
    fn mapper(&self) -> OffsetPageTable<'_> {
        debug_assert!(
            crate::percpu::this_cpu().holds_rank(Rank::PageTables as u32),
            "page tables walked without their lock"
        );
        let offset = self.phys_offset;
        // SAFETY: our level-4 table, reached through the physical-memory map; only a
        // holder of the page tables' lock (the caller) touches its lower half, and the
        // upper half, the kernel's, is only read through it.
        let table: &mut PageTable =
            unsafe { &mut *(offset + self.level_4.start_address().as_u64()).as_mut_ptr() };
        // SAFETY: as above; the offset is the physical-memory map's.
        unsafe { OffsetPageTable::new(table, offset) }
    }

    /// Whether one more page would pass the process's limit: its pages and its page
    /// tables together.
    fn at_limit(&self) -> bool {
        self.pages.load(Relaxed) + self.tables.load(Relaxed) >= MAX_PROCESS_BYTES / PAGE
    }

    /// The level-1 entry of the page at `addr` if it maps nothing yet, the tables above it
    /// made where missing (`page_walk::level_1_entry`); `Ok(None)` if it maps a page
    /// already. The caller holds the memory lock and the page tables' (or the address space
    /// is a fork's child, which no one else reaches yet) and has noted the page
    /// ([`Self::note_pages`]).
    pub(super) fn free_entry(
        &self,
        m: &mut Memory,
        addr: u64,
    ) -> Result<Option<&'static mut PageTableEntry>, MemoryError> {
        let entry = self
            .level_1_entry(m, addr)
            .ok_or(MemoryError::Mapping("user memory (out of frames)"))?;
        Ok(entry.is_unused().then_some(entry))
    }

    /// Maps `frame` with `flags` at `entry` (from [`Self::free_entry`]), counting the page. A
    /// page that was not mapped needs no TLB flush.
    ///
    /// # Safety
    /// `frame` may be mapped here: it is fresh, or shared read-only (copy-on-write or the
    /// page cache), so that no writable alias of it exists.
    pub(super) unsafe fn map_page(&self, entry: &mut PageTableEntry, frame: PhysFrame, flags: F) {
        entry.set_frame(frame, flags);
        self.pages.fetch_add(1, Relaxed);
    }

    /// Maps zeroed pages for `start..start + len` (page-aligned outward), user-accessible,
    /// writable if asked. Pages already mapped are left as they are. The memory lock
    /// (interrupts off) is taken one 2 MiB chunk at a time, so that a large mapping, whose
    /// pages are zeroed here, does not hold off every other process's timer for as long.
    pub fn map_zeroed(&self, start: u64, len: u64, writable: bool) -> Result<(), MemoryError> {
        if start.checked_add(len).is_none_or(|end| end > USER_END) {
            return Err(MemoryError::Mapping("user memory beyond the lower half"));
        }
        let first = start & !(PAGE - 1);
        let end = (start + len).next_multiple_of(PAGE);
        let mut flags = F::PRESENT | F::USER_ACCESSIBLE;
        if writable {
            flags |= F::WRITABLE;
        }
        for (from, to) in chunk_spans(first, end) {
            self.with_memory_and_tables(|m| {
                self.note_pages(from, to);
                for addr in (from..to).step_by(PAGE as usize) {
                    let Some(entry) = self.free_entry(m, addr)? else {
                        continue;
                    };
                    if self.at_limit() {
                        return Err(MemoryError::Mapping("user memory (the process's limit)"));
                    }
                    // Not from the zeroed tables' list, which stays the page tables' own.
                    let frame = m
                        .frames
                        .allocate_cleared()
                        .ok_or(MemoryError::Mapping("user memory (out of frames)"))?;
                    // SAFETY: a fresh frame: no other mapping aliases it.
                    unsafe { self.map_page(entry, frame, flags) };
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    /// Maps `start..start + len` (page-aligned outward) read-only to the pages of `file` that
    /// hold its bytes from `file_offset` on, shared through the page cache: `start` and
    /// `file_offset` must be congruent modulo the page size, as an ELF segment's are. Pages
    /// already mapped are left as they are.
    pub fn map_cached(
        &self,
        start: u64,
        len: u64,
        file: &'static [u8],
        file_offset: u64,
    ) -> Result<(), MemoryError> {
        let first = start & !(PAGE - 1);
        let end = start
            .checked_add(len)
            .filter(|&end| end <= USER_END && start % PAGE == file_offset % PAGE)
            .ok_or(MemoryError::Mapping("a file's pages at a bad place"))?
            .next_multiple_of(PAGE);
        let first_index = file_offset / PAGE;
        self.with_memory_and_tables(|m| {
            for (from, to) in chunk_spans(first, end) {
                self.note_pages(from, to);
            }
            for (i, addr) in (first..end).step_by(PAGE as usize).enumerate() {
                let Some(entry) = self.free_entry(m, addr)? else {
                    continue;
                };
                if self.at_limit() {
                    return Err(MemoryError::Mapping("user memory (the process's limit)"));
                }
                let frame = m
                    .cached_file_page(file, first_index + i as u64)
                    .ok_or(MemoryError::Mapping("user memory (out of frames)"))?;
                // SAFETY: a read-only mapping of a page-cache frame: neither this program nor
                // any other can change it (none maps it writable; the kernel's copies to
                // user memory refuse read-only pages that are not copy-on-write).
                unsafe { self.map_page(entry, frame, F::PRESENT | F::USER_ACCESSIBLE) };
                m.shares.share(frame);
            }
            Ok(())
        })
    }

    /// Unmaps the pages of `start..start + len` (page-aligned outward) and frees their
    /// frames (a shared one when its last owner goes), then the tables left empty; pages not
    /// mapped are skipped. Only the chunks of the range are visited, so the cost is what
    /// is mapped there, and the memory lock is taken one chunk at a time (as in
    /// [`Self::map_zeroed`]). Each page's TLB entry is flushed (the range is the running
    /// program's, or the address space is not loaded and the flush is harmless).
    pub fn unmap(&self, start: u64, len: u64) {
        let first = start & !(PAGE - 1);
        let end = start
            .saturating_add(len)
            .next_multiple_of(PAGE)
            .min(USER_END);
        let chunks: Vec<u64> = self.chunks.lock().bases_in(first & !(CHUNK - 1), end);
        for base in chunks {
            let (from, to) = (first.max(base), end.min(base + CHUNK));
            self.with_mapper(|mapper, m| {
                let mut pages = Vec::new();
                self.for_each_page_in(m, from, to, |addr, _| pages.push(addr));
                let mut frames = Vec::with_capacity(pages.len());
                for addr in pages {
                    let page = Page::<Size4KiB>::containing_address(VirtAddr::new(addr));
                    if let Ok((frame, flush)) = mapper.unmap(page) {
                        flush.flush();
                        frames.push(frame);
                        self.pages.fetch_sub(1, Relaxed);
                    }
                }
                // No other CPU may reach a frame through its TLB once it is freed.
                self.shoot_down();
                for frame in frames {
                    m.release_user_frame(frame);
                }
                self.free_empty_tables(m, from, to);
            })
        }
    }

    /// Flushes the TLB of every other CPU running a thread of this address space, after a
    /// change to its mappings (`cpus::tlb`).
    pub(super) fn shoot_down(&self) {
        crate::cpus::tlb::shoot_down(&self.loaded_on);
    }
}

/// `first..end` cut at 2 MiB chunk boundaries.
fn chunk_spans(first: u64, end: u64) -> impl Iterator<Item = (u64, u64)> {
    let mut at = first;
    core::iter::from_fn(move || {
        (at < end).then(|| {
            let to = ((at & !(CHUNK - 1)) + CHUNK).min(end);
            let span = (at, to);
            at = to;
            span
        })
    })
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
            for frame in self.take_tables(m) {
                // SAFETY: each table belonged to this address space alone, which goes, and
                // was cleared.
                unsafe { m.frames.deallocate_zeroed(frame) };
            }
            // SAFETY: as the tables; the level-4 table keeps the kernel's half, so it goes
            // back as a frame like any other (`new` writes each of its entries).
            unsafe { m.frames.deallocate_frame(self.level_4) };
        })
    }
}

#[cfg(test)]
mod tests;
