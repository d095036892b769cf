//! Linux's x86_64 signal frame (`struct rt_sigframe`, arch/x86/kernel/signal.c and
//! uapi/asm/sigcontext.h), byte for byte, because the C library reads it: glibc's and
//! musl's `sa_restorer` returns with `rt_sigreturn` from the `ucontext` in it, a handler with
//! `SA_SIGINFO` reads its `siginfo` and `ucontext`, and debuggers walk it.
//!
//! From the new stack pointer up:
//!
//! | offset | size | what |
//! |---|---|---|
//! | 0 | 8 | `pretcode`: the handler's return address, `sa_restorer` |
//! | 8 | 8 + 8 | `uc_flags`, `uc_link` |
//! | 24 | 24 | `uc_stack`: the alternate stack as it was (`stack_t`) |
//! | 48 | 256 | `uc_mcontext`: the registers (`struct sigcontext`) |
//! | 304 | 8 | `uc_sigmask`: the mask to restore |
//! | 312 | 128 | `siginfo` |
//!
//! and above it, 64-byte aligned, the 512-byte `fxsave` image `uc_mcontext.fpstate` points
//! at. The frame starts 128 bytes below the interrupted stack pointer (the ABI's red zone,
//! which leaf functions use without moving rsp), and is aligned so that the handler starts
//! as if called: rsp + 8 a multiple of 16.

use super::super::address_space::AddressSpace;
use super::altstack::StackT;
use crate::arch::user_mode::TrapFrame;
use crate::arch::user_state::{self, FPU_BYTES};
use crate::sched::proc::sighand::SigInfo;
use core::mem::MaybeUninit;

/// `sizeof(struct rt_sigframe)` without the FPU image: pretcode, ucontext (304), siginfo.
const FRAME_BYTES: u64 = 8 + 304 + 128;
const UCONTEXT: usize = 8;
const STACK_T: usize = UCONTEXT + 16;
const SIGCONTEXT: usize = UCONTEXT + 40;
const SIGMASK: usize = UCONTEXT + 296;
const SIGINFO: usize = 8 + 304;
/// `uc_flags`: the saved ss is to be restored as it is (UC_SIGCONTEXT_SS |
/// UC_STRICT_RESTORE_SS); no `xsave` state (UC_FP_XSTATE), as cfslab saves with `fxsave`.
const UC_FLAGS: u64 = 0x2 | 0x4;
/// The ABI's red zone below the stack pointer.
const RED_ZONE: u64 = 128;

/// A frame that cannot be written or read back, or that would return into the kernel: the
/// process is killed with SIGSEGV.
#[derive(Debug)]
pub struct BadFrame;

/// What goes into a frame besides the registers.
pub struct Contents {
    pub signal: u8,
    pub info: SigInfo,
    /// The handler's return address (`sa_restorer`).
    pub restorer: u64,
    /// The mask `rt_sigreturn` puts back.
    pub mask: u64,
    pub altstack: StackT,
    /// The fault the signal reports, if a fault sent it.
    pub trap: TrapState,
}

/// What `sigcontext` says of the fault that sent a signal (Linux keeps it in the thread's
/// `trap_nr`, `error_code` and `cr2`): the exception's vector, its error code, and the page
/// fault's address. Zero for a signal no fault sent.
#[derive(Debug, Clone, Copy, Default)]
pub struct TrapState {
    pub number: u64,
    pub error: u64,
    pub cr2: u64,
}

/// The bytes from a frame's start to the end of its FPU image, staged in the kernel and
/// copied to (or from) the user stack in one go. The frame starts at index `start & 63`,
/// so that the FPU image, 64-byte aligned on the stack, is 64-byte aligned here too, as
/// `fxsave` and `fxrstor` want it.
#[repr(C, align(64))]
struct Staging([MaybeUninit<u8>; 1088]);

impl Staging {
    fn new() -> Staging {
        Staging([MaybeUninit::uninit(); 1088])
    }
}

/// Where a frame below `stack_top` goes: (frame, fpstate).
fn layout(stack_top: u64) -> (u64, u64) {
    let fpstate = stack_top.wrapping_sub(FPU_BYTES as u64) & !63;
    let frame = (fpstate.wrapping_sub(FRAME_BYTES) & !15).wrapping_sub(8);
    (frame, fpstate)
}

/// Writes a frame for `contents` below `stack_top` (the interrupted stack pointer, or the
/// top of the alternate stack) and points `regs` at the handler: rip = `handler`, rdi = the
/// signal, rsi = &siginfo, rdx = &ucontext, rsp = the frame. The FPU is reset for the
/// handler. Err if the frame does not fit in writable memory (the caller kills the process
/// with SIGSEGV, as Linux's `force_sigsegv`).
pub fn push(
    regs: &mut TrapFrame,
    space: &AddressSpace,
    stack_top: u64,
    handler: u64,
    contents: &Contents,
) -> Result<(), BadFrame> {
    let (frame, fpstate) = layout(stack_top);
    if frame > stack_top || fpstate + FPU_BYTES as u64 > crate::user::address_space::USER_END {
        return Err(BadFrame);
    }
    let mut staging = Staging::new();
    let base = (frame & 63) as usize;
    let fp_at = base + (fpstate - frame) as usize;
    // The frame and the padding up to the FPU image: zero but for what is written here.
    let bytes = user_state::stage_with_fpu(&mut staging.0[base..fp_at + FPU_BYTES], fp_at - base);
    let mut put = |offset: usize, value: &[u8]| {
        bytes[offset..offset + value.len()].copy_from_slice(value);
    };
    put(0, &contents.restorer.to_le_bytes());
    put(UCONTEXT, &UC_FLAGS.to_le_bytes());
    put(STACK_T, &contents.altstack.sp.to_le_bytes());
    put(STACK_T + 8, &contents.altstack.flags.to_le_bytes());
    put(STACK_T + 16, &contents.altstack.size.to_le_bytes());
    put(SIGMASK, &contents.mask.to_le_bytes());
    write_sigcontext(
        &mut bytes[SIGCONTEXT..SIGCONTEXT + 256],
        regs,
        fpstate,
        &contents.trap,
    );
    write_siginfo(
        &mut bytes[SIGINFO..SIGINFO + 128],
        contents.signal,
        &contents.info,
    );
    space.write(frame, bytes).map_err(|_| BadFrame)?;
    user_state::reset_fpu();
    regs.rdi = u64::from(contents.signal);
    regs.rsi = frame + SIGINFO as u64;
    regs.rdx = frame + UCONTEXT as u64;
    regs.rax = 0;
    regs.rsp = frame;
    regs.rip = handler;
    // The handler starts with the direction flag clear, as the ABI promises a function,
    // and without single-stepping (Linux clears DF, RF and TF).
    regs.rflags &= !(1 << 10 | 1 << 16 | 1 << 8);
    Ok(())
}

/// `struct sigcontext`'s 256 bytes for `regs`, into `out` (zeroed).
fn write_sigcontext(out: &mut [u8], regs: &TrapFrame, fpstate: u64, trap: &TrapState) {
    let words = [
        regs.r8,
        regs.r9,
        regs.r10,
        regs.r11,
        regs.r12,
        regs.r13,
        regs.r14,
        regs.r15,
        regs.rdi,
        regs.rsi,
        regs.rbp,
        regs.rbx,
        regs.rdx,
        regs.rax,
        regs.rcx,
        regs.rsp,
        regs.rip,
        regs.rflags,
    ];
    for (i, w) in words.iter().enumerate() {
        out[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
    }
    // cs, gs, fs, ss as 16-bit selectors; then err, trapno, oldmask (zero), cr2.
    out[144..146].copy_from_slice(&(regs.cs as u16).to_le_bytes());
    out[150..152].copy_from_slice(&(regs.ss as u16).to_le_bytes());
    out[152..160].copy_from_slice(&trap.error.to_le_bytes());
    out[160..168].copy_from_slice(&trap.number.to_le_bytes());
    out[176..184].copy_from_slice(&trap.cr2.to_le_bytes());
    out[184..192].copy_from_slice(&fpstate.to_le_bytes());
}

/// `siginfo_t`'s 128 bytes, into `out` (zeroed): signo, errno, code, then the union — pid
/// and uid for a kill, the status for SIGCHLD or the value `sigqueue` sent; the address
/// for a fault.
fn write_siginfo(out: &mut [u8], signal: u8, info: &SigInfo) {
    out[0..4].copy_from_slice(&i32::from(signal).to_le_bytes());
    out[8..12].copy_from_slice(&info.code.to_le_bytes());
    if info.addr != 0 {
        out[16..24].copy_from_slice(&info.addr.to_le_bytes());
    } else {
        out[16..20].copy_from_slice(&info.pid.to_le_bytes());
        out[20..24].copy_from_slice(&info.uid.to_le_bytes());
        out[24..28].copy_from_slice(&info.status.to_le_bytes());
        if info.value != 0 {
            out[24..32].copy_from_slice(&info.value.to_le_bytes());
        }
    }
}

/// `siginfo_t` for `rt_sigtimedwait`, which copies it out itself.
pub fn siginfo_bytes(signal: u8, info: &SigInfo) -> [u8; 128] {
    let mut out = [0u8; 128];
    write_siginfo(&mut out, signal, info);
    out
}

/// What `rt_sigreturn` found in a frame: the mask and alternate stack to restore.
pub struct Restored {
    pub mask: u64,
    pub altstack: StackT,
}

/// `rt_sigreturn`: reads the frame the handler returned from (its `ucontext` is at the
/// stack pointer, `sa_restorer` having popped `pretcode`) and puts the registers and the
/// FPU back into `regs`. What a program may not choose is kept: the segments, the
/// interrupt flag, the I/O privilege level; a non-canonical or kernel rip is refused
/// (Err: the caller kills with SIGSEGV, as Linux's `rt_sigreturn` does on a bad frame).
/// The `ucontext` and the FPU image are read in one go when the image is where [`push`]
/// put it, as it nearly always is.
pub fn pop(regs: &mut TrapFrame, space: &AddressSpace) -> Result<Restored, BadFrame> {
    let ucontext = regs.rsp;
    let mut staging = Staging::new();
    let base = (ucontext & 63) as usize;
    // The ucontext and, past it, as far as `push` may have put the FPU image: one read.
    // If that reaches memory that is not there, the ucontext alone.
    const SPAN: usize = 304 + 160 + FPU_BYTES;
    let mut fallback = Staging::new();
    let (uc, whole) = match space.read_uninit(ucontext, &mut staging.0[base..base + SPAN]) {
        Ok(uc) => (uc, true),
        Err(_) => {
            let read = space.read_uninit(ucontext, &mut fallback.0[base..base + 304]);
            (read.map_err(|_| BadFrame)?, false)
        }
    };
    let word = |bytes: &[u8], offset: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[offset..offset + 8]);
        u64::from_le_bytes(w)
    };
    let mc = SIGCONTEXT - UCONTEXT;
    let rip = word(uc, mc + 128);
    if rip >= crate::user::address_space::USER_END {
        return Err(BadFrame);
    }
    let fpstate = word(uc, mc + 184);
    let offset = fpstate.wrapping_sub(ucontext);
    let near = offset >= 304 && offset <= (SPAN - FPU_BYTES) as u64;
    if fpstate == 0 {
        user_state::reset_fpu();
    } else if whole && near && fpstate.is_multiple_of(64) {
        // Where `push` put it: read already, and 64-byte aligned in the staging area.
        let at = offset as usize;
        user_state::restore_fpu_from(&mut uc[at..at + FPU_BYTES]);
    } else {
        // Anywhere else: through an aligned image of its own.
        let mut image = Staging::new();
        let image = space
            .read_uninit(fpstate, &mut image.0[..FPU_BYTES])
            .map_err(|_| BadFrame)?;
        user_state::restore_fpu_from(image);
    }
    let uc = &*uc;
    let r = |i: usize| word(uc, mc + 8 * i);
    (regs.r8, regs.r9, regs.r10, regs.r11) = (r(0), r(1), r(2), r(3));
    (regs.r12, regs.r13, regs.r14, regs.r15) = (r(4), r(5), r(6), r(7));
    (regs.rdi, regs.rsi, regs.rbp, regs.rbx) = (r(8), r(9), r(10), r(11));
    (regs.rdx, regs.rax, regs.rcx, regs.rsp) = (r(12), r(13), r(14), r(15));
    regs.rip = rip;
    regs.set_user_rflags(r(17));
    // Not a system call any more: nothing to restart on the way out.
    regs.orig_rax = crate::arch::user_mode::NOT_A_SYSCALL;
    let stack = STACK_T - UCONTEXT;
    Ok(Restored {
        mask: word(uc, SIGMASK - UCONTEXT),
        altstack: StackT {
            sp: word(uc, stack),
            flags: word(uc, stack + 8) as i32,
            size: word(uc, stack + 16),
        },
    })
}

/// The lowest address a frame pushed below `stack_top` uses, for the alternate stack's
/// overflow check.
pub fn lowest_address(stack_top: u64) -> u64 {
    layout(stack_top).0
}

/// Below the interrupted stack pointer, the red zone stays the program's.
pub fn below_red_zone(sp: u64) -> u64 {
    sp.wrapping_sub(RED_ZONE)
}
