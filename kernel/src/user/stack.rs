//! A program's initial stack, laid out as Linux's `create_elf_tables` lays it out (and as
//! the SysV x86_64 ABI, §3.4.1, says `_start` finds it): at the stack pointer argc, then
//! the argv pointers and a null, the envp pointers and a null, then the auxiliary vector —
//! (type, value) pairs ending with AT_NULL — and above them the strings and 16 random bytes
//! (AT_RANDOM, which musl's start-up reads for its stack canary).

use super::address_space::{AddressSpace, Fault, PAGE, USER_END};
use super::elf::Program;
use alloc::vec::Vec;

/// The top of every program's stack, and how far down it may grow.
pub const STACK_TOP: u64 = USER_END;
pub const STACK_BYTES: u64 = 256 * 1024;
const STACK_BOTTOM: u64 = STACK_TOP - STACK_BYTES;

impl AddressSpace {
    /// Maps the stack page holding `addr` if it is not mapped yet: the stack grows on
    /// demand, as Linux's does, so that a program, a fork and an exec pay for the stack in
    /// use rather than for all 256 KiB (the loader maps none of it: the first write of the
    /// initial stack grows it). False if `addr` is not in the stack's range or no frame is
    /// left.
    pub fn grow_stack(&self, addr: u64) -> bool {
        (STACK_BOTTOM..STACK_TOP).contains(&addr)
            && self.map_zeroed(addr & !(PAGE - 1), PAGE, true).is_ok()
    }

    /// Grows the stack over the part of `addr..end` in its range (a system call's buffer on
    /// a stack page the program has not touched yet), as a fault there would.
    pub(super) fn grow_stack_over(&self, addr: u64, end: u64) {
        let mut at = addr.max(STACK_BOTTOM) & !(PAGE - 1);
        while at < end.min(STACK_TOP) {
            self.grow_stack(at);
            at += PAGE;
        }
    }
}

/// A ring-3 fault on a page that is not present: true if it was the running program's
/// stack growing (the page is mapped now; the access runs again).
pub fn resolve_missing_page(addr: u64) -> bool {
    crate::sched::current_address_space().is_some_and(|space| space.grow_stack(addr))
}

const AT_NULL: u64 = 0;
const AT_PHDR: u64 = 3;
const AT_PHENT: u64 = 4;
const AT_PHNUM: u64 = 5;
const AT_PAGESZ: u64 = 6;
const AT_ENTRY: u64 = 9;
const AT_UID: u64 = 11;
const AT_RANDOM: u64 = 25;

/// Writes argv, envp and the auxiliary vector to the top of the stack; returns the stack
/// pointer `_start` starts with (16-byte aligned, pointing at argc).
pub fn build(
    space: &AddressSpace,
    program: &Program,
    argv: &[&[u8]],
    envp: &[&[u8]],
    uid: u32,
    random: [u8; 16],
) -> Result<u64, Fault> {
    // The strings, from the top down (argv[0] highest, as Linux puts it), each with its NUL
    // but the random bytes.
    let mut top = STACK_TOP;
    let mut place = |len: usize| {
        top -= len as u64;
        top
    };
    let argv_at: Vec<u64> = argv.iter().map(|a| place(a.len() + 1)).collect();
    let envp_at: Vec<u64> = envp.iter().map(|e| place(e.len() + 1)).collect();
    let random_at = place(random.len());
    // The pointer words, from argc up.
    let mut words: Vec<u64> = Vec::new();
    words.push(argv.len() as u64);
    words.extend(&argv_at);
    words.push(0);
    words.extend(&envp_at);
    words.push(0);
    for (kind, value) in [
        (AT_PHDR, program.phdr),
        (AT_PHENT, 56),
        (AT_PHNUM, program.phnum),
        (AT_PAGESZ, 4096),
        (AT_ENTRY, program.entry),
        (AT_UID, u64::from(uid)),
        (AT_RANDOM, random_at),
        (AT_NULL, 0),
    ] {
        words.extend([kind, value]);
    }
    let sp = (random_at - 8 * words.len() as u64) & !15;
    // Everything from `sp` to the top, assembled here and copied to the program in one go.
    let mut image = alloc::vec![0u8; (STACK_TOP - sp) as usize];
    let mut copy = |at: u64, bytes: &[u8]| {
        let at = (at - sp) as usize;
        image[at..at + bytes.len()].copy_from_slice(bytes);
    };
    for (at, bytes) in argv_at.iter().zip(argv).chain(envp_at.iter().zip(envp)) {
        copy(*at, bytes);
    }
    copy(random_at, &random);
    for (i, word) in words.iter().enumerate() {
        copy(sp + 8 * i as u64, &word.to_le_bytes());
    }
    space.write(sp, &image)?;
    Ok(sp)
}
