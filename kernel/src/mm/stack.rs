//! Kernel stacks for tasks, each with an unmapped guard page below it: a task that overflows
//! its stack faults on the guard page (and the double-fault handler, on its own stack,
//! reports it) instead of silently overwriting its neighbour.
//!
//! Stacks live in their own region of virtual memory, in fixed-size slots (guard page +
//! stack pages); slots and frames are reused when stacks are freed, so spawning and exiting
//! thousands of tasks leaves memory where it was.
//!
//! The last [`CACHED_STACKS`] stacks freed stay mapped, and the next new stacks take them
//! as they are: Linux's `cached_stacks` (kernel/fork.c) does the same, because mapping 16
//! pages and unmapping them again was a large part of what a `vfork` + `exit` cost.
//! [`drop_cached`] lets them go (the memory report does, so every frame must be back).

use super::{MEMORY, MemoryError};
use crate::arch::paging::VirtAddr;
use crate::arch::paging::{
    FrameAllocator, FrameDeallocator, Mapper, Page, PageTableFlags as F, Size4KiB,
};
use crate::sync::{Rank, SpinLock};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

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

/// How many freed stacks stay mapped for the next tasks (Linux's `NR_CACHED_STACKS` is 2).
pub const CACHED_STACKS: usize = 4;

/// The stack slots: those free and unmapped, those free and still mapped (the cache), and
/// how many slots have ever been handed out.
struct Slots {
    free: Vec<u64>,
    cached: Vec<u64>,
    count: u64,
}

static SLOTS: SpinLock<Slots> = SpinLock::new(
    Rank::Stacks,
    Slots {
        free: Vec::new(),
        cached: Vec::new(),
        count: 0,
    },
);

impl KernelStack {
    /// Maps a fresh stack (its pages, not its guard page).
    pub fn new() -> Result<KernelStack, MemoryError> {
        crate::arch::irq::without(|| {
            let slot = {
                let mut slots = SLOTS.lock();
                if let Some(slot) = slots.cached.pop() {
                    return Ok(KernelStack { slot });
                }
                match slots.free.pop() {
                    Some(slot) => slot,
                    None => {
                        slots.count += 1;
                        slots.count - 1
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
    let slots = SLOTS.try_lock().map_or(u64::MAX, |s| s.count);
    address >= STACKS_BASE
        && (address - STACKS_BASE) / SLOT_BYTES < slots
        && (address - STACKS_BASE) % SLOT_BYTES < PAGE
}

/// How many times a stack has been unmapped: each CPU flushes its TLB before it next runs a
/// task if this moved since it last did ([`catch_up_tlb`]).
static UNMAPS: AtomicU64 = AtomicU64::new(0);

/// Before this CPU switches to a task: if a kernel stack was unmapped since this CPU last
/// flushed its TLB, it flushes now (Linux's lazy TLB generations, `flush_tlb_kernel_range`
/// in spirit). The CPU that unmaps a stack flushes its own TLB; another may still hold a
/// translation of it — a task that ran there and moved, then exited — and a stack mapped
/// later in the same slot would reach, through it, the old frames, freed. A CPU touches a
/// task's stack only by running the task (the CPU that maps a stack flushes those pages
/// as it maps them), so a flush before each switch that needs one is enough, and no CPU
/// waits for another. Stack pages are not global: reloading CR3 drops them.
pub fn catch_up_tlb() {
    let unmaps = UNMAPS.load(Ordering::Acquire);
    let cpu = crate::percpu::this_cpu();
    if cpu.seen_stack_unmaps() != unmaps {
        crate::arch::paging::flush_tlb_all();
        cpu.set_seen_stack_unmaps(unmaps);
    }
}

impl KernelStack {
    /// Unmaps the stack's pages and frees their frames.
    fn unmap(&self) {
        let mut guard = MEMORY.lock();
        if let Some(memory) = guard.as_mut() {
            for page in self.pages() {
                if let Ok((frame, flush)) = memory.mapper.unmap(page) {
                    flush.flush();
                    // SAFETY: the page was this stack's only mapping of the frame and it is
                    // gone; no task runs on a stack being unmapped.
                    unsafe { memory.frames.deallocate_frame(frame) };
                }
            }
        }
        // This CPU flushed the pages it unmapped: if it had caught up with every unmap
        // before, it has with this one too (on one CPU, no flush is ever added).
        let before = UNMAPS.fetch_add(1, Ordering::Release);
        let cpu = crate::percpu::this_cpu();
        if cpu.seen_stack_unmaps() == before {
            cpu.set_seen_stack_unmaps(before + 1);
        }
    }
}

impl Drop for KernelStack {
    /// Keeps the stack mapped for the next task if the cache has room; else unmaps it.
    fn drop(&mut self) {
        crate::arch::irq::without(|| {
            let mut slots = SLOTS.lock();
            if slots.cached.len() < CACHED_STACKS {
                slots.cached.push(self.slot);
                return;
            }
            drop(slots);
            self.unmap();
            SLOTS.lock().free.push(self.slot);
        });
    }
}

/// Unmaps the cached stacks: afterwards every stack frame in use belongs to a live task.
pub fn drop_cached() {
    crate::arch::irq::without(|| {
        let cached = core::mem::take(&mut SLOTS.lock().cached);
        for &slot in &cached {
            let stack = core::mem::ManuallyDrop::new(KernelStack { slot });
            stack.unmap();
        }
        SLOTS.lock().free.extend(cached);
    });
}
