//! What a program gets for the instructions UMIP forbids in ring 3 (`sgdt`, `sidt`, `smsw`,
//! `sldt`, `str`): made-up answers, as Linux gives them (`fixup_umip_exception` in
//! arch/x86/kernel/umip.c; 64-bit programs since 5.10, so in 6.1, the reference). With
//! CR4.UMIP set (`arch::user_state::enable`, where the CPU has it) each raises a
//! general-protection fault instead of telling the program where the kernel's tables are.
//! Old programs (Wine's, some emulators) run these instructions and only need a plausible
//! answer, so the #GP handler comes here first ([`emulate`]): the instruction is decoded,
//! its result written — to its register or its memory operand — and rip moved past it.
//!
//! The answers are Linux's: `sgdt` and `sidt` store limit 0 and the dummy bases
//! 0xfffffffffffe0000 (GDT) and 0xffffffffffff0000 (IDT); `smsw` gives the CR0 Linux runs
//! with (PE, MP, ET, NE, WP, AM, PG: 0x80050033); `str` the selector of Linux's TSS (GDT
//! entry 8: 0x40); `sldt` 0, as no program here has an LDT. A register operand takes as
//! many bytes as the operand size, the rest of the register is left as it was (Linux copies
//! only those bytes into the saved register); a memory operand takes 2 bytes (`smsw`,
//! `str`, `sldt`) or 10 (`sgdt`, `sidt`: limit, then the 64-bit base).
//!
//! The decoder knows only what these five need: legacy prefixes, REX, the 0F 00 and 0F 01
//! opcodes and a ModRM operand (register, or memory through SIB, displacements, RIP-relative
//! addressing and a 32-bit address size). Anything else is not emulated, and the program
//! gets the SIGSEGV of its #GP — as it does for an FS or GS segment override, which Linux
//! would honour.

use super::address_space::USER_END;
use crate::arch::user_mode::TrapFrame;

const DUMMY_GDT_BASE: u64 = 0xffff_ffff_fffe_0000;
const DUMMY_IDT_BASE: u64 = 0xffff_ffff_ffff_0000;
const DUMMY_CR0: u64 = 0x8005_0033;
const DUMMY_TR: u64 = 8 * 8;
/// The longest x86 instruction.
const MAX_LENGTH: usize = 15;

/// The five instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sgdt,
    Sidt,
    Smsw,
    Sldt,
    Str,
}

/// Where the result goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operand {
    /// A general register, 0 (rax) to 15 (r15), in the hardware's numbering.
    Register(u8),
    /// Memory at this address.
    Memory(u64),
}

/// A decoded instruction: what it is, its operand, the operand size in bytes (for a
/// register operand) and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Instruction {
    kind: Kind,
    operand: Operand,
    size: usize,
    length: usize,
}

/// What became of the #GP.
pub enum Emulated {
    /// Not one of the five (or not decodable here): the program gets its SIGSEGV.
    No,
    /// Done: rip is past the instruction.
    Done,
    /// Its memory operand at this address cannot be written: the program gets the
    /// SIGSEGV of a page fault there (SEGV_MAPERR), as Linux's `force_sig_info_umip_fault`.
    Fault(u64),
}

/// Emulates the instruction at `regs.rip`, which raised a #GP in ring 3, if it is one that
/// UMIP forbids (see the module's docs).
pub fn emulate(regs: &mut TrapFrame) -> Emulated {
    let Some(space) = crate::sched::current_address_space() else {
        return Emulated::No;
    };
    // As many of the next 15 bytes as are there: the instruction may end a page that
    // nothing follows.
    let mut bytes = [0u8; MAX_LENGTH];
    let to_page_end = (4096 - (regs.rip & 4095)) as usize;
    let got = [MAX_LENGTH, to_page_end.min(MAX_LENGTH)]
        .into_iter()
        .find(|&n| space.read(regs.rip, &mut bytes[..n]).is_ok());
    let Some(got) = got else {
        return Emulated::No;
    };
    let Some(insn) = decode(&bytes[..got], regs) else {
        return Emulated::No;
    };
    let mut result = [0u8; 10];
    let size = match (insn.kind, insn.operand) {
        (Kind::Sgdt | Kind::Sidt, Operand::Register(_)) => return Emulated::No,
        (Kind::Sgdt, _) => table(&mut result, DUMMY_GDT_BASE),
        (Kind::Sidt, _) => table(&mut result, DUMMY_IDT_BASE),
        (kind, operand) => {
            let value = match kind {
                Kind::Smsw => DUMMY_CR0,
                Kind::Str => DUMMY_TR,
                _ => 0,
            };
            result[..8].copy_from_slice(&value.to_le_bytes());
            match operand {
                Operand::Register(_) => insn.size,
                Operand::Memory(_) => 2,
            }
        }
    };
    match insn.operand {
        Operand::Register(r) => {
            let register = register_mut(regs, r);
            let mut bytes = register.to_le_bytes();
            bytes[..size].copy_from_slice(&result[..size]);
            *register = u64::from_le_bytes(bytes);
        }
        Operand::Memory(address) => {
            let fits = address
                .checked_add(size as u64)
                .is_some_and(|end| end <= USER_END);
            if !fits || space.write(address, &result[..size]).is_err() {
                return Emulated::Fault(address);
            }
        }
    }
    regs.rip += insn.length as u64;
    Emulated::Done
}

/// `sgdt`'s or `sidt`'s 10 bytes: limit 0, then `base`.
fn table(out: &mut [u8; 10], base: u64) -> usize {
    out[2..].copy_from_slice(&base.to_le_bytes());
    10
}

/// General register `r` (hardware numbering) in `regs`.
fn register_mut(regs: &mut TrapFrame, r: u8) -> &mut u64 {
    match r & 15 {
        0 => &mut regs.rax,
        1 => &mut regs.rcx,
        2 => &mut regs.rdx,
        3 => &mut regs.rbx,
        4 => &mut regs.rsp,
        5 => &mut regs.rbp,
        6 => &mut regs.rsi,
        7 => &mut regs.rdi,
        8 => &mut regs.r8,
        9 => &mut regs.r9,
        10 => &mut regs.r10,
        11 => &mut regs.r11,
        12 => &mut regs.r12,
        13 => &mut regs.r13,
        14 => &mut regs.r14,
        _ => &mut regs.r15,
    }
}

/// Decodes `bytes` as one of the five instructions in 64-bit mode, its memory operand's
/// address computed from `regs`; None for anything else.
fn decode(bytes: &[u8], regs: &mut TrapFrame) -> Option<Instruction> {
    let mut at = 0;
    let (mut operand_16, mut address_32) = (false, false);
    loop {
        match *bytes.get(at)? {
            0x66 => operand_16 = true,
            0x67 => address_32 = true,
            // CS, DS, ES, SS overrides mean nothing in 64-bit mode; LOCK, REP.
            0x26 | 0x2e | 0x36 | 0x3e | 0xf0 | 0xf2 | 0xf3 => {}
            // FS and GS would add their bases: not emulated.
            0x64 | 0x65 => return None,
            _ => break,
        }
        at += 1;
    }
    // A REX prefix counts only right before the opcode.
    let rex = match *bytes.get(at)? {
        b @ 0x40..=0x4f => {
            at += 1;
            b
        }
        _ => 0,
    };
    if *bytes.get(at)? != 0x0f {
        return None;
    }
    let second = *bytes.get(at + 1)?;
    let modrm = *bytes.get(at + 2)?;
    at += 3;
    let (mode, reg, rm) = (modrm >> 6, (modrm >> 3) & 7, modrm & 7);
    let kind = match (second, reg) {
        (0x01, 0) => Kind::Sgdt,
        (0x01, 1) => Kind::Sidt,
        (0x01, 4) => Kind::Smsw,
        (0x00, 0) => Kind::Sldt,
        (0x00, 1) => Kind::Str,
        _ => return None,
    };
    // In the 0F 01 group a register form of /0 and /1 is another instruction (VMCALL,
    // MONITOR, ...), none of them UMIP's.
    if mode == 3 && second == 0x01 && reg != 4 {
        return None;
    }
    let size = match (rex & 8 != 0, operand_16) {
        (true, _) => 8,
        (false, true) => 2,
        (false, false) => 4,
    };
    let (rex_b, rex_x) = (u8::from(rex & 1 != 0) << 3, u8::from(rex & 2 != 0) << 3);
    if mode == 3 {
        return Some(Instruction {
            kind,
            operand: Operand::Register(rm | rex_b),
            size,
            length: at,
        });
    }
    let mut address = 0u64;
    let rip_relative = rm == 5 && mode == 0;
    // A SIB byte whose base is 5 under mod 0 names no base register, only a displacement.
    let mut no_base = false;
    if rm == 4 {
        let sib = *bytes.get(at)?;
        at += 1;
        let (scale, index, base) = (sib >> 6, ((sib >> 3) & 7) | rex_x, sib & 7);
        if index != 4 {
            address = (*register_mut(regs, index)) << scale;
        }
        no_base = base == 5 && mode == 0;
        if !no_base {
            address = address.wrapping_add(*register_mut(regs, base | rex_b));
        }
    } else if !rip_relative {
        address = *register_mut(regs, rm | rex_b);
    }
    let displacement_bytes = match mode {
        1 => 1,
        2 => 4,
        _ if rip_relative || no_base => 4,
        _ => 0,
    };
    let raw = bytes.get(at..at + displacement_bytes)?;
    let displacement = match *raw {
        [b] => i64::from(b as i8),
        [a, b, c, d] => i64::from(i32::from_le_bytes([a, b, c, d])),
        _ => 0,
    };
    at += displacement_bytes;
    if rip_relative {
        // Relative to the next instruction.
        address = regs.rip.wrapping_add(at as u64);
    }
    address = address.wrapping_add(displacement as u64);
    if address_32 {
        address &= 0xffff_ffff;
    }
    Some(Instruction {
        kind,
        operand: Operand::Memory(address),
        size,
        length: at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regs() -> TrapFrame {
        TrapFrame {
            rip: 0x40_0000,
            rax: 0x1000,
            rcx: 2,
            r9: 0x9000,
            ..TrapFrame::default()
        }
    }

    fn decoded(bytes: &[u8]) -> Option<Instruction> {
        decode(bytes, &mut regs())
    }

    #[test_case]
    fn the_memory_forms_give_their_address_and_length() {
        let memory = |bytes: &[u8]| decoded(bytes).map(|i| (i.kind, i.operand, i.length));
        // sgdt (%rax), sidt (%rax)
        assert_eq!(
            memory(&[0x0f, 0x01, 0x00]),
            Some((Kind::Sgdt, Operand::Memory(0x1000), 3))
        );
        assert_eq!(
            memory(&[0x0f, 0x01, 0x08]),
            Some((Kind::Sidt, Operand::Memory(0x1000), 3))
        );
        // sgdt 6(%rax,%rcx,2): ModRM 44, SIB 48, disp8
        assert_eq!(
            memory(&[0x0f, 0x01, 0x44, 0x48, 0x06]),
            Some((Kind::Sgdt, Operand::Memory(0x100a), 5))
        );
        // sidt 0x10(%rip): relative to the next instruction, 7 bytes on
        assert_eq!(
            memory(&[0x0f, 0x01, 0x0d, 0x10, 0, 0, 0]),
            Some((Kind::Sidt, Operand::Memory(0x40_0017), 7))
        );
        // smsw -8(%r9), with REX.B; str 0x100(%rax) with a 32-bit displacement
        assert_eq!(
            memory(&[0x41, 0x0f, 0x01, 0x61, 0xf8]),
            Some((Kind::Smsw, Operand::Memory(0x8ff8), 5))
        );
        assert_eq!(
            memory(&[0x0f, 0x00, 0x88, 0, 1, 0, 0]),
            Some((Kind::Str, Operand::Memory(0x1100), 7))
        );
        // sgdt 0x20 (no base: SIB base 5 with mod 0), and a 32-bit address size
        assert_eq!(
            memory(&[0x0f, 0x01, 0x04, 0x25, 0x20, 0, 0, 0]),
            Some((Kind::Sgdt, Operand::Memory(0x20), 8))
        );
        assert_eq!(
            memory(&[0x67, 0x0f, 0x01, 0x00]),
            Some((Kind::Sgdt, Operand::Memory(0x1000), 4))
        );
    }

    #[test_case]
    fn the_register_forms_give_their_register_and_size() {
        let register = |bytes: &[u8]| decoded(bytes).map(|i| (i.kind, i.operand, i.size));
        assert_eq!(
            register(&[0x0f, 0x01, 0xe6]),
            Some((Kind::Smsw, Operand::Register(6), 4))
        );
        assert_eq!(
            register(&[0x48, 0x0f, 0x01, 0xe6]),
            Some((Kind::Smsw, Operand::Register(6), 8))
        );
        assert_eq!(
            register(&[0x66, 0x0f, 0x01, 0xe6]),
            Some((Kind::Smsw, Operand::Register(6), 2))
        );
        assert_eq!(
            register(&[0x41, 0x0f, 0x01, 0xe1]),
            Some((Kind::Smsw, Operand::Register(9), 4))
        );
        assert_eq!(
            register(&[0x0f, 0x00, 0xc6]),
            Some((Kind::Sldt, Operand::Register(6), 4))
        );
        assert_eq!(
            register(&[0x0f, 0x00, 0xce]),
            Some((Kind::Str, Operand::Register(6), 4))
        );
    }

    #[test_case]
    fn anything_else_is_not_emulated() {
        for bytes in [
            &[0x0f, 0x01, 0xc1][..],   // vmcall
            &[0x0f, 0x01, 0xd0],       // xgetbv
            &[0x0f, 0x00, 0xd0],       // lldt
            &[0x64, 0x0f, 0x01, 0x00], // an FS override
            &[0xfa],                   // cli
            &[0x0f, 0x01],             // cut short
            &[0x0f, 0x01, 0x44, 0x48], // its displacement missing
            &[0x66; 15],               // prefixes only
        ] {
            assert_eq!(decoded(bytes), None, "{bytes:x?}");
        }
    }
}
