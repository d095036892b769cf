//! The kernel heap: a fixed range of virtual memory backed by frames from the frame allocator
//! and managed by `linked_list_allocator`'s first-fit allocator, with free lists of small
//! blocks in front of it ([`super::size_classes`]), so that `alloc`'s `Box`, `Vec` and
//! `BTreeMap` work, and small ones cheaply.
//!
//! The size is chosen from the memory map at boot (a quarter of usable RAM, between
//! [`MIN_HEAP_BYTES`] and [`MAX_HEAP_BYTES`]); a machine too small for the minimum is told so
//! in one line instead of failing later in some allocation.

use super::size_classes::{SizeClasses, class_layout, class_of};
use crate::arch::paging::MapToError;
use crate::arch::paging::VirtAddr;
use crate::arch::paging::{FrameAllocator, Mapper, Page, PageTableFlags, Size4KiB};
use crate::sync::{Rank, SpinLock};
use core::alloc::{GlobalAlloc, Layout};
use core::ptr::NonNull;
use linked_list_allocator::Heap;

/// Where the heap starts: its own level-4 slot (384) in the kernel's upper half, far from
/// the bootloader's mappings (which start at slot 256, `DYNAMIC_BASE`).
pub const HEAP_START: u64 = 0xffff_c000_0000_0000;
/// The heap is never smaller than this: the kernel's tests and programs count on it.
pub const MIN_HEAP_BYTES: u64 = 16 << 20;
/// Nor larger than this: mapping more only slows the boot down.
pub const MAX_HEAP_BYTES: u64 = 128 << 20;

/// The first-fit allocator and the free lists in front of it, under one lock.
struct KernelHeap {
    first_fit: Heap,
    classes: SizeClasses,
}

impl KernelHeap {
    fn alloc(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        match class_of(layout) {
            Some(class) => self
                .classes
                .pop(class)
                .or_else(|| self.first_fit.allocate_first_fit(class_layout(class)).ok()),
            None => self.first_fit.allocate_first_fit(layout).ok(),
        }
    }

    /// # Safety
    /// `ptr` came from [`Self::alloc`] with `layout` and is no longer used.
    unsafe fn dealloc(&mut self, ptr: NonNull<u8>, layout: Layout) {
        match class_of(layout) {
            // SAFETY: `alloc` gave this block its class's layout; the caller gives it up.
            Some(class) => unsafe {
                if !self.classes.push(class, ptr) {
                    self.first_fit.deallocate(ptr, class_layout(class));
                }
            },
            // SAFETY: as the caller promises, a block of the heap's with this layout.
            None => unsafe { self.first_fit.deallocate(ptr, layout) },
        }
    }
}

/// The heap's lock is an IRQ-safe spin lock: if an interrupt handler allocated (the timer
/// code does) while the interrupted code held it, the CPU would spin forever. So every
/// allocation and free runs with interrupts off.
struct IrqSafeHeap(SpinLock<KernelHeap>);

// SAFETY: blocks come from the first-fit allocator (directly or through a free list that
// only holds blocks it gave out), which hands out each byte once until it is freed.
unsafe impl GlobalAlloc for IrqSafeHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.0
            .lock()
            .alloc(layout)
            .map_or(core::ptr::null_mut(), NonNull::as_ptr)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let Some(ptr) = NonNull::new(ptr) else {
            return;
        };
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract: `ptr` came from
        // `alloc` with `layout`.
        unsafe { self.0.lock().dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: IrqSafeHeap = IrqSafeHeap(SpinLock::new(
    Rank::Heap,
    KernelHeap {
        first_fit: Heap::empty(),
        classes: SizeClasses::new(),
    },
));

/// The heap size for `usable_bytes` of usable RAM, or `None` if the minimum does not fit.
pub fn size_for(usable_bytes: u64) -> Option<u64> {
    // Leave room for page tables, task stacks and the frames user processes allocate.
    let size = (usable_bytes / 4).clamp(MIN_HEAP_BYTES, MAX_HEAP_BYTES);
    (usable_bytes >= 2 * MIN_HEAP_BYTES).then_some(size & !0xfff)
}

/// Maps `size` bytes at [`HEAP_START`] and hands them to the allocator.
pub fn init(
    mapper: &mut impl Mapper<Size4KiB>,
    frames: &mut impl FrameAllocator<Size4KiB>,
    size: u64,
) -> Result<(), MapToError<Size4KiB>> {
    let start = VirtAddr::new(HEAP_START);
    let first = Page::<Size4KiB>::containing_address(start);
    let last = Page::containing_address(start + size - 1);
    let flags = PageTableFlags::PRESENT | PageTableFlags::WRITABLE | PageTableFlags::NO_EXECUTE;
    for page in Page::range_inclusive(first, last) {
        let frame = frames
            .allocate_frame()
            .ok_or(MapToError::FrameAllocationFailed)?;
        // SAFETY: the heap range is used by nothing else, and `frame` is a fresh frame that
        // nothing else maps.
        unsafe { mapper.map_to(page, frame, flags, frames)?.flush() };
    }
    // SAFETY: the range was just mapped writable and is handed to the allocator exactly once.
    unsafe {
        ALLOCATOR
            .0
            .lock()
            .first_fit
            .init(start.as_mut_ptr(), size as usize)
    };
    Ok(())
}

/// A snapshot of heap usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapStats {
    /// Bytes the heap manages.
    pub size: usize,
    /// Bytes currently allocated (including the rounding to a block's size or class; not
    /// the free blocks the size classes keep).
    pub used: usize,
}

/// Current heap usage.
pub fn stats() -> HeapStats {
    let heap = ALLOCATOR.0.lock();
    HeapStats {
        size: heap.first_fit.size(),
        used: heap.first_fit.used() - heap.classes.kept_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test_case]
    fn heap_size_is_a_quarter_of_ram_within_bounds() {
        assert_eq!(size_for(256 << 20), Some(64 << 20));
        assert_eq!(size_for(40 << 20), Some(MIN_HEAP_BYTES));
        assert_eq!(size_for(8 << 30), Some(MAX_HEAP_BYTES));
    }

    #[test_case]
    fn too_little_ram_for_the_minimum_heap_is_refused() {
        assert_eq!(size_for(MIN_HEAP_BYTES), None);
    }
}
