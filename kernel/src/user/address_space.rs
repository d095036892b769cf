//! A process's address space: its own level-4 page table, whose lower half (entries 0–255,
//! addresses below 0x0000_8000_0000_0000) is the program's and whose upper half is a copy
//! of the kernel's entries — the same kernel mappings in every process, as in Linux.
//!
//! The kernel reads and writes a program's memory through the physical-memory map, after
//! walking the program's own table: a bad user pointer is an error (`EFAULT`), never a
//! kernel page fault, and nothing depends on which table CR3 holds.

use crate::mm::{MEMORY, Memory, MemoryError};
use alloc::vec::Vec;
use x86_64::instructions::interrupts;
use x86_64::structures::paging::mapper::TranslateResult;
use x86_64::structures::paging::{
    FrameAllocator, FrameDeallocator, Mapper, OffsetPageTable, Page, PageTable,
    PageTableFlags as F, PhysFrame, Size4KiB, Translate,
};
use x86_64::{PhysAddr, VirtAddr};

/// Programs live below this address (the lower half, less a guard page at its top).
pub const USER_END: u64 = 0x0000_7fff_ffff_f000;
const PAGE: u64 = 4096;

/// A user pointer that does not point at the program's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault;

pub struct AddressSpace {
    level_4: PhysFrame,
    /// Where `brk` and anonymous `mmap`s put memory.
    pub layout: spin::Mutex<Layout>,
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

fn with_memory<R>(f: impl FnOnce(&mut Memory) -> R) -> R {
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
                layout: spin::Mutex::new(Layout {
                    mmap_next: MMAP_TOP,
                    ..Layout::default()
                }),
            })
        })
    }

    /// The frame CR3 must hold while the program runs.
    pub fn level_4_frame(&self) -> PhysFrame {
        self.level_4
    }

    fn with_mapper<R>(&self, f: impl FnOnce(&mut OffsetPageTable, &mut Memory) -> R) -> R {
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
                // SAFETY: a fresh frame at a page of this address space's lower half: no
                // other mapping aliases it.
                unsafe {
                    mapper.map_to_with_table_flags(page, frame, flags, parents, &mut m.frames)
                }
                .map_err(|_| MemoryError::Mapping("user memory"))?
                .ignore();
            }
            Ok(())
        })
    }

    /// Unmaps the pages of `start..start + len` (page-aligned outward) and frees their
    /// frames; pages not mapped are skipped. The caller flushes the TLB (CR3 reload) if this
    /// address space is loaded.
    pub fn unmap(&self, start: u64, len: u64) {
        let first = start & !(PAGE - 1);
        let end = start
            .saturating_add(len)
            .next_multiple_of(PAGE)
            .min(USER_END);
        self.with_mapper(|mapper, m| {
            for addr in (first..end).step_by(PAGE as usize) {
                let page = Page::<Size4KiB>::containing_address(VirtAddr::new(addr));
                if let Ok((frame, flush)) = mapper.unmap(page) {
                    flush.flush();
                    // SAFETY: the frame was this address space's page alone.
                    unsafe { m.frames.deallocate_frame(frame) };
                }
            }
        })
    }

    /// A copy of this address space for a forked child: every user page copied into a
    /// fresh frame with the same flags (an eager copy; copy-on-write is a later step).
    pub fn fork(&self) -> Result<AddressSpace, MemoryError> {
        let child = AddressSpace::new()?;
        *child.layout.lock() = *self.layout.lock();
        let pages = self.user_pages();
        child.with_mapper(|mapper, m| {
            let offset = mapper.phys_offset();
            for (addr, from, flags) in pages {
                let frame = m
                    .frames
                    .allocate_frame()
                    .ok_or(MemoryError::Mapping("a forked page (out of frames)"))?;
                // SAFETY: `from` is a page of the parent, `frame` fresh; both through the
                // physical-memory map, 4 KiB each.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        (offset + from.start_address().as_u64()).as_ptr::<u8>(),
                        (offset + frame.start_address().as_u64()).as_mut_ptr::<u8>(),
                        PAGE as usize,
                    )
                };
                let page = Page::<Size4KiB>::containing_address(VirtAddr::new(addr));
                let parents = F::PRESENT | F::WRITABLE | F::USER_ACCESSIBLE;
                // SAFETY: a fresh frame at a page of the child's empty lower half.
                unsafe {
                    mapper.map_to_with_table_flags(page, frame, flags, parents, &mut m.frames)
                }
                .map_err(|_| MemoryError::Mapping("a forked page"))?
                .ignore();
            }
            Ok(())
        })?;
        Ok(child)
    }

    /// Every mapped user page: (address, frame, flags).
    fn user_pages(&self) -> Vec<(u64, PhysFrame, F)> {
        with_memory(|m| {
            let offset = m.mapper.phys_offset();
            let table = |frame: PhysFrame| -> &'static PageTable {
                // SAFETY: a page-table frame of this address space, through the map.
                unsafe { &*(offset + frame.start_address().as_u64()).as_ptr() }
            };
            let mut pages = Vec::new();
            for (i4, l4) in table(self.level_4).iter().enumerate().take(256) {
                let Ok(f3) = l4.frame() else { continue };
                for (i3, l3) in table(f3).iter().enumerate() {
                    let Ok(f2) = l3.frame() else { continue };
                    for (i2, l2) in table(f2).iter().enumerate() {
                        let Ok(f1) = l2.frame() else { continue };
                        for (i1, e) in table(f1).iter().enumerate() {
                            if let Ok(frame) = e.frame() {
                                let addr = ((i4 as u64) << 39)
                                    | ((i3 as u64) << 30)
                                    | ((i2 as u64) << 21)
                                    | ((i1 as u64) << 12);
                                pages.push((addr, frame, e.flags()));
                            }
                        }
                    }
                }
            }
            pages
        })
    }

    /// The physical address behind user address `addr`, if the program may touch it
    /// (`write`: and write it).
    fn physical(mapper: &OffsetPageTable, addr: u64, write: bool) -> Result<PhysAddr, Fault> {
        if addr >= USER_END {
            return Err(Fault);
        }
        match mapper.translate(VirtAddr::new(addr)) {
            TranslateResult::Mapped {
                frame,
                offset,
                flags,
            } if flags.contains(F::USER_ACCESSIBLE) && (!write || flags.contains(F::WRITABLE)) => {
                Ok(frame.start_address() + offset)
            }
            _ => Err(Fault),
        }
    }

    /// Copies `bytes` to user address `addr` (`EFAULT` if any of it is not the program's,
    /// writable memory; then nothing is written).
    pub fn write(&self, addr: u64, bytes: &[u8]) -> Result<(), Fault> {
        self.copy(addr, bytes.len(), true, |user, i, n| {
            // SAFETY: `user` is the kernel's view of a checked user page with n bytes left.
            unsafe { core::ptr::copy_nonoverlapping(bytes[i..].as_ptr(), user, n) }
        })
    }

    /// Copies a program's bytes to `addr` as the loader does: read-only pages too.
    pub fn load(&self, addr: u64, bytes: &[u8]) -> Result<(), Fault> {
        self.copy(addr, bytes.len(), false, |user, i, n| {
            // SAFETY: as in `write`.
            unsafe { core::ptr::copy_nonoverlapping(bytes[i..].as_ptr(), user, n) }
        })
    }

    /// Copies `buf.len()` bytes from user address `addr` into `buf`.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), Fault> {
        let dst = buf.as_mut_ptr();
        self.copy(addr, buf.len(), false, |user, i, n| {
            // SAFETY: as in `write`; `dst` has `len` bytes.
            unsafe { core::ptr::copy_nonoverlapping(user, dst.add(i), n) }
        })
    }

    /// Reads a NUL-terminated string of at most `max` bytes at `addr`.
    pub fn read_c_string(&self, addr: u64, max: usize) -> Result<Vec<u8>, Fault> {
        let mut out = Vec::new();
        let mut byte = [0u8];
        while out.len() < max {
            self.read(addr + out.len() as u64, &mut byte)?;
            if byte[0] == 0 {
                return Ok(out);
            }
            out.push(byte[0]);
        }
        Err(Fault)
    }

    /// Checks the whole range first, then calls `each(kernel pointer, done, n)` page by page.
    fn copy(
        &self,
        addr: u64,
        len: usize,
        write: bool,
        mut each: impl FnMut(*mut u8, usize, usize),
    ) -> Result<(), Fault> {
        let end = addr.checked_add(len as u64).ok_or(Fault)?;
        self.with_mapper(|mapper, _| {
            let offset = mapper.phys_offset();
            let mut at = addr;
            while at < end {
                Self::physical(mapper, at, write)?;
                at = (at & !(PAGE - 1)) + PAGE;
            }
            let mut done = 0;
            while done < len {
                let at = addr + done as u64;
                let n = ((PAGE - at % PAGE) as usize).min(len - done);
                let phys = Self::physical(mapper, at, write)?;
                each((offset + phys.as_u64()).as_mut_ptr(), done, n);
                done += n;
            }
            Ok(())
        })
    }
}

impl Drop for AddressSpace {
    /// Gives back every frame of the lower half — pages and the tables that map them — and
    /// the level-4 table. The caller makes sure CR3 no longer holds it.
    fn drop(&mut self) {
        with_memory(|m| {
            let offset = m.mapper.phys_offset();
            let table = |frame: PhysFrame| -> &'static mut PageTable {
                // SAFETY: a page-table frame of this address space, through the map.
                unsafe { &mut *(offset + frame.start_address().as_u64()).as_mut_ptr() }
            };
            let mut free = Vec::new();
            for l4 in table(self.level_4).iter().take(256) {
                let Ok(l3_frame) = l4.frame() else { continue };
                for l3 in table(l3_frame).iter() {
                    let Ok(l2_frame) = l3.frame() else { continue };
                    for l2 in table(l2_frame).iter() {
                        let Ok(l1_frame) = l2.frame() else { continue };
                        free.extend(table(l1_frame).iter().filter_map(|e| e.frame().ok()));
                        free.push(l1_frame);
                    }
                    free.push(l2_frame);
                }
                free.push(l3_frame);
            }
            free.push(self.level_4);
            for frame in free {
                // SAFETY: each frame belonged to this address space alone and is unmapped
                // with it.
                unsafe { m.frames.deallocate_frame(frame) };
            }
        })
    }
}
