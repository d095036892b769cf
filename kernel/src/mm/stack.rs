//! Kernel stacks for tasks, each with an unmapped guard page below it: a task that overflows
//! its stack faults on the guard page (and the double-fault handler, on its own stack,
//! reports it) instead of silently overwriting its neighbour.
//!
//! Stacks live in their own region of virtual memory, in fixed-size slots (guard page +
//! stack pages); slots and frames are reused when stacks are freed, so spawning and exiting
//! thousands of tasks leaves memory where it was.

use super::{MEMORY, MemoryError};
use alloc::vec::Vec;
use spin::Mutex;
use x86_64::VirtAddr;
use x86_64::structures::paging::{
    FrameAllocator, FrameDeallocator, Mapper, Page, PageTableFlags as F, Size4KiB,
};

/// Where the stack slots begin (its own level-4 slot, 448, in the kernel's upper half).
pub const STACKS_BASE: u64 = 0xffff_e000_0000_0000;
/// Usable bytes of each stack. Unoptimised debug builds need a generous amount.
pub const STACK_BYTES: u64 = 64 * 1024;
const PAGE: u64 = 4096;
const SLOT_BYTES: u64 = STACK_BYTES + PAGE;

/// A mapped kernel stack; unmapped and recycled on drop.
#[derive(Debug)]
pub struct KernelStack {
    slot: u64,
}

static FREE_SLOTS: Mutex<(Vec<u64>, u64)> = Mutex::new((Vec::new(), 0));

impl KernelStack {
    /// Maps a fresh stack (its pages, not its guard page).
    pub fn new() -> Result<KernelStack, MemoryError> {
        x86_64::instructions::interrupts::without_interrupts(|| {
            let slot = {
                let mut free = FREE_SLOTS.lock();
                match free.0.pop() {
                    Some(slot) => slot,
                    None => {
                        free.1 += 1;
                        free.1 - 1
                    }
                }
            };
            let stack = KernelStack { slot };
            let mut guard = MEMORY.lock();
            let memory = guard.as_mut().ok_or(MemoryError::NoPhysicalMemoryMapping)?;
            for page in stack.pages() {
                let frame = memory
                    .frames
                    .allocate_frame()
                    .ok_or(MemoryError::Mapping("a task stack"))?;
                let flags = F::PRESENT | F::WRITABLE | F::NO_EXECUTE;
                // SAFETY: the page lies in this stack's slot, which no one else maps, and
                // the frame is fresh.
                let flush = unsafe { memory.mapper.map_to(page, frame, flags, &mut memory.frames) };
                flush
                    .map_err(|_| MemoryError::Mapping("a task stack"))?
                    .flush();
            }
            Ok(stack)
        })
    }

    fn pages(&self) -> impl Iterator<Item = Page<Size4KiB>> {
        let first = STACKS_BASE + self.slot * SLOT_BYTES + PAGE;
        (0..STACK_BYTES / PAGE)
            .map(move |i| Page::containing_address(VirtAddr::new(first + i * PAGE)))
    }

    /// The highest address of the stack (stacks grow down), 16-byte aligned.
    pub fn top(&self) -> u64 {
        STACKS_BASE + self.slot * SLOT_BYTES + SLOT_BYTES
    }

    /// The guard page's address range.
    pub fn guard(&self) -> core::ops::Range<u64> {
        let start = STACKS_BASE + self.slot * SLOT_BYTES;
        start..start + PAGE
    }
}

/// Is `address` in the guard page of a kernel stack slot (a task stack overflow)?
pub fn is_guard(address: u64) -> bool {
    let slots = FREE_SLOTS.try_lock().map_or(u64::MAX, |f| f.1);
    address >= STACKS_BASE
        && (address - STACKS_BASE) / SLOT_BYTES < slots
        && (address - STACKS_BASE) % SLOT_BYTES < PAGE
}

impl Drop for KernelStack {
    fn drop(&mut self) {
        x86_64::instructions::interrupts::without_interrupts(|| {
            let mut guard = MEMORY.lock();
            if let Some(memory) = guard.as_mut() {
                for page in self.pages() {
                    if let Ok((frame, flush)) = memory.mapper.unmap(page) {
                        flush.flush();
                        // SAFETY: the page was this stack's only mapping of the frame and it
                        // is gone; no task runs on a stack being dropped.
                        unsafe { memory.frames.deallocate_frame(frame) };
                    }
                }
            }
            FREE_SLOTS.lock().0.push(self.slot);
        });
    }
}
