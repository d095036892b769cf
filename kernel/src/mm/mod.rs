//! Memory management: the physical frame allocator, the kernel page tables as the bootloader
//! left them (all of physical memory mapped at an offset), and the kernel heap.

pub mod frames;
pub mod heap;
pub mod page_cache;
pub mod shares;
pub mod size_classes;
pub mod stack;

use crate::arch::paging::{OffsetPageTable, PageTable, Translate};
use crate::arch::paging::{PhysAddr, VirtAddr};
use crate::sync::{Rank, SpinLock};
use bootloader_api::BootInfo;
use bootloader_api::info::MemoryRegionKind;
use core::fmt;
use frames::BootFrameAllocator;

/// The kernel's page tables and frame allocator, for whoever maps memory after boot.
pub struct Memory {
    pub mapper: OffsetPageTable<'static>,
    pub frames: BootFrameAllocator,
    /// User frames with more than one owner: shared copy-on-write by forked processes, or
    /// held by the page cache and mapped by programs.
    pub shares: shares::Shares,
    /// Read-only pages of the initramfs's files, kept for the next `execve`.
    pub page_cache: page_cache::PageCache,
}

impl Memory {
    /// One owner gives up a user frame; it is freed if that owner was the last.
    pub fn release_user_frame(&mut self, frame: crate::arch::paging::PhysFrame) {
        use crate::arch::paging::FrameDeallocator;
        if self.shares.release(frame) {
            // SAFETY: the last owner has unmapped it; no mapping refers to it any more.
            unsafe { self.frames.deallocate_frame(frame) };
        }
    }

    /// The frame holding page `index` of `file` (an initramfs file), read in on first use
    /// and kept in the page cache; `None` if no frame is left. The caller maps it and so
    /// becomes one more owner ([`shares::Shares::share`]).
    pub fn cached_file_page(
        &mut self,
        file: &'static [u8],
        index: u64,
    ) -> Option<crate::arch::paging::PhysFrame> {
        use crate::arch::paging::FrameAllocator;
        if let Some(frame) = self.page_cache.get(file, index) {
            return Some(frame);
        }
        let frame = self.frames.allocate_frame()?;
        let at = self.mapper.phys_offset() + frame.start_address().as_u64();
        // SAFETY: a fresh frame, mapped nowhere else, through the physical-memory map.
        page_cache::fill(unsafe { &mut *at.as_mut_ptr() }, file, index);
        self.page_cache.insert(file, index, frame);
        Some(frame)
    }

    /// Lets go of every cached page (Linux's `echo 1 > /proc/sys/vm/drop_caches`): a frame
    /// no program maps any more is freed.
    pub fn drop_page_cache(&mut self) {
        let Memory {
            page_cache,
            shares,
            frames,
            ..
        } = self;
        page_cache.clear(|frame| {
            if shares.release(frame) {
                use crate::arch::paging::FrameDeallocator;
                // SAFETY: the cache was the last owner: nothing maps the frame any more.
                unsafe { frames.deallocate_frame(frame) };
            }
        });
    }
}

/// Set by [`init`].
pub static MEMORY: SpinLock<Option<Memory>> = SpinLock::new(Rank::Memory, None);

/// What [`init`] found and did, for the boot self-check.
#[derive(Debug, Clone, Copy)]
pub struct MemoryReport {
    pub regions: usize,
    pub usable_bytes: u64,
    pub largest_usable_bytes: u64,
    pub heap_bytes: u64,
}

impl fmt::Display for MemoryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} regions, {} MiB usable (largest {} MiB), heap {} MiB at {:#x}",
            self.regions,
            self.usable_bytes >> 20,
            self.largest_usable_bytes >> 20,
            self.heap_bytes >> 20,
            heap::HEAP_START
        )
    }
}

/// Why memory could not be set up; [`crate::init`] prints it in one line.
#[derive(Debug)]
pub enum MemoryError {
    NoPhysicalMemoryMapping,
    TooLittleRam {
        usable_bytes: u64,
    },
    /// A page could not be mapped (the heap, or a device page); says which.
    Mapping(&'static str),
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoPhysicalMemoryMapping => {
                write!(f, "the bootloader did not map physical memory")
            }
            Self::TooLittleRam { usable_bytes } => write!(
                f,
                "only {} MiB of usable RAM; cfslab needs at least {} MiB (give QEMU more with -m)",
                usable_bytes >> 20,
                (2 * heap::MIN_HEAP_BYTES) >> 20
            ),
            Self::Mapping(what) => write!(f, "could not map {what}"),
        }
    }
}

/// Sets up the frame allocator and the heap from the bootloader's memory map.
pub fn init(boot_info: &'static mut BootInfo) -> Result<MemoryReport, MemoryError> {
    let offset = boot_info
        .physical_memory_offset
        .into_option()
        .ok_or(MemoryError::NoPhysicalMemoryMapping)?;
    let offset = VirtAddr::new(offset);
    let regions: &'static [_] = &boot_info.memory_regions;
    let usable = regions
        .iter()
        .filter(|r| r.kind == MemoryRegionKind::Usable);
    let usable_bytes: u64 = usable.clone().map(|r| r.end - r.start).sum();
    let largest_usable_bytes = usable.map(|r| r.end - r.start).max().unwrap_or(0);
    let heap_bytes =
        heap::size_for(usable_bytes).ok_or(MemoryError::TooLittleRam { usable_bytes })?;

    let level_4_frame = crate::arch::paging::active_level_4_frame();
    let level_4: *mut PageTable = (offset + level_4_frame.start_address().as_u64()).as_mut_ptr();
    // SAFETY: the bootloader maps all physical memory at `offset` (we asked for it in
    // BOOTLOADER_CONFIG), CR3 holds the active level-4 table, and this is the only
    // OffsetPageTable ever made from it; its usable regions are unused by the bootloader.
    let mut memory = unsafe {
        Memory {
            mapper: OffsetPageTable::new(&mut *level_4, offset),
            frames: BootFrameAllocator::new(regions, offset),
            shares: shares::Shares::new(),
            page_cache: page_cache::PageCache::new(),
        }
    };
    heap::init(&mut memory.mapper, &mut memory.frames, heap_bytes)
        .map_err(|_| MemoryError::Mapping("the kernel heap"))?;
    *MEMORY.lock() = Some(memory);
    Ok(MemoryReport {
        regions: regions.len(),
        usable_bytes,
        largest_usable_bytes,
        heap_bytes,
    })
}

/// Maps the 4 KiB device page at `phys` at `virt`, uncached (memory-mapped I/O).
pub fn map_mmio(phys: PhysAddr, virt: VirtAddr) -> Result<(), MemoryError> {
    use crate::arch::paging::{Mapper, Page, PageTableFlags as F, PhysFrame, Size4KiB};
    let mut guard = MEMORY.lock();
    let memory = guard.as_mut().ok_or(MemoryError::NoPhysicalMemoryMapping)?;
    let page = Page::<Size4KiB>::containing_address(virt);
    let frame = PhysFrame::containing_address(phys);
    let flags = F::PRESENT | F::WRITABLE | F::NO_CACHE | F::WRITE_THROUGH | F::NO_EXECUTE;
    // SAFETY: the caller names a device page; mapping it at an otherwise unused virtual
    // address aliases no Rust-owned memory.
    let flush = unsafe { memory.mapper.map_to(page, frame, flags, &mut memory.frames) };
    flush
        .map_err(|_| MemoryError::Mapping("a device page"))?
        .flush();
    Ok(())
}

/// Maps the low page at physical `phys` at the same virtual address, executable, in the
/// page tables running now (the boot CPU's, before any program): an application processor
/// turns paging on while it runs there (`crate::cpus`). [`unmap_identity`] takes it back.
pub fn map_identity(phys: PhysAddr) -> Result<(), MemoryError> {
    use crate::arch::paging::{Mapper, Page, PageTableFlags as F, PhysFrame, Size4KiB};
    let mut guard = MEMORY.lock();
    let memory = guard.as_mut().ok_or(MemoryError::NoPhysicalMemoryMapping)?;
    let page = Page::<Size4KiB>::containing_address(VirtAddr::new(phys.as_u64()));
    let frame = PhysFrame::containing_address(phys);
    // SAFETY: the page is one the frame allocator never hands out (low memory), and the
    // lower half holds no mapping of the kernel's own before the first program.
    let flush = unsafe {
        memory
            .mapper
            .map_to(page, frame, F::PRESENT | F::WRITABLE, &mut memory.frames)
    };
    flush
        .map_err(|_| MemoryError::Mapping("the trampoline page"))?
        .flush();
    Ok(())
}

/// Takes back a mapping [`map_identity`] made.
pub fn unmap_identity(phys: PhysAddr) {
    use crate::arch::paging::{Mapper, Page, Size4KiB};
    let mut guard = MEMORY.lock();
    if let Some(memory) = guard.as_mut() {
        let page = Page::<Size4KiB>::containing_address(VirtAddr::new(phys.as_u64()));
        if let Ok((_, flush)) = memory.mapper.unmap(page) {
            flush.flush();
        }
    }
}

/// Where all physical memory is mapped (the bootloader's `physical_memory` mapping).
pub fn physical_offset() -> u64 {
    MEMORY
        .lock()
        .as_ref()
        .map_or(0, |m| m.mapper.phys_offset().as_u64())
}

/// Lets go of what the kernel keeps only to be faster next time — the page cache and the
/// cached task stacks (Linux's `drop_caches`, in spirit): afterwards every frame in use
/// belongs to something alive, which is what a leak check wants to count.
pub fn drop_caches() {
    if let Some(memory) = MEMORY.lock().as_mut() {
        memory.drop_page_cache();
    }
    stack::drop_cached();
}

/// Frames handed out and not yet returned (the kernel's own and every process's).
pub fn frames_in_use() -> u64 {
    MEMORY
        .lock()
        .as_ref()
        .map_or(0, |m| m.frames.frames_in_use())
}

/// Memory as `/proc/meminfo` reports it, in frames: every usable frame, those free, and
/// those the page cache holds.
pub fn frame_counts() -> (u64, u64, u64) {
    MEMORY.lock().as_ref().map_or((0, 0, 0), |m| {
        let total = m.frames.usable_frames();
        let used = m.frames.frames_in_use();
        (total, total.saturating_sub(used), m.page_cache.len() as u64)
    })
}

/// The physical address `addr` is mapped to, if it is mapped.
pub fn translate(addr: VirtAddr) -> Option<PhysAddr> {
    MEMORY.lock().as_ref()?.mapper.translate_addr(addr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::paging::{FrameAllocator, FrameDeallocator};

    #[test_case]
    fn freed_frames_are_reused_first() {
        let mut guard = MEMORY.lock();
        let frames = &mut guard.as_mut().unwrap().frames;
        let in_use = frames.frames_in_use();
        let a = frames.allocate_frame().unwrap();
        let b = frames.allocate_frame().unwrap();
        assert_ne!(a, b);
        // SAFETY: a and b were just allocated and never mapped.
        unsafe {
            frames.deallocate_frame(a);
            frames.deallocate_frame(b);
        }
        assert_eq!(frames.frames_in_use(), in_use);
        // Last freed, first reused.
        assert_eq!(frames.allocate_frame(), Some(b));
        assert_eq!(frames.allocate_frame(), Some(a));
        // SAFETY: as above.
        unsafe {
            frames.deallocate_frame(a);
            frames.deallocate_frame(b);
        }
    }

    #[test_case]
    fn the_heap_is_mapped_and_an_unused_slot_is_not() {
        assert!(translate(VirtAddr::new(heap::HEAP_START)).is_some());
        assert!(translate(VirtAddr::new(0x5555_0000_0000)).is_none());
    }
}
