//! Walking a process's page tables: the one walk over its mapped pages (fork, unmap,
//! mprotect, drop) and the list of its tables (drop).
//!
//! A full walk of the lower half visits every entry of every table — 256 level-4 entries
//! and 512 per level-3, level-2 and level-1 table — though a small program maps a few
//! dozen pages: that scan was most of what a fork and an exit cost. So each address space
//! remembers which 2 MiB chunks have a level-1 table (a handful: the program image, the
//! heap, the mmap area, the stack), and the walk goes straight to those tables — and within
//! each, to the span of entries ever used: a program's image takes a dozen entries of its
//! table and its stack a few at the top, and scanning the other 500 of each was still most
//! of what an exit cost. Linux gets the same effect from its VMAs: `copy_page_range` walks
//! only the ranges that are mapped.

use super::address_space::{AddressSpace, PAGE, USER_END};
use crate::arch::paging::PageTableEntry;
use crate::arch::paging::{PageTable, PageTableFlags as F, PhysFrame};
use crate::mm::Memory;
use alloc::vec::Vec;
use core::sync::atomic::Ordering::Relaxed;

/// What one level-1 table maps: 512 pages.
pub(super) const CHUNK: u64 = 512 * PAGE;

/// The entries of a chunk's level-1 table ever used: any mapped page of the chunk is at an
/// index in `first..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    first: usize,
    end: usize,
}

/// The chunks that have a level-1 table, each with its span, sorted by base address: a
/// handful for most programs, so a sorted vector (one allocation, copied whole by a fork)
/// beats a tree, and a binary search finds a chunk or a range of them.
#[derive(Debug, Clone, Default)]
pub struct Chunks(Vec<(u64, Span)>);

impl Chunks {
    /// The chunks whose base is in `from..end`.
    fn range(&self, from: u64, end: u64) -> &[(u64, Span)] {
        let first = self.0.partition_point(|&(base, _)| base < from);
        let last = self.0.partition_point(|&(base, _)| base < end);
        &self.0[first..last.max(first)]
    }

    /// The span of the chunk at `base`, made (one entry at `index`) if it is not there.
    fn span_mut(&mut self, base: u64, index: usize) -> &mut Span {
        let at = match self.0.binary_search_by_key(&base, |&(b, _)| b) {
            Ok(at) => at,
            Err(at) => {
                let span = Span {
                    first: index,
                    end: index + 1,
                };
                self.0.insert(at, (base, span));
                at
            }
        };
        &mut self.0[at].1
    }

    /// The bases of the chunks in `from..end`.
    pub(super) fn bases_in(&self, from: u64, end: u64) -> Vec<u64> {
        self.range(from, end)
            .iter()
            .map(|&(base, _)| base)
            .collect()
    }

    fn remove(&mut self, base: u64) {
        if let Ok(at) = self.0.binary_search_by_key(&base, |&(b, _)| b) {
            self.0.remove(at);
        }
    }
}

/// A page-table frame, through the physical-memory map.
fn table(m: &Memory, frame: PhysFrame) -> &'static mut PageTable {
    let offset = m.mapper.phys_offset();
    // SAFETY: a page-table frame of this address space, through the physical-memory map;
    // the memory lock the caller holds keeps every other change out (a change holds it and
    // the page tables' lock; a copy that reads them meanwhile holds the latter).
    unsafe { &mut *(offset + frame.start_address().as_u64()).as_mut_ptr() }
}

impl AddressSpace {
    /// Notes that pages of `start..end` (page-aligned, within one chunk) are about to be
    /// mapped: the chunk will have a level-1 table, and the pages are in its span. Noted
    /// first, so that tables made by a mapping that then fails are found and freed too; a
    /// page noted and then not mapped costs a walk one more entry to skip. Called with the
    /// memory lock held, like every walk, once per chunk of a mapping rather than per page.
    pub(super) fn note_pages(&self, start: u64, end: u64) {
        let base = start & !(CHUNK - 1);
        let first = ((start - base) / PAGE) as usize;
        let last = ((end - 1 - base) / PAGE) as usize;
        let mut chunks = self.chunks.lock();
        let span = chunks.span_mut(base, first);
        span.first = span.first.min(first);
        span.end = span.end.max(last + 1);
    }

    /// The level-1 entry of the page at `addr`, the tables above it made where missing from
    /// frames that hold zeros ([`crate::mm::frames::BootFrameAllocator::allocate_zeroed`]:
    /// most often a table another process gave back empty, which needs no clearing). Each
    /// table made counts in the process's limit. `None` if memory ran out (the tables made
    /// so far stay, found and freed with the chunk, which the caller noted first). One walk
    /// down, which the mapping then ends with its one store (the `x86_64` crate's mapper
    /// walked again, and zeroed each table it made). The caller holds the memory lock and,
    /// unless no one else can reach this address space yet (a fork's child), its page
    /// tables' lock.
    pub(super) fn level_1_entry(
        &self,
        m: &mut Memory,
        addr: u64,
    ) -> Option<&'static mut PageTableEntry> {
        let parents = F::PRESENT | F::WRITABLE | F::USER_ACCESSIBLE;
        let mut frame = self.level_4_frame();
        for shift in [39, 30, 21] {
            let entry = &mut table(m, frame)[((addr >> shift) & 511) as usize];
            if entry.is_unused() {
                entry.set_frame(m.frames.allocate_zeroed()?, parents);
                self.tables.fetch_add(1, Relaxed);
            }
            frame = entry.frame().ok()?;
        }
        Some(&mut table(m, frame)[((addr >> 12) & 511) as usize])
    }

    /// The tables that map `chunk`, level 3, level 2 and level 1, as far as they exist (a
    /// mapping that ran out of frames may have made the upper ones only).
    fn tables_of(&self, m: &Memory, chunk: u64) -> [Option<PhysFrame>; 3] {
        let index = |shift: u32| ((chunk >> shift) & 511) as usize;
        let l3 = table(m, self.level_4_frame())[index(39)].frame().ok();
        let l2 = l3.and_then(|l3| table(m, l3)[index(30)].frame().ok());
        let l1 = l2.and_then(|l2| table(m, l2)[index(21)].frame().ok());
        [l3, l2, l1]
    }

    /// Calls `f(address, entry)` for every mapped page of the lower half, with the memory
    /// lock held (and the page tables' lock, for an `f` that changes entries): the one walk
    /// over a process's pages.
    pub(super) fn for_each_page(&self, m: &mut Memory, f: impl FnMut(u64, &mut PageTableEntry)) {
        self.for_each_page_in(m, 0, USER_END, f);
    }

    /// Calls `f(address, entry)` for every mapped page of `start..end` (page-aligned):
    /// only the chunks that reach into the range are visited, so the walk costs what is
    /// mapped there, however much the process maps elsewhere.
    pub(super) fn for_each_page_in(
        &self,
        m: &mut Memory,
        start: u64,
        end: u64,
        mut f: impl FnMut(u64, &mut PageTableEntry),
    ) {
        let chunks: Vec<(u64, Span)> = {
            let chunks = self.chunks.lock();
            let from = start & !(CHUNK - 1);
            chunks.range(from, end).to_vec()
        };
        for (base, span) in chunks {
            let [_, _, Some(l1)] = self.tables_of(m, base) else {
                continue;
            };
            let entries = table(m, l1).iter_mut().enumerate();
            for (i, entry) in entries.take(span.end).skip(span.first) {
                let addr = base + i as u64 * PAGE;
                if (start..end).contains(&addr) && !entry.is_unused() && entry.frame().is_ok() {
                    f(addr, entry);
                }
            }
        }
    }

    /// How many pages of `start..end` (page-aligned) are mapped.
    pub fn count_mapped(&self, start: u64, end: u64) -> u64 {
        let mut count = 0;
        super::address_space::with_memory(|m| {
            self.for_each_page_in(m, start, end, |_, _| count += 1)
        });
        count
    }

    /// Whether any page of `start..end` (page-aligned) is mapped.
    pub fn any_mapped(&self, start: u64, end: u64) -> bool {
        let mut any = false;
        super::address_space::with_memory(|m| {
            self.for_each_page_in(m, start, end, |_, _| any = true)
        });
        any
    }

    /// Gives back the tables of each chunk of `start..end` that no longer maps a page: its
    /// level-1 table, then the level-2 and level-3 tables above it if they became empty,
    /// as Linux's `free_pgtables` does after an unmap. A program that maps and unmaps at
    /// ever new addresses (`MAP_FIXED`) so holds only the tables of what it has mapped.
    /// The caller has flushed the TLB entries of the range's pages.
    pub(super) fn free_empty_tables(&self, m: &mut Memory, start: u64, end: u64) {
        let chunks: Vec<(u64, Span)> = {
            let chunks = self.chunks.lock();
            chunks.range(start & !(CHUNK - 1), end).to_vec()
        };
        for (base, span) in chunks {
            let [l3, l2, l1] = self.tables_of(m, base);
            let in_use = |m: &Memory, frame: PhysFrame, from: usize, to: usize| {
                table(m, frame)
                    .iter()
                    .take(to)
                    .skip(from)
                    .any(|e| !e.is_unused())
            };
            if l1.is_some_and(|l1| in_use(m, l1, span.first, span.end)) {
                continue;
            }
            let mut chunks = self.chunks.lock();
            chunks.remove(base);
            // Each table in turn, from level 1 up, while the one below it went and no other
            // chunk lies under it. A chunk noted by a mapping that failed (the process's
            // limit, no frame left) may have no level-1 table, but tables above it.
            let levels = [
                (l1, l2, 21),
                (l2, l3, 30),
                (l3, Some(self.level_4_frame()), 39),
            ];
            let mut unlinked = Vec::new();
            for (frame, parent, shift) in levels {
                // No table at this level (a mapping that ran out of frames part-way): the
                // one above may still be empty.
                let (Some(frame), Some(parent)) = (frame, parent) else {
                    continue;
                };
                let span_of_table = 1u64 << shift; // what the table maps
                let first = base & !(span_of_table - 1);
                let shared = !chunks.range(first, first + span_of_table).is_empty();
                if shift != 21 && (shared || in_use(m, frame, 0, 512)) {
                    break;
                }
                table(m, parent)[((base >> shift) & 511) as usize].set_unused();
                unlinked.push(frame);
            }
            drop(chunks);
            // The CPU may still cache the entries that led to the tables: flush them all
            // before a table's frame is reused (Linux's `tlb_remove_table`).
            if !unlinked.is_empty() {
                crate::arch::paging::flush_tlb_all();
                self.shoot_down();
            }
            for frame in unlinked {
                // SAFETY: the table is empty (every entry unused: all zeros), no entry
                // refers to it, and no TLB holds it.
                unsafe { m.frames.deallocate_zeroed(frame) };
                self.tables.fetch_sub(1, Relaxed);
            }
        }
    }

    /// Notes every chunk `parent` has: a forked child maps the same pages.
    pub(super) fn copy_chunks(&self, parent: &AddressSpace) {
        // One list at a time: two locks of one rank are never held together.
        let chunks = parent.chunks.lock().clone();
        *self.chunks.lock() = chunks;
    }

    /// The page tables of the lower half (levels 3, 2 and 1), each cleared: for `drop`, which
    /// gives them back as zeroed frames. Each chunk's span of its level-1 table is cleared
    /// (no entry outside it was ever used), and the entries that led to its level-1 and
    /// level-2 tables: every entry of a level-2 or level-3 table leads to some chunk's. The
    /// pages the entries mapped are the caller's to free first.
    pub(super) fn take_tables(&self, m: &mut Memory) -> Vec<PhysFrame> {
        // Every chunk's tables are found before any entry is cleared: chunks in one GiB
        // share their level-3 entry and level-2 table, and clearing the first chunk's links
        // would hide the others' tables from their walk.
        let chunks: Vec<(u64, Span, [Option<PhysFrame>; 3])> = {
            let chunks = self.chunks.lock();
            let each = chunks.0.iter();
            each.map(|&(base, span)| (base, span, self.tables_of(m, base)))
                .collect()
        };
        // Each table once, though chunks share their upper ones.
        let mut tables = Vec::new();
        for frame in chunks
            .iter()
            .flat_map(|(_, _, found)| found.iter().flatten())
        {
            if !tables.contains(frame) {
                tables.push(*frame);
            }
        }
        for (base, span, [l3, l2, l1]) in chunks {
            if let Some(l1) = l1 {
                let entries = table(m, l1).iter_mut();
                entries
                    .take(span.end)
                    .skip(span.first)
                    .for_each(|e| e.set_unused());
            }
            if let Some(l2) = l2 {
                table(m, l2)[((base >> 21) & 511) as usize].set_unused();
            }
            if let Some(l3) = l3 {
                table(m, l3)[((base >> 30) & 511) as usize].set_unused();
            }
        }
        tables
    }
}
