//! Memory: anonymous private `mmap`, `munmap`, `mprotect`, `brk`. Mappings are placed
//! top-down from `MMAP_TOP`, below the stack; the break grows up from the end of the
//! program's data. Protection is all or nothing: PROT_NONE pages are out of the program's
//! reach (a thread stack's guard page faults), every other protection gives readable and
//! writable memory (the address hint is ignored, MAP_FIXED is not supported).

use super::{errno, space};
use crate::user::address_space::USER_END;

const MAP_PRIVATE: u64 = 0x02;
const MAP_ANONYMOUS: u64 = 0x20;
const PAGE: u64 = 4096;
/// The most one mapping may be (a runaway length gets ENOMEM, not every free frame).
const MAP_MAX: u64 = 1 << 30;

const PROT_NONE: u64 = 0;

pub fn mmap(_addr: u64, len: u64, prot: u64, flags: u64) -> i64 {
    if flags & (MAP_PRIVATE | MAP_ANONYMOUS) != MAP_PRIVATE | MAP_ANONYMOUS {
        // File mappings and shared memory: not in cfslab.
        return -errno::EINVAL;
    }
    if len == 0 {
        return -errno::EINVAL;
    }
    if len > MAP_MAX {
        return -errno::ENOMEM;
    }
    let len = len.next_multiple_of(PAGE);
    let space = space();
    // The layout's lock is a spin lock: held with interrupts off, never across the mapping
    // (a preempted holder would leave a sibling thread spinning).
    let start = {
        let mut layout = space.layout.lock();
        let start = layout.mmap_next - len;
        (start > layout.brk).then(|| {
            layout.mmap_next = start;
            start
        })
    };
    let Some(start) = start else {
        return -errno::ENOMEM;
    };
    match space.map_zeroed(start, len, true) {
        Ok(()) => {
            if prot == PROT_NONE {
                space.set_user_access(start, len, false);
            }
            start as i64
        }
        Err(_) => {
            space.unmap(start, len);
            -errno::ENOMEM
        }
    }
}

pub fn munmap(addr: u64, len: u64) -> i64 {
    if !addr.is_multiple_of(PAGE) || len == 0 || addr.checked_add(len).is_none_or(|e| e > USER_END)
    {
        return -errno::EINVAL;
    }
    space().unmap(addr, len);
    0
}

/// `mprotect(addr, len, prot)`: PROT_NONE takes the pages out of the program's reach, any
/// other protection gives them back; ENOMEM if part of the range is not mapped (as Linux).
pub fn mprotect(addr: u64, len: u64, prot: u64) -> i64 {
    const KNOWN: u64 = 0x7; // PROT_READ | PROT_WRITE | PROT_EXEC
    if !addr.is_multiple_of(PAGE) || prot & !KNOWN != 0 {
        return -errno::EINVAL;
    }
    let Some(end) = len
        .checked_next_multiple_of(PAGE)
        .and_then(|len| addr.checked_add(len))
    else {
        return -errno::ENOMEM;
    };
    if end > USER_END {
        return -errno::ENOMEM;
    }
    let changed = space().set_user_access(addr, end - addr, prot != PROT_NONE);
    if changed < (end - addr) / PAGE {
        return -errno::ENOMEM;
    }
    0
}

/// `brk(addr)`: moves the break to `addr` if it can and returns the break (Linux's raw
/// call returns the old break on failure, which is how callers notice).
pub fn brk(addr: u64) -> i64 {
    let space = space();
    let layout = *space.layout.lock();
    let old = layout.brk;
    if addr < layout.brk_start || addr >= layout.mmap_next || addr - layout.brk_start > MAP_MAX {
        return old as i64;
    }
    let (old_end, new_end) = (old.next_multiple_of(PAGE), addr.next_multiple_of(PAGE));
    if new_end > old_end {
        if space.map_zeroed(old_end, new_end - old_end, true).is_err() {
            space.unmap(old_end, new_end - old_end);
            return old as i64;
        }
    } else if new_end < old_end {
        space.unmap(new_end, old_end - new_end);
    }
    space.layout.lock().brk = addr;
    addr as i64
}
