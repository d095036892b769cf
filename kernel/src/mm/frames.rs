//! The physical frame allocator: hands out 4 KiB frames from the usable regions of the
//! bootloader's memory map, and takes them back.
//!
//! Fresh frames come from a bump pointer that walks the usable regions in order; freed frames
//! go on a free list threaded *through the frames themselves* (the first 8 bytes of a free
//! frame hold the address of the next one), reached through the bootloader's mapping of all
//! physical memory. So the allocator needs no memory of its own, which is what lets it exist
//! before the heap does.
//!
//! Page tables that a process gives back empty go on a second list, of frames known to hold
//! zeros (Linux's page-table quicklists, 2.6.22–5.4): a new table taken from it needs no
//! zeroing, which is most of what making a table costs (512 stores; an `execve` makes half
//! a dozen tables and its exit frees as many).
//!
//! The first mebibyte is never handed out, though the firmware calls most of it usable: the
//! application processors start there in real mode (their trampoline page, `crate::cpus`),
//! and the BIOS's data lies there. Linux reserves it whole for the same reasons (since 5.13,
//! "x86/setup: always reserve the first 1M of RAM").

use crate::arch::paging::{FrameAllocator, FrameDeallocator, PhysFrame, Size4KiB};
use crate::arch::paging::{PhysAddr, VirtAddr};
use bootloader_api::info::{MemoryRegion, MemoryRegionKind};

const FRAME_SIZE: u64 = 4096;

/// Below this physical address nothing is handed out (see the module's docs).
pub const LOW_MEMORY_END: u64 = 0x10_0000;

/// Frame allocator over the boot memory map.
pub struct BootFrameAllocator {
    regions: &'static [MemoryRegion],
    /// Index of the region the bump pointer is in.
    region: usize,
    /// Next never-used frame address (inside `regions[region]`).
    next: u64,
    /// Head of the list of freed frames.
    free_list: Option<PhysFrame>,
    /// Head of the list of freed frames that hold zeros but for their link word.
    zeroed_list: Option<PhysFrame>,
    /// Where physical address 0 is mapped in virtual memory.
    physical_memory_offset: VirtAddr,
    in_use: u64,
}

impl BootFrameAllocator {
    /// An allocator over the `Usable` entries of `regions`.
    ///
    /// # Safety
    /// Every region marked `Usable` must really be unused, and all physical memory must be
    /// mapped at `physical_memory_offset`: the free list writes into freed frames there.
    pub unsafe fn new(regions: &'static [MemoryRegion], physical_memory_offset: VirtAddr) -> Self {
        let mut allocator = BootFrameAllocator {
            regions,
            region: 0,
            next: 0,
            free_list: None,
            zeroed_list: None,
            physical_memory_offset,
            in_use: 0,
        };
        allocator.enter_region(0);
        allocator
    }

    /// Moves the bump pointer to the first usable region at or after `index`.
    fn enter_region(&mut self, index: usize) {
        self.region = (index..self.regions.len())
            .find(|&i| self.regions[i].kind == MemoryRegionKind::Usable)
            .unwrap_or(self.regions.len());
        if let Some(region) = self.regions.get(self.region) {
            self.next = region
                .start
                .max(LOW_MEMORY_END)
                .next_multiple_of(FRAME_SIZE);
        }
    }

    fn bump(&mut self) -> Option<PhysFrame> {
        while let Some(region) = self.regions.get(self.region) {
            if self.next + FRAME_SIZE <= region.end {
                let frame = PhysFrame::containing_address(PhysAddr::new(self.next));
                self.next += FRAME_SIZE;
                return Some(frame);
            }
            self.enter_region(self.region + 1);
        }
        None
    }

    fn link_of(&self, frame: PhysFrame) -> *mut u64 {
        (self.physical_memory_offset + frame.start_address().as_u64()).as_mut_ptr()
    }

    /// Takes the head of the list at `head`: its link word names the next.
    ///
    /// # Safety
    /// `head` is on one of this allocator's lists (its first word written by a dealloc).
    unsafe fn pop(&self, head: PhysFrame) -> Option<PhysFrame> {
        // SAFETY: the caller's promise; all physical memory is mapped at the offset.
        let next = unsafe { self.link_of(head).read() };
        (next != 0).then(|| PhysFrame::containing_address(PhysAddr::new(next)))
    }

    /// A frame that holds zeros: a table given back empty ([`Self::deallocate_zeroed`]), or
    /// else any frame, zeroed here.
    pub fn allocate_zeroed(&mut self) -> Option<PhysFrame> {
        if let Some(head) = self.zeroed_list {
            // SAFETY: `head` is on the zeroed list; its link word is its only non-zero
            // word, cleared here.
            unsafe {
                self.zeroed_list = self.pop(head);
                self.link_of(head).write(0);
            }
            self.in_use += 1;
            return Some(head);
        }
        self.allocate_cleared()
    }

    /// Any frame ([`FrameAllocator::allocate_frame`]), zeroed here: for a user page
    /// (`AddressSpace::map_zeroed`; the zeroed list is the page tables', and gives a frame
    /// only when no other is left), and for a table when that list is empty.
    pub fn allocate_cleared(&mut self) -> Option<PhysFrame> {
        let frame = self.allocate_frame()?;
        // SAFETY: a frame just handed out, mapped at the offset, used by nothing yet.
        unsafe { core::ptr::write_bytes(self.link_of(frame).cast::<u8>(), 0, FRAME_SIZE as usize) };
        Some(frame)
    }

    /// Gives back `frame`, which holds zeros, for [`Self::allocate_zeroed`].
    ///
    /// # Safety
    /// As [`FrameDeallocator::deallocate_frame`]; and every byte of `frame` is zero (a
    /// debug build checks it): a frame taken as a page table is not cleared again, so a
    /// stray entry would map another process's page.
    pub unsafe fn deallocate_zeroed(&mut self, frame: PhysFrame) {
        let link = self.link_of(frame);
        #[cfg(debug_assertions)]
        {
            // SAFETY: the caller gives the frame back; it is mapped at the offset.
            let words = unsafe { core::slice::from_raw_parts(link, FRAME_SIZE as usize / 8) };
            debug_assert!(words.iter().all(|&w| w == 0), "{frame:?} is not zeroed");
        }
        let next = self.zeroed_list.map_or(0, |f| f.start_address().as_u64());
        // SAFETY: as in `deallocate_frame`.
        unsafe { link.write(next) };
        self.zeroed_list = Some(frame);
        self.in_use -= 1;
    }

    /// Frames handed out and not yet returned.
    pub fn frames_in_use(&self) -> u64 {
        self.in_use
    }

    /// Every usable frame of the memory map (what `/proc/meminfo` calls MemTotal).
    pub fn usable_frames(&self) -> u64 {
        self.regions
            .iter()
            .filter(|r| r.kind == MemoryRegionKind::Usable)
            .map(|r| {
                let start = r.start.max(LOW_MEMORY_END);
                (r.end / FRAME_SIZE).saturating_sub(start.div_ceil(FRAME_SIZE))
            })
            .sum()
    }
}

// SAFETY: `allocate_frame` returns each usable frame at most once until it is deallocated:
// the bump pointer only moves forward, and a frame is on the free list only after it was
// handed back.
unsafe impl FrameAllocator<Size4KiB> for BootFrameAllocator {
    fn allocate_frame(&mut self) -> Option<PhysFrame> {
        let frame = if let Some(head) = self.free_list {
            // SAFETY: `head` is a free frame, whose first word was written by
            // `deallocate_frame` with the next free frame.
            self.free_list = unsafe { self.pop(head) };
            head
        } else if let Some(fresh) = self.bump() {
            fresh
        } else {
            // Memory runs out: the zeroed tables are frames like any other.
            let head = self.zeroed_list?;
            // SAFETY: `head` is on the zeroed list.
            self.zeroed_list = unsafe { self.pop(head) };
            head
        };
        self.in_use += 1;
        Some(frame)
    }
}

impl FrameDeallocator<Size4KiB> for BootFrameAllocator {
    /// # Safety
    /// `frame` must have come from this allocator and must no longer be mapped or used.
    unsafe fn deallocate_frame(&mut self, frame: PhysFrame) {
        // Frame 0 is never handed out (low memory is not), so 0 can mean "end of list".
        let next = self.free_list.map_or(0, |f| f.start_address().as_u64());
        // SAFETY: the caller gives the frame back, so nothing else uses its memory, and all
        // physical memory is mapped at the offset (see `new`).
        unsafe { self.link_of(frame).write(next) };
        self.free_list = Some(frame);
        self.in_use -= 1;
    }
}
