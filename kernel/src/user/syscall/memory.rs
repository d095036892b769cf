//! Memory: anonymous private `mmap`, `munmap`, `mprotect`, `brk`. A mapping goes where
//! the caller asks (`MAP_FIXED`, `MAP_FIXED_NOREPLACE`, or a free hint) or else at the
//! highest free range below `MMAP_TOP`, above the break ([`Mappings`](crate::user::mappings::Mappings), Linux's
//! `get_unmapped_area`); `munmap` gives the range back for reuse. Protection is what x86's
//! page tables say ([`Access`]): PROT_NONE pages are out of the program's reach (a thread
//! stack's guard page faults), pages without PROT_WRITE are read-only, and PROT_EXEC is
//! not told apart from PROT_READ.

use super::{errno, space};
use crate::user::address_space::{AddressSpace, USER_END};
use crate::user::layout::{Layout, MMAP_TOP};
use crate::user::protection::Access;

const MAP_PRIVATE: u64 = 0x02;
const MAP_FIXED: u64 = 0x10;
const MAP_ANONYMOUS: u64 = 0x20;
const MAP_FIXED_NOREPLACE: u64 = 0x10_0000;
const PAGE: u64 = 4096;
/// The most one mapping may be (a runaway length gets ENOMEM, not every free frame).
const MAP_MAX: u64 = 1 << 30;
/// Below this, only root may map (Linux's default `vm.mmap_min_addr`): a null pointer
/// should fault.
const MMAP_MIN_ADDR: u64 = 0x1_0000;

const PROT_NONE: u64 = 0;
const PROT_WRITE: u64 = 0x2;

/// What `prot`'s bits let the program do.
fn access(prot: u64) -> Access {
    match prot {
        PROT_NONE => Access::None,
        p if p & PROT_WRITE != 0 => Access::ReadWrite,
        _ => Access::Read,
    }
}

pub fn mmap(addr: u64, len: u64, prot: u64, flags: u64) -> i64 {
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
    let start = if flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0 {
        match fixed_place(&space, addr, len, flags & MAP_FIXED_NOREPLACE != 0) {
            Ok(start) => start,
            Err(e) => return e,
        }
    } else {
        // The layout's lock is a spin lock: held with interrupts off, never across the
        // mapping (a preempted holder would leave a sibling thread spinning).
        let mut layout = space.layout.lock();
        let Some(start) = free_place(&layout, addr, len) else {
            return -errno::ENOMEM;
        };
        layout.mappings.insert(start, start + len);
        start
    };
    // Writable only if asked, so that no fork in between sees a read-only mapping writable.
    match space.map_zeroed(start, len, access(prot) == Access::ReadWrite) {
        Ok(()) => {
            if access(prot) == Access::None {
                space.protect(start, len, Access::None);
            }
            start as i64
        }
        Err(_) => {
            unmap(&space, start, len);
            -errno::ENOMEM
        }
    }
}

/// Where a mapping without MAP_FIXED goes: at the hint if it is page-aligned and the range
/// is free, between the break and [`MMAP_TOP`]; else at the highest free range there.
fn free_place(layout: &Layout, hint: u64, len: u64) -> Option<u64> {
    let floor = layout.brk.next_multiple_of(PAGE).max(MMAP_MIN_ADDR);
    let hinted = hint & !(PAGE - 1);
    let hint_fits = hinted >= floor
        && hinted.checked_add(len).is_some_and(|end| end <= MMAP_TOP)
        && !layout.mappings.overlaps(hinted, hinted + len);
    if hint_fits {
        return Some(hinted);
    }
    layout.mappings.find_top_down(len, floor, MMAP_TOP)
}

/// MAP_FIXED: `addr` exactly, replacing whatever was mapped there. MAP_FIXED_NOREPLACE:
/// `addr` exactly, EEXIST if anything is mapped there. Linux's errors: EINVAL for an
/// unaligned address, ENOMEM past the user half, EPERM below `mmap_min_addr` unless root.
fn fixed_place(space: &AddressSpace, addr: u64, len: u64, no_replace: bool) -> Result<u64, i64> {
    if !addr.is_multiple_of(PAGE) {
        return Err(-errno::EINVAL);
    }
    if addr.checked_add(len).is_none_or(|end| end > USER_END) {
        return Err(-errno::ENOMEM);
    }
    if addr < MMAP_MIN_ADDR && crate::sched::current_uid() != 0 {
        return Err(-errno::EPERM);
    }
    if no_replace {
        let mut layout = space.layout.lock();
        if layout.mappings.overlaps(addr, addr + len) || space.any_mapped(addr, addr + len) {
            return Err(-errno::EEXIST);
        }
        layout.mappings.insert(addr, addr + len);
    } else {
        // Taken first, so that a sibling thread's mmap cannot be placed there while the
        // old pages go.
        space.layout.lock().mappings.insert(addr, addr + len);
        space.unmap(addr, len);
    }
    Ok(addr)
}

/// Unmaps `start..start + len` and gives its addresses back: the pages first, so that a
/// sibling thread's mmap cannot be placed there while they go.
fn unmap(space: &AddressSpace, start: u64, len: u64) {
    space.unmap(start, len);
    space.layout.lock().mappings.remove(start, start + len);
}

pub fn munmap(addr: u64, len: u64) -> i64 {
    if !addr.is_multiple_of(PAGE) || len == 0 || addr.checked_add(len).is_none_or(|e| e > USER_END)
    {
        return -errno::EINVAL;
    }
    unmap(&space(), addr, len.next_multiple_of(PAGE));
    0
}

/// `mprotect(addr, len, prot)`: the pages become what `prot` allows ([`access`]); ENOMEM if
/// part of the range is not mapped (as Linux).
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
    let changed = space().protect(addr, end - addr, access(prot));
    if changed < (end - addr) / PAGE {
        return -errno::ENOMEM;
    }
    0
}

/// `madvise(addr, len, advice)`: Linux's advice values are accepted; the only one whose
/// answer a program can see is MADV_DONTNEED (and MADV_FREE, MADV_REMOVE, which may act
/// as it), after which the pages read as zeros — done at once here (but for pages the
/// program cannot write, read-only or PROT_NONE, which keep their bytes: cfslab's departure). The rest are hints
/// that cfslab, with no swap and no huge pages, may ignore, as Linux's answer allows.
/// EINVAL for an unaligned address or unknown advice, ENOMEM if part of the range is not
/// mapped.
pub fn madvise(addr: u64, len: u64, advice: u64) -> i64 {
    const MADV_DONTNEED: u64 = 4;
    const MADV_FREE: u64 = 8;
    const MADV_REMOVE: u64 = 9;
    // NORMAL ... PAGEOUT (0-21, but 5-7, which are unused), and MADV_HWPOISON (100).
    let known = matches!(advice, 0..=4 | 8..=21 | 100);
    if !addr.is_multiple_of(PAGE) || !known {
        return -errno::EINVAL;
    }
    let Some(end) = len
        .checked_next_multiple_of(PAGE)
        .and_then(|len| addr.checked_add(len))
        .filter(|&end| end <= USER_END)
    else {
        return -errno::EINVAL;
    };
    let space = space();
    let mapped = if matches!(advice, MADV_DONTNEED | MADV_FREE | MADV_REMOVE) {
        space.zero_range(addr, end)
    } else {
        space.count_mapped(addr, end)
    };
    if mapped < (end - addr) / PAGE {
        return -errno::ENOMEM;
    }
    0
}

/// `brk(addr)`: moves the break to `addr` if it can and returns the break (Linux's raw
/// call returns the old break on failure, which is how callers notice).
pub fn brk(addr: u64) -> i64 {
    let space = space();
    let (brk_start, old) = {
        let layout = space.layout.lock();
        (layout.brk_start, layout.brk)
    };
    if addr < brk_start || addr >= MMAP_TOP || addr - brk_start > MAP_MAX {
        return old as i64;
    }
    let (old_end, new_end) = (old.next_multiple_of(PAGE), addr.next_multiple_of(PAGE));
    // The break may not grow into a mapping (Linux checks for a VMA in the way).
    let in_the_way = |layout: &Layout| layout.mappings.overlaps(old_end, new_end);
    if new_end > old_end && (in_the_way(&space.layout.lock()) || space.any_mapped(old_end, new_end))
    {
        return old as i64;
    }
    if new_end > old_end {
        if space.map_zeroed(old_end, new_end - old_end, true).is_err() {
            space.unmap(old_end, new_end - old_end);
            return old as i64;
        }
    } else if new_end < old_end {
        // Like Linux's munmap of the range: a mapping placed there with MAP_FIXED goes too.
        space.unmap(new_end, old_end - new_end);
        space.layout.lock().mappings.remove(new_end, old_end);
    }
    space.layout.lock().brk = addr;
    addr as i64
}
