//! What a program may do with its pages (`mprotect`, and `mmap`'s protection), as x86's
//! page tables can say it: present and user-accessible or not, writable or not — and the
//! bit that marks a page copy-on-write (`user::cow`), through which write access always
//! comes back, since a read-only page's frame may be shared.

use super::address_space::{AddressSpace, USER_END};
use crate::arch::paging::{PageTableFlags as F, VirtAddr};

/// The page-table bit that marks a copy-on-write page (bit 9, available to software; see
/// `user::cow`).
pub const COW: F = F::BIT_9;

/// What a program may do with a page: `mprotect`'s PROT_* bits as x86's page tables can
/// say them (a present user page is readable, and executable too: cfslab sets no NX bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// PROT_NONE: out of the program's reach (a thread stack's guard page).
    None,
    /// PROT_READ, PROT_EXEC: readable, and a store faults.
    Read,
    /// PROT_WRITE with anything.
    ReadWrite,
}

impl AddressSpace {
    /// Sets what the program may do with the mapped pages of `start..start + len`
    /// (page-aligned): `mprotect`, and `mmap`'s protection. Returns how many pages were
    /// mapped there. The range is the running program's, so each page's TLB entry is
    /// flushed here.
    ///
    /// Write access comes back copy-on-write, never directly: a read-only page's frame may
    /// be shared (with a forked child, or the page cache), and the first store then gives
    /// the program a copy of its own — or, when nothing else owns the frame, the frame
    /// itself (Linux's private mappings do the same through `do_wp_page`).
    pub fn protect(&self, start: u64, len: u64, access: Access) -> u64 {
        let end = start.saturating_add(len).min(USER_END);
        let mut changed = 0;
        self.with_memory_and_tables(|m| {
            self.for_each_page_in(m, start, end, |addr, entry| {
                let mut flags = entry.flags();
                flags.set(F::USER_ACCESSIBLE, access != Access::None);
                if access == Access::ReadWrite {
                    if !flags.contains(F::WRITABLE) {
                        flags |= COW;
                    }
                } else {
                    flags -= F::WRITABLE | COW;
                }
                entry.set_flags(flags);
                crate::arch::paging::flush_tlb(VirtAddr::new(addr));
                changed += 1;
            });
            // Either way: a CPU that kept an older translation would fault on a page the
            // program may use now, or write to one it may no longer write.
            self.shoot_down();
        });
        changed
    }
}
