//! A small range of a program's memory worked on in place (Linux's `user_access_begin` …
//! `unsafe_put_user` … `user_access_end`, which a signal frame is written with): the pages
//! are checked once, then the caller reads and writes the program's bytes through the
//! physical-memory map while the address space's page-table lock is held.
//!
//! Why not `read` and `write`: a signal frame is about a kilobyte, built field by field. Staged
//! in the kernel and copied out, it costs every byte twice (and the FPU image three times);
//! in place, once. A range of at most a page spans at most two pages, so a window has at most
//! two pieces.

use super::address_space::{AddressSpace, Fault, PAGE, USER_END};
use core::marker::PhantomData;

/// A checked range of user memory, reachable while the page tables' lock is held (the window
/// lives only inside [`AddressSpace::with_window`]). Its bytes are the program's: any
/// value may be there.
pub struct Window<'a> {
    /// Kernel pointers to the two pieces: the range's part on its first page, and the rest
    /// (empty unless the range crosses into the next page).
    first: *mut u8,
    first_len: usize,
    second: *mut u8,
    len: usize,
    _lock: PhantomData<&'a mut [u8]>,
}

impl Window<'_> {
    /// The range's length in bytes.
    pub fn size(&self) -> usize {
        self.len
    }

    /// The range's bytes `offset..offset + len` as one slice, if they lie on one page (and
    /// in the window).
    pub fn slice_mut(&mut self, offset: usize, len: usize) -> Option<&mut [u8]> {
        let end = offset.checked_add(len).filter(|&end| end <= self.len)?;
        let start = if end <= self.first_len {
            // SAFETY: within the first piece (checked above).
            unsafe { self.first.add(offset) }
        } else if offset >= self.first_len {
            // SAFETY: within the second piece, which holds the range's bytes past first_len.
            unsafe { self.second.add(offset - self.first_len) }
        } else {
            return None;
        };
        // SAFETY: `len` bytes of a checked user page, reached through the physical-memory
        // map; the page tables' lock (held for the window's life) keeps the page mapped and its
        // frame this program's, and `&mut self` makes this the only slice of the window. A
        // thread of the program on another CPU may store to the same bytes meanwhile: plain
        // bytes, a race of the program's own, as when Linux's `copy_to_user` meets one.
        Some(unsafe { core::slice::from_raw_parts_mut(start, len) })
    }

    /// Copies `bytes` to the range at `offset`, across the page boundary if need be.
    /// Panics if they do not fit in the window.
    pub fn write(&mut self, offset: usize, bytes: &[u8]) {
        assert!(offset + bytes.len() <= self.len);
        let split = self.first_len.saturating_sub(offset).min(bytes.len());
        let (head, tail) = bytes.split_at(split);
        // SAFETY: each part is copied only if it has bytes, and then lies in its piece
        // (checked above: the head from `offset` below `first_len`, the tail from the
        // second piece's start); the pieces do not overlap `bytes` (a kernel buffer is not
        // a user page).
        unsafe {
            if !head.is_empty() {
                core::ptr::copy_nonoverlapping(head.as_ptr(), self.first.add(offset), head.len());
            }
            if !tail.is_empty() {
                let at = offset + split - self.first_len;
                core::ptr::copy_nonoverlapping(tail.as_ptr(), self.second.add(at), tail.len());
            }
        }
    }

    /// Copies the range's bytes at `offset` into `out`, across the page boundary if need
    /// be. Panics if they are not all in the window.
    pub fn read(&self, offset: usize, out: &mut [u8]) {
        assert!(offset + out.len() <= self.len);
        let split = self.first_len.saturating_sub(offset).min(out.len());
        let (head, tail) = out.split_at_mut(split);
        // SAFETY: as in `write`.
        unsafe {
            if !head.is_empty() {
                core::ptr::copy_nonoverlapping(
                    self.first.add(offset),
                    head.as_mut_ptr(),
                    head.len(),
                );
            }
            if !tail.is_empty() {
                let at = offset + split - self.first_len;
                core::ptr::copy_nonoverlapping(self.second.add(at), tail.as_mut_ptr(), tail.len());
            }
        }
    }
}

impl AddressSpace {
    /// Runs `f` on user memory `addr..addr + len` (at most a page) in place, with the
    /// page tables' lock held; `write`: the program may write it, and `f` will. `EFAULT` (and `f`
    /// is not called) unless all of it is the program's memory. As for `write`, a stack page
    /// not touched yet is grown and a page shared copy-on-write is given its own copy first.
    #[inline]
    pub fn with_window<R>(
        &self,
        addr: u64,
        len: usize,
        write: bool,
        f: impl FnOnce(&mut Window) -> R,
    ) -> Result<R, Fault> {
        let end = addr.checked_add(len as u64).ok_or(Fault)?;
        if len == 0 || len as u64 > PAGE || end > USER_END {
            return Err(Fault);
        }
        let mut f = Some(f);
        let mut attempt = || {
            self.with_tables(|mapper| {
                let offset = mapper.phys_offset();
                let table = Self::last_table(mapper, addr)?;
                let first = Self::leaf(table, addr, write)?;
                let first_len = ((PAGE - addr % PAGE) as usize).min(len);
                let next = end - 1 - (end - 1) % PAGE;
                let second = if first_len == len {
                    first
                } else if !next.is_multiple_of(512 * PAGE) {
                    // The next page's entry is the next one of the same table.
                    Self::leaf(table, next, write)?
                } else {
                    Self::physical(mapper, next, write)?
                };
                let mut window = Window {
                    first: (offset + first.as_u64()).as_mut_ptr(),
                    first_len,
                    second: (offset + second.as_u64()).as_mut_ptr(),
                    len,
                    _lock: PhantomData,
                };
                let f = f.take().expect("called once");
                Ok(f(&mut window))
            })
        };
        if let Ok(result) = attempt() {
            return Ok(result);
        }
        self.grow_stack_over(addr, end);
        if write {
            let mut at = addr & !(PAGE - 1);
            while at < end {
                self.break_cow(at).map_err(|_| Fault)?;
                at += PAGE;
            }
        }
        attempt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window across a page boundary: a slice only where the bytes lie on one page, and
    /// writes and reads that cross the boundary land where `read` and `write` put them.
    #[test_case]
    fn a_window_across_two_pages_reads_and_writes_both() {
        const BASE: u64 = 0x40_0000;
        let space = AddressSpace::new().unwrap();
        space.map_zeroed(BASE, 2 * PAGE, true).unwrap();
        let at = BASE + PAGE - 100;
        let pattern: [u8; 300] = core::array::from_fn(|i| i as u8);
        space
            .with_window(at, 300, true, |window| {
                assert!(window.slice_mut(0, 100).is_some(), "on the first page");
                assert!(window.slice_mut(100, 200).is_some(), "on the second page");
                assert!(window.slice_mut(50, 100).is_none(), "across the boundary");
                window.write(0, &pattern);
                let mut back = [0u8; 300];
                window.read(0, &mut back);
                assert_eq!(back, pattern);
                let mut tail = [0u8; 10];
                window.read(150, &mut tail);
                assert_eq!(tail[0], 150);
            })
            .unwrap();
        let mut back = [0u8; 300];
        space.read(at, &mut back).unwrap();
        assert_eq!(
            back, pattern,
            "the program's memory holds what the window wrote"
        );
        assert_eq!(
            space.with_window(BASE + 2 * PAGE - 8, 16, false, |_| ()),
            Err(Fault),
            "past the mapping"
        );
    }
}
