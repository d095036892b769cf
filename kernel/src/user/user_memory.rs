//! Copying to and from a program's memory (Linux's `copy_to_user`/`copy_from_user`): the
//! kernel walks the program's own page table and reaches each page through the
//! physical-memory map. A bad user pointer is an error (`EFAULT`), never a kernel page fault,
//! and nothing depends on which table CR3 holds. A write to a page still shared
//! copy-on-write first gives the program its own copy, as the program's own store would.

use super::address_space::{AddressSpace, Fault, PAGE, USER_END};
use crate::arch::paging::{OffsetPageTable, PageTable, PageTableFlags as F};
use crate::arch::paging::{PhysAddr, VirtAddr};
use alloc::vec::Vec;

impl AddressSpace {
    /// The physical address behind user address `addr`, if the program may touch it
    /// (`write`: and write it). The four levels are walked by hand through the
    /// physical-memory map: this runs several times in every `read` and `write` system call,
    /// and the general `Translate` (which also knows huge pages, which user mappings never
    /// use) costs several times more.
    pub(super) fn physical(
        mapper: &OffsetPageTable,
        addr: u64,
        write: bool,
    ) -> Result<PhysAddr, Fault> {
        Self::leaf(Self::last_table(mapper, addr)?, addr, write)
    }

    /// The page table (level 1) that maps user address `addr`: three levels walked, each
    /// entry read as the bare word it is (the `x86_64` crate's typed accessors check what a
    /// mask already guarantees, at every level).
    pub(super) fn last_table<'a>(
        mapper: &'a OffsetPageTable,
        addr: u64,
    ) -> Result<&'a PageTable, Fault> {
        const PRESENT: u64 = 1;
        const HUGE: u64 = 1 << 7;
        const FRAME: u64 = 0x000f_ffff_ffff_f000;
        if addr >= USER_END {
            return Err(Fault);
        }
        let offset = mapper.phys_offset().as_u64();
        let mut table: *const u64 = (mapper.level_4_table() as *const PageTable).cast();
        for shift in [39, 30, 21] {
            // SAFETY: `table` is a page table (the level-4 one, then what a present, non-huge
            // entry points at, through the physical-memory map; the page tables' lock is held,
            // or the memory lock, which every change to them holds too), and
            // the index is below 512.
            let entry = unsafe { *table.add(((addr >> shift) & 511) as usize) };
            if entry & (PRESENT | HUGE) != PRESENT {
                return Err(Fault);
            }
            table = (offset + (entry & FRAME)) as *const u64;
        }
        // SAFETY: a level-1 table, as above.
        Ok(unsafe { &*table.cast::<PageTable>() })
    }

    /// The physical address behind `addr` in its last-level `table`, if the program may
    /// touch it (`write`: and write it).
    pub(super) fn leaf(table: &PageTable, addr: u64, write: bool) -> Result<PhysAddr, Fault> {
        let at = VirtAddr::new(addr);
        let leaf = &table[at.p1_index()];
        let flags = leaf.flags();
        let allowed =
            F::PRESENT | F::USER_ACCESSIBLE | if write { F::WRITABLE } else { F::empty() };
        if flags.contains(allowed) {
            Ok(leaf.addr() + u64::from(at.page_offset()))
        } else {
            Err(Fault)
        }
    }

    /// Copies `bytes` to user address `addr` (`EFAULT` if any of it is not the program's,
    /// writable memory; then nothing is written).
    pub fn write(&self, addr: u64, bytes: &[u8]) -> Result<(), Fault> {
        self.copy(addr, bytes.len(), true, |user, i, n| {
            // SAFETY: `user` is the kernel's view of a checked user page with n bytes left.
            unsafe { core::ptr::copy_nonoverlapping(bytes[i..].as_ptr(), user, n) }
        })
    }

    /// Copies a program's bytes to `addr` as the loader does: read-only pages too. A page at
    /// a time, each under its own hold of the page tables' lock, with interrupts on between:
    /// the loader fills a new address space while the old program's other threads may still
    /// run, and one of them changing its mappings waits for this CPU to answer its TLB
    /// shootdown, which it can only between holds.
    pub fn load(&self, addr: u64, bytes: &[u8]) -> Result<(), Fault> {
        let mut done = 0;
        while done < bytes.len() {
            let at = addr.checked_add(done as u64).ok_or(Fault)?;
            let piece = &bytes[done..][..((PAGE - at % PAGE) as usize).min(bytes.len() - done)];
            self.copy(at, piece.len(), false, |user, i, n| {
                // SAFETY: as in `write`.
                unsafe { core::ptr::copy_nonoverlapping(piece[i..].as_ptr(), user, n) }
            })?;
            done += piece.len();
        }
        Ok(())
    }

    /// Copies `buf.len()` bytes from user address `addr` into `buf`.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), Fault> {
        let dst = buf.as_mut_ptr();
        self.copy(addr, buf.len(), false, |user, i, n| {
            // SAFETY: as in `write`; `dst` has `len` bytes.
            unsafe { core::ptr::copy_nonoverlapping(user, dst.add(i), n) }
        })
    }

    /// Copies `buf.len()` bytes from user address `addr` into `buf`, which need not be
    /// initialized (a signal frame's staging area: zeroing it first would cost as much as
    /// the copy); returns it, all written.
    pub fn read_uninit<'a>(
        &self,
        addr: u64,
        buf: &'a mut [core::mem::MaybeUninit<u8>],
    ) -> Result<&'a mut [u8], Fault> {
        let (dst, len) = (buf.as_mut_ptr().cast::<u8>(), buf.len());
        self.copy(addr, len, false, |user, i, n| {
            // SAFETY: as in `write`; `dst` has `len` bytes.
            unsafe { core::ptr::copy_nonoverlapping(user, dst.add(i), n) }
        })?;
        // SAFETY: `copy` succeeded, so it called the closure over every byte of 0..len
        // (it checks the whole range before it copies any of it).
        Ok(unsafe { core::slice::from_raw_parts_mut(dst, len) })
    }

    /// Reads a NUL-terminated string of at most `max` bytes at `addr`, a page (or what is
    /// left of one) at a time.
    pub fn read_c_string(&self, addr: u64, max: usize) -> Result<Vec<u8>, Fault> {
        let mut out = Vec::new();
        self.append_c_string(addr, max, &mut out)?;
        Ok(out)
    }

    /// [`Self::read_c_string`] onto the end of `out` (left as it was on a fault): how many
    /// bytes it added.
    pub fn append_c_string(
        &self,
        addr: u64,
        max: usize,
        out: &mut Vec<u8>,
    ) -> Result<usize, Fault> {
        let start = out.len();
        let mut chunk = [0u8; PAGE as usize];
        let read = loop {
            let done = out.len() - start;
            let Some(at) = addr.checked_add(done as u64) else {
                break Err(Fault);
            };
            // The NUL must be among the first `max` bytes, as Linux's `strncpy_from_user`.
            let n = ((PAGE - at % PAGE) as usize).min(max - done);
            if n == 0 {
                break Err(Fault);
            }
            if let Err(fault) = self.read(at, &mut chunk[..n]) {
                break Err(fault);
            }
            if let Some(end) = chunk[..n].iter().position(|&b| b == 0) {
                out.extend_from_slice(&chunk[..end]);
                break Ok(out.len() - start);
            }
            out.extend_from_slice(&chunk[..n]);
        };
        if read.is_err() {
            out.truncate(start);
        }
        read
    }

    /// `madvise(MADV_DONTNEED)` on private anonymous memory: every mapped page of
    /// `start..end` (page-aligned) reads as zeros from now on, as a fresh page would (a page
    /// shared copy-on-write gets its own zeroed copy). Returns how many pages are mapped
    /// there; a page the program cannot write now (PROT_NONE or read-only) keeps its bytes.
    pub fn zero_range(&self, start: u64, end: u64) -> u64 {
        let mut pages = Vec::new();
        super::address_space::with_memory(|m| {
            self.for_each_page_in(m, start, end, |addr, _| pages.push(addr))
        });
        let zeros = [0u8; PAGE as usize];
        for &page in &pages {
            let _ = self.write(page, &zeros);
        }
        pages.len() as u64
    }

    /// Gives the program its own copy of every copy-on-write page in `addr..addr + len`.
    fn unshare(&self, addr: u64, len: usize) -> Result<(), Fault> {
        let end = addr.checked_add(len as u64).ok_or(Fault)?;
        let mut at = addr & !(PAGE - 1);
        while at < end.min(USER_END) {
            self.break_cow(at).map_err(|_| Fault)?;
            at += PAGE;
        }
        Ok(())
    }

    /// Checks the whole range first, then calls `each(kernel pointer, done, n)` page by page.
    /// `write`: the pages must be writable — a page still shared copy-on-write gets its own
    /// copy first, as the program's own store would. Untouched stack pages in the range are
    /// grown first, as a fault there would. Both are the rare case: a range that is all there
    /// already takes the page tables' lock once, and not the memory lock.
    fn copy(
        &self,
        addr: u64,
        len: usize,
        write: bool,
        mut each: impl FnMut(*mut u8, usize, usize),
    ) -> Result<(), Fault> {
        let end = addr.checked_add(len as u64).ok_or(Fault)?;
        if len == 0 {
            return Ok(());
        }
        let copied =
            self.with_tables(|mapper| Self::copy_if_present(mapper, addr, len, write, &mut each));
        if copied.is_ok() {
            return Ok(());
        }
        self.grow_stack_over(addr, end);
        if write {
            self.unshare(addr, len)?;
        }
        self.with_tables(|mapper| Self::copy_if_present(mapper, addr, len, write, &mut each))
    }

    /// The copy itself, with the page tables' lock held: nothing is copied unless every
    /// page of the range allows the access.
    fn copy_if_present(
        mapper: &OffsetPageTable,
        addr: u64,
        len: usize,
        write: bool,
        each: &mut impl FnMut(*mut u8, usize, usize),
    ) -> Result<(), Fault> {
        let offset = mapper.phys_offset();
        let first = Self::physical(mapper, addr, write)?;
        let mut at = (addr & !(PAGE - 1)) + PAGE;
        while at < addr + len as u64 {
            Self::physical(mapper, at, write)?;
            at += PAGE;
        }
        let mut done = 0;
        while done < len {
            let at = addr + done as u64;
            let n = ((PAGE - at % PAGE) as usize).min(len - done);
            let phys = if done == 0 {
                first
            } else {
                Self::physical(mapper, at, write)?
            };
            each((offset + phys.as_u64()).as_mut_ptr(), done, n);
            done += n;
        }
        Ok(())
    }
}
