//! Free lists of small blocks in front of the heap's first-fit allocator: Linux's kmalloc
//! caches (`kmalloc-16` … `kmalloc-2k`) in miniature. A small allocation is rounded up to
//! its class; a freed block of a class is kept on the class's list and handed out again by
//! the next allocation of that class, in a few instructions. The first-fit allocator walks
//! its list of holes on every call, and the kernel's paths allocate and free the same small
//! objects over and over (a task, its name, a wait entry, a vector of pages): with it alone,
//! allocation cost more than the page-table work of an `execve` (`cargo boot run --profile`).
//!
//! What it does not do: give memory back to the heap while a list is below
//! [`MAX_CACHED`] (at most ~260 KiB sit idle in all lists together), or serve alignments
//! above [`CLASS_ALIGN`] (those go to the first-fit allocator directly).

use core::alloc::Layout;
use core::ptr::NonNull;

/// The block sizes, in bytes.
pub const CLASSES: [usize; 8] = [16, 32, 64, 128, 256, 512, 1024, 2048];
/// Every class block is aligned to this (the most any `Box`/`Vec` of plain data needs).
pub const CLASS_ALIGN: usize = 16;
/// The most free blocks one class keeps; more go back to the heap.
pub const MAX_CACHED: usize = 64;

/// The class serving `layout`, if it is small enough.
pub fn class_of(layout: Layout) -> Option<usize> {
    if layout.align() > CLASS_ALIGN {
        return None;
    }
    CLASSES.iter().position(|&size| layout.size() <= size)
}

/// The layout the heap gives a block of class `class`.
pub fn class_layout(class: usize) -> Layout {
    Layout::from_size_align(CLASSES[class], CLASS_ALIGN).unwrap_or(Layout::new::<u128>())
}

/// The free blocks of each class, each linked to the next through its first 8 bytes.
pub struct SizeClasses {
    heads: [Option<NonNull<u8>>; CLASSES.len()],
    counts: [usize; CLASSES.len()],
}

// SAFETY: the lists hold free heap blocks that nothing else refers to; the structure lives
// behind the heap's lock, so one CPU at a time touches them.
unsafe impl Send for SizeClasses {}

impl Default for SizeClasses {
    fn default() -> Self {
        Self::new()
    }
}

impl SizeClasses {
    pub const fn new() -> Self {
        SizeClasses {
            heads: [None; CLASSES.len()],
            counts: [0; CLASSES.len()],
        }
    }

    /// A free block of class `class`, if one is kept.
    pub fn pop(&mut self, class: usize) -> Option<NonNull<u8>> {
        let block = self.heads[class]?;
        // SAFETY: a kept block starts with the link `push` wrote (blocks are 16-aligned and
        // at least 16 bytes).
        self.heads[class] = unsafe { block.cast::<Option<NonNull<u8>>>().read() };
        self.counts[class] -= 1;
        Some(block)
    }

    /// Keeps `block`, a freed block of class `class`; false (and nothing kept) if the class
    /// has [`MAX_CACHED`] already.
    ///
    /// # Safety
    /// `block` was allocated with [`class_layout`]`(class)` and is no longer used by anyone.
    pub unsafe fn push(&mut self, class: usize, block: NonNull<u8>) -> bool {
        if self.counts[class] == MAX_CACHED {
            return false;
        }
        // SAFETY: the caller gives the block up; it is large and aligned enough for a link.
        unsafe { block.cast::<Option<NonNull<u8>>>().write(self.heads[class]) };
        self.heads[class] = Some(block);
        self.counts[class] += 1;
        true
    }

    /// Bytes kept in the lists: free, though the first-fit allocator counts them as used.
    pub fn kept_bytes(&self) -> usize {
        self.counts
            .iter()
            .zip(CLASSES)
            .map(|(n, size)| n * size)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test_case]
    fn small_layouts_round_up_to_their_class() {
        assert_eq!(class_of(Layout::new::<u8>()), Some(0));
        assert_eq!(class_of(Layout::from_size_align(17, 8).unwrap()), Some(1));
        assert_eq!(
            class_of(Layout::from_size_align(2048, 16).unwrap()),
            Some(7)
        );
        assert_eq!(class_of(Layout::from_size_align(2049, 8).unwrap()), None);
        assert_eq!(class_of(Layout::from_size_align(64, 64).unwrap()), None);
    }

    /// A freed block comes back on the next allocation of its class, and the heap's
    /// in-use count does not count kept blocks.
    #[test_case]
    fn a_freed_block_is_reused_and_not_counted() {
        use alloc::boxed::Box;
        let before = super::super::heap::stats().used;
        let first = Box::new([1u8; 100]);
        let at = &*first as *const [u8; 100];
        drop(first);
        assert_eq!(super::super::heap::stats().used, before);
        let second = Box::new([2u8; 120]);
        assert_eq!(&*second as *const [u8; 120] as *const u8, at.cast::<u8>());
    }
}
