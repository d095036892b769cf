//! `execve`'s argv and envp, copied from the program into the kernel before the old
//! program goes, with Linux's rules (fs/exec.c, `copy_strings`): one string may be 32 pages
//! with its NUL (MAX_ARG_STRLEN), and all of them, with a pointer's 8 bytes each, must fit a
//! budget; beyond either, E2BIG. Linux's budget is a quarter of the stack's limit (2 MiB by
//! default); cfslab's is 128 KiB, Linux's ARG_MAX before 2.6.23, half of cfslab's 256 KiB
//! stack.
//!
//! The copies live in the kernel heap until the new program's stack is built. One exec of
//! 14,000 empty strings holds about half a MiB there (the strings' ends and the slices
//! the loader takes), and 256 processes exec'ing at once would take more heap than there
//! is; so every exec in progress also charges what it holds to one pool ([`POOL_BYTES`]),
//! and an exec that finds it spent fails with ENOMEM, as Linux's would under memory pressure.

use super::{errno, space};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

const MAX_ARG_STRLEN: usize = 32 * 4096;
const ARG_BYTES_MAX: usize = 128 * 1024;
/// The kernel heap all execs in progress may hold for their strings at once.
const POOL_BYTES: usize = 16 << 20;
/// What one string costs the kernel heap beyond its bytes: its end (8 bytes) and the slice
/// the loader takes (16), rounded up.
const PER_STRING: usize = 32;

static POOL_IN_USE: AtomicUsize = AtomicUsize::new(0);

/// The strings of argv or envp, copied in: one buffer, and where each string ends.
#[derive(Default)]
pub struct Strings {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Strings {
    pub fn as_slices(&self) -> Vec<&[u8]> {
        let starts = core::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(s, &e)| &self.bytes[s..e])
            .collect()
    }
}

/// One exec's copy: the budget left, and what it has charged to the pool (given back when
/// the copy is dropped, with the exec's strings).
pub struct Copy {
    budget: usize,
    charged: usize,
}

impl Copy {
    pub fn new() -> Copy {
        Copy {
            budget: ARG_BYTES_MAX,
            charged: 0,
        }
    }

    /// Charges `bytes` to the pool: ENOMEM if it is spent.
    fn charge(&mut self, bytes: usize) -> Result<(), i64> {
        let before = POOL_IN_USE.fetch_add(bytes, Relaxed);
        if before + bytes > POOL_BYTES {
            POOL_IN_USE.fetch_sub(bytes, Relaxed);
            return Err(-errno::ENOMEM);
        }
        self.charged += bytes;
        Ok(())
    }

    /// Reads a null-terminated array of string pointers (a null array is an empty one, as
    /// Linux takes it), taking each pointer's 8 bytes and its string's bytes and NUL from
    /// the budget: E2BIG once it is spent or for a string longer than MAX_ARG_STRLEN;
    /// EFAULT for a bad pointer.
    pub fn strings(&mut self, array: u64) -> Result<Strings, i64> {
        let space = space();
        let mut out = Strings::default();
        if array == 0 {
            return Ok(out);
        }
        let mut at = array;
        loop {
            let mut ptr = [0u8; 8];
            space.read(at, &mut ptr).map_err(|_| -errno::EFAULT)?;
            let ptr = u64::from_le_bytes(ptr);
            if ptr == 0 {
                break;
            }
            self.budget = self.budget.checked_sub(8).ok_or(-errno::E2BIG)?;
            if out.ends.is_empty() {
                // Room for a short command line at once, rather than growth by doubling
                // (and nothing at all for an empty list).
                out.bytes.reserve(128);
                out.ends.reserve(8);
            }
            // Straight onto the buffer: no copy of each string of its own.
            let len = space
                .append_c_string(ptr, MAX_ARG_STRLEN, &mut out.bytes)
                .map_err(|_| {
                    // No NUL in the first 32 pages, or memory that is not the program's.
                    let mut probe = alloc::vec![0u8; MAX_ARG_STRLEN];
                    match space.read(ptr, &mut probe) {
                        Ok(()) => -errno::E2BIG,
                        Err(_) => -errno::EFAULT,
                    }
                })?;
            self.budget = self.budget.checked_sub(len + 1).ok_or(-errno::E2BIG)?;
            self.charge(len + PER_STRING)?;
            out.ends.push(out.bytes.len());
            at += 8;
        }
        Ok(out)
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        POOL_IN_USE.fetch_sub(self.charged, Relaxed);
    }
}
