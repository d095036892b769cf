//! What a process's address space holds besides its page tables: the program it was loaded
//! with (its path and argv, for `/proc/PID/exe` and `cmdline`), the program break, and the
//! ranges `mmap` has handed out (Linux keeps these in the `mm_struct` beside the page
//! tables: `exe_file`, `arg_start`, `brk`, the VMAs).

use super::mappings::Mappings;

/// The program an address space was loaded with (Linux's `mm->exe_file` and the argument
/// area `/proc/PID/cmdline` reads): its path, then its argv with each argument ended by a
/// NUL, in one allocation (an `execve` makes one; a fork's child shares its parent's).
#[derive(Debug, Clone, Default)]
pub struct Program {
    bytes: alloc::sync::Arc<[u8]>,
    exe_len: usize,
}

impl Program {
    /// The program at `path`, started with `argv`.
    pub fn new(path: &[u8], argv: &[&[u8]]) -> Program {
        let len = path.len() + argv.iter().map(|a| a.len() + 1).sum::<usize>();
        let mut bytes = alloc::vec::Vec::with_capacity(len);
        bytes.extend_from_slice(path);
        for arg in argv {
            bytes.extend_from_slice(arg);
            bytes.push(0);
        }
        Program {
            bytes: bytes.into(),
            exe_len: path.len(),
        }
    }

    /// Its path (`/proc/PID/exe`).
    pub fn exe(&self) -> &[u8] {
        &self.bytes[..self.exe_len]
    }

    /// Its arguments, each ended by a NUL (`/proc/PID/cmdline`).
    pub fn cmdline(&self) -> &[u8] {
        &self.bytes[self.exe_len..]
    }
}

/// The program break and where the anonymous mappings are.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// The program it runs.
    pub program: Program,
    /// Where the break started (the end of the program's last segment) and where it is.
    pub brk_start: u64,
    pub brk: u64,
    /// The ranges `mmap` has handed out; new ones go top-down from [`MMAP_TOP`].
    pub mappings: Mappings,
}

/// The top of the anonymous-mapping area (well below the stack).
pub const MMAP_TOP: u64 = 0x0000_7000_0000_0000;
