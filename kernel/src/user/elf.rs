//! Reading a program: the ELF64 header and its PT_LOAD segments (the System V gABI and the
//! x86_64 psABI). cfslab runs static, non-PIE executables (ET_EXEC, no PT_INTERP), the kind
//! `musl-gcc -static` and userland/ build. A writable PT_LOAD is copied to its virtual
//! address, the rest of its memory size zeroed (the bss); the read-only ones are mapped from
//! the page cache when [`Program::read_only_pages_shareable`] says the file's pages can be.

use super::address_space::USER_END;

/// One PT_LOAD segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub vaddr: u64,
    pub offset: u64,
    pub file_size: u64,
    pub mem_size: u64,
    pub writable: bool,
}

/// What loading needs from an executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub entry: u64,
    pub segments: alloc::vec::Vec<Segment>,
    /// Where the program headers are in memory (AT_PHDR), their count and size.
    pub phdr: u64,
    pub phnum: u64,
}

const PAGE: u64 = 4096;

impl Segment {
    /// The pages it touches, as a range of page numbers.
    fn pages(&self) -> core::ops::Range<u64> {
        self.vaddr / PAGE..(self.vaddr + self.mem_size).div_ceil(PAGE)
    }

    /// Where the file would sit in memory if this segment were the file mapped whole.
    fn file_base(&self) -> u64 {
        self.vaddr.wrapping_sub(self.offset)
    }

    fn shares_a_page_with(&self, other: &Segment) -> bool {
        let (a, b) = (self.pages(), other.pages());
        a.start < b.end && b.start < a.end
    }
}

impl Program {
    /// Whether the read-only segments can be mapped straight from the file's pages (as
    /// Linux maps a binary's text), with no copy of their own: each is all file bytes (no
    /// bss), at an address congruent with its file offset, and each page holds what the file
    /// holds there for every segment that touches it — no writable segment shares a page
    /// with a read-only one, and read-only segments sharing a page map the file at the same
    /// place. Linkers lay out lld's and GNU ld's static binaries so; anything else is
    /// copied, as before.
    pub fn read_only_pages_shareable(&self) -> bool {
        let read_only = || self.segments.iter().filter(|s| !s.writable);
        read_only().all(|s| {
            s.file_size == s.mem_size
                && s.file_base() % PAGE == 0
                && self.segments.iter().all(|other| {
                    core::ptr::eq(s, other)
                        || !s.shares_a_page_with(other)
                        || (!other.writable && other.file_base() == s.file_base())
                })
        })
    }
}

/// Why a file cannot run (`execve` answers ENOEXEC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotExecutable(pub &'static str);

fn u16_at(b: &[u8], at: usize) -> Result<u64, NotExecutable> {
    b.get(at..at + 2)
        .map(|s| u64::from(u16::from_le_bytes([s[0], s[1]])))
        .ok_or(NotExecutable("truncated"))
}

fn u32_at(b: &[u8], at: usize) -> Result<u64, NotExecutable> {
    b.get(at..at + 4)
        .map(|s| u64::from(u32::from_le_bytes(s.try_into().unwrap_or([0; 4]))))
        .ok_or(NotExecutable("truncated"))
}

fn u64_at(b: &[u8], at: usize) -> Result<u64, NotExecutable> {
    b.get(at..at + 8)
        .map(|s| u64::from_le_bytes(s.try_into().unwrap_or([0; 8])))
        .ok_or(NotExecutable("truncated"))
}

const PT_LOAD: u64 = 1;
const PT_INTERP: u64 = 3;
const PF_W: u64 = 2;

/// Parses and checks `file`: a little-endian x86_64 ELF64 executable whose segments all
/// fit in the lower half and in the file.
pub fn parse(file: &[u8]) -> Result<Program, NotExecutable> {
    if file.get(..4) != Some(b"\x7fELF") {
        return Err(NotExecutable("not an ELF file"));
    }
    if file.get(4..6) != Some(&[2, 1]) {
        return Err(NotExecutable("not ELF64 little-endian"));
    }
    if u16_at(file, 16)? != 2 {
        return Err(NotExecutable("not a static executable (ET_EXEC)"));
    }
    if u16_at(file, 18)? != 62 {
        return Err(NotExecutable("not for x86_64"));
    }
    let entry = u64_at(file, 24)?;
    let phoff = u64_at(file, 32)?;
    let phentsize = u16_at(file, 54)?;
    let phnum = u16_at(file, 56)?;
    if phentsize < 56 || phnum == 0 || phnum > 64 {
        return Err(NotExecutable("bad program headers"));
    }
    let mut segments = alloc::vec::Vec::new();
    let mut phdr = 0;
    for i in 0..phnum {
        let at = usize::try_from(phoff + i * phentsize).map_err(|_| NotExecutable("truncated"))?;
        let kind = u32_at(file, at)?;
        if kind == PT_INTERP {
            return Err(NotExecutable("needs an interpreter (dynamically linked)"));
        }
        if kind != PT_LOAD {
            continue;
        }
        let s = Segment {
            writable: u32_at(file, at + 4)? & PF_W != 0,
            offset: u64_at(file, at + 8)?,
            vaddr: u64_at(file, at + 16)?,
            file_size: u64_at(file, at + 32)?,
            mem_size: u64_at(file, at + 40)?,
        };
        let fits_file = s
            .offset
            .checked_add(s.file_size)
            .is_some_and(|e| e <= file.len() as u64);
        let fits_memory = s
            .vaddr
            .checked_add(s.mem_size)
            .is_some_and(|e| e <= USER_END);
        if !fits_file || !fits_memory || s.file_size > s.mem_size {
            return Err(NotExecutable("a segment outside the file or the user half"));
        }
        if (s.offset..s.offset + s.file_size).contains(&phoff) {
            phdr = s.vaddr + (phoff - s.offset);
        }
        segments.push(s);
    }
    if segments.is_empty() {
        return Err(NotExecutable("nothing to load"));
    }
    // The first return to ring 3 jumps to the entry: outside the user half it would fault
    // in ring 0 (a non-canonical address) or run nothing the program owns.
    if entry >= USER_END {
        return Err(NotExecutable("an entry point outside the user half"));
    }
    Ok(Program {
        entry,
        segments,
        phdr,
        phnum,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(vaddr: u64, offset: u64, size: u64, writable: bool) -> Segment {
        Segment {
            vaddr,
            offset,
            file_size: size,
            mem_size: size,
            writable,
        }
    }

    fn program(segments: &[Segment]) -> Program {
        Program {
            entry: 0x40_1000,
            segments: segments.to_vec(),
            phdr: 0x40_0040,
            phnum: segments.len() as u64,
        }
    }

    /// lld's layout (userland/'s programs): rodata, text a page further on, data after.
    #[test_case]
    fn separate_pages_per_permission_are_shareable() {
        let lld = [
            segment(0x40_0000, 0, 0x1fcc, false),
            segment(0x40_2fd0, 0x1fd0, 0x617a, false),
            segment(0x40_a150, 0x8150, 0x130, true),
        ];
        assert!(program(&lld).read_only_pages_shareable());
    }

    /// Text whose last page also holds the start of the data: that page must be the
    /// program's own (and is copied), so nothing is shared.
    #[test_case]
    fn a_page_shared_with_writable_data_is_not() {
        let packed = [
            segment(0x40_0000, 0, 0x1800, false),
            segment(0x40_1800, 0x1800, 0x100, true),
        ];
        assert!(!program(&packed).read_only_pages_shareable());
    }

    /// A 120-byte ELF64 executable: its header, one PT_LOAD of the whole file at 0x40_0000,
    /// and the entry `entry`.
    fn tiny_elf(entry: u64) -> alloc::vec::Vec<u8> {
        let mut file = alloc::vec![0u8; 120];
        file[..6].copy_from_slice(b"\x7fELF\x02\x01");
        file[16..18].copy_from_slice(&2u16.to_le_bytes());
        file[18..20].copy_from_slice(&62u16.to_le_bytes());
        file[24..32].copy_from_slice(&entry.to_le_bytes());
        file[32..40].copy_from_slice(&64u64.to_le_bytes());
        file[54..56].copy_from_slice(&56u16.to_le_bytes());
        file[56..58].copy_from_slice(&1u16.to_le_bytes());
        file[64..68].copy_from_slice(&(PT_LOAD as u32).to_le_bytes());
        file[80..88].copy_from_slice(&0x40_0000u64.to_le_bytes());
        file[96..104].copy_from_slice(&120u64.to_le_bytes());
        file[104..112].copy_from_slice(&120u64.to_le_bytes());
        file
    }

    /// The first return to ring 3 jumps to the entry: one in the kernel's half, or not
    /// canonical, is refused before the program replaces the caller's.
    #[test_case]
    fn an_entry_outside_the_user_half_is_refused() {
        assert!(parse(&tiny_elf(0x40_0078)).is_ok());
        for entry in [USER_END, 0x0000_8000_0000_0000, 0xffff_ffff_8000_0000] {
            assert!(parse(&tiny_elf(entry)).is_err(), "{entry:#x}");
        }
    }

    #[test_case]
    fn read_only_bss_or_a_misaligned_offset_is_not() {
        let mut bss = segment(0x40_0000, 0, 0x100, false);
        bss.mem_size = 0x2000;
        assert!(!program(&[bss]).read_only_pages_shareable());
        let misaligned = segment(0x40_0010, 0, 0x100, false);
        assert!(!program(&[misaligned]).read_only_pages_shareable());
    }
}
