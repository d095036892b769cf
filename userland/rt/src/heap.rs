//! The global allocator: blocks carved from 1 MiB `mmap`ed arenas in address order, and a
//! block of their own (`mmap`/`munmap`) for requests over 64 KiB. A freed small block is not
//! reused — the programs here allocate little and exit — but a freed large one goes back to
//! the kernel. One spin flag guards the arena: threads (`clone` with CLONE_VM) share it.

use crate::sys::{nr, syscall6};
use core::alloc::{GlobalAlloc, Layout};
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const ARENA: usize = 1 << 20;
const LARGE: usize = 64 << 10;
const PROT_READ_WRITE: usize = 0x1 | 0x2;
const MAP_PRIVATE_ANONYMOUS: usize = 0x02 | 0x20;

/// `mmap` of `len` fresh zeroed bytes; null on failure.
fn map(len: usize) -> *mut u8 {
    // SAFETY: an anonymous private mapping touches no existing memory.
    let ret = unsafe {
        syscall6(
            nr::MMAP,
            [
                0,
                len,
                PROT_READ_WRITE,
                MAP_PRIVATE_ANONYMOUS,
                usize::MAX,
                0,
            ],
        )
    };
    if (-4095..0).contains(&ret) {
        core::ptr::null_mut()
    } else {
        ret as *mut u8
    }
}

struct Heap {
    lock: AtomicBool,
    next: AtomicUsize,
    end: AtomicUsize,
}

#[global_allocator]
static HEAP: Heap = Heap {
    lock: AtomicBool::new(false),
    next: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
};

// SAFETY: `alloc` returns fresh, suitably aligned memory (a new mapping, or a range of an
// arena past every block handed out before, under the lock) or null; `dealloc` unmaps only
// blocks `alloc` mapped whole, with the length it mapped.
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > LARGE || layout.align() > 4096 {
            return map(layout.size().next_multiple_of(4096));
        }
        while self.lock.swap(true, Ordering::Acquire) {
            core::hint::spin_loop();
        }
        let mut start = self
            .next
            .load(Ordering::Relaxed)
            .next_multiple_of(layout.align());
        if start == 0 || start + layout.size() > self.end.load(Ordering::Relaxed) {
            let arena = map(ARENA);
            if arena.is_null() {
                self.lock.store(false, Ordering::Release);
                return arena;
            }
            start = arena as usize;
            self.end.store(start + ARENA, Ordering::Relaxed);
        }
        self.next.store(start + layout.size(), Ordering::Relaxed);
        self.lock.store(false, Ordering::Release);
        start as *mut u8
    }

    /// Every block is fresh from `mmap`, zeroed by the kernel, and never handed out twice,
    /// so there is nothing to clear (the default would write every byte: 16 KiB for each of
    /// wakeup_latency's thread stacks).
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`; see the comment above for why the memory is already zero.
        unsafe { self.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() > LARGE || layout.align() > 4096 {
            // SAFETY: the block was mapped by `alloc` with this rounded length.
            unsafe {
                syscall6(
                    nr::MUNMAP,
                    [
                        ptr as usize,
                        layout.size().next_multiple_of(4096),
                        0,
                        0,
                        0,
                        0,
                    ],
                )
            };
        }
    }
}
