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

use super::address_space::{AddressSpace, PAGE};
use crate::arch::paging::PageTableEntry;
use crate::arch::paging::{PageTable, PhysFrame};
use crate::mm::Memory;
use alloc::vec::Vec;

/// What one level-1 table maps: 512 pages.
const CHUNK: u64 = 512 * PAGE;

/// A 2 MiB chunk that has a level-1 table, and the entries of it ever used: any mapped page
/// of the chunk is at an index in `first..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    base: u64,
    first: usize,
    end: usize,
}

/// A page-table frame, through the physical-memory map.
fn table(m: &Memory, frame: PhysFrame) -> &'static mut PageTable {
    let offset = m.mapper.phys_offset();
    // SAFETY: a page-table frame of this address space, through the physical-memory map;
    // the memory lock the caller holds keeps every other walker out.
    unsafe { &mut *(offset + frame.start_address().as_u64()).as_mut_ptr() }
}

impl AddressSpace {
    /// Notes that a page at `addr` is about to be mapped: its chunk will have a level-1
    /// table (noted first, so that tables made by a mapping that then fails are found and
    /// freed too). Called with the memory lock held, like every walk.
    pub(super) fn note_chunk(&self, addr: u64) {
        let base = addr & !(CHUNK - 1);
        let index = ((addr - base) / PAGE) as usize;
        let mut chunks = self.chunks.lock();
        match chunks.iter_mut().find(|c| c.base == base) {
            Some(c) => {
                c.first = c.first.min(index);
                c.end = c.end.max(index + 1);
            }
            None => chunks.push(Chunk {
                base,
                first: index,
                end: index + 1,
            }),
        }
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
    /// lock held: the one walk over a process's pages.
    pub(super) fn for_each_page(
        &self,
        m: &mut Memory,
        mut f: impl FnMut(u64, &mut PageTableEntry),
    ) {
        let chunks = self.chunks.lock().clone();
        for chunk in chunks {
            let [_, _, Some(l1)] = self.tables_of(m, chunk.base) else {
                continue;
            };
            let span = table(m, l1).iter_mut().enumerate();
            for (i, entry) in span.take(chunk.end).skip(chunk.first) {
                if !entry.is_unused() && entry.frame().is_ok() {
                    f(chunk.base + i as u64 * PAGE, entry);
                }
            }
        }
    }

    /// Notes every chunk `parent` has: a forked child maps the same pages.
    pub(super) fn copy_chunks(&self, parent: &AddressSpace) {
        // One list at a time: two locks of one rank are never held together.
        let chunks = parent.chunks.lock().clone();
        *self.chunks.lock() = chunks;
    }

    /// The page tables of the lower half (levels 3, 2 and 1), for `drop`.
    pub(super) fn tables(&self, m: &Memory) -> Vec<PhysFrame> {
        let mut tables = Vec::new();
        for chunk in self.chunks.lock().iter() {
            for frame in self.tables_of(m, chunk.base).into_iter().flatten() {
                if !tables.contains(&frame) {
                    tables.push(frame);
                }
            }
        }
        tables
    }
}
