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
//!
//! The frame is written, and read back, where it lies in the program's pages
//! (`user::user_window`), as Linux writes it with `unsafe_put_user` and `fxsave` to the user
//! address: the bytes cross the kernel once, not staged and copied.

use super::super::address_space::AddressSpace;
use super::super::user_window::Window;
use super::altstack::StackT;
use crate::arch::user_mode::TrapFrame;
use crate::arch::user_state::{self, FPU_BYTES};
use crate::sched::proc::sighand::SigInfo;
use core::mem::MaybeUninit;

/// `sizeof(struct rt_sigframe)` without the FPU image: pretcode, ucontext (304), siginfo.
const FRAME_BYTES: u64 = 8 + 304 + 128;
/// The same, as an index.
const HEAD: usize = FRAME_BYTES as usize;
const UCONTEXT: usize = 8;
const STACK_T: usize = UCONTEXT + 16;
const SIGCONTEXT: usize = UCONTEXT + 40;
const SIGMASK: usize = UCONTEXT + 296;
const SIGINFO: usize = 8 + 304;
/// The `ucontext`'s size.
const UC: usize = SIGINFO - UCONTEXT;
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

/// A 64-byte aligned buffer for an FPU image that cannot be saved or loaded in place (it
/// straddles two pages, or lies away from its frame): `fxsave` and `fxrstor` want 16.
#[repr(C, align(64))]
struct FpuImage([MaybeUninit<u8>; FPU_BYTES]);

impl FpuImage {
    fn new() -> FpuImage {
        FpuImage([MaybeUninit::uninit(); FPU_BYTES])
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
///
/// The frame is written where it goes, in the program's pages (checked once), rather than
/// staged and copied: only a part that straddles two pages is built aside first. The few
/// bytes of padding between the frame and its FPU image keep what the stack held there, as
/// on Linux.
pub fn push(
    regs: &mut TrapFrame,
    space: &AddressSpace,
    stack_top: u64,
    handler: u64,
    contents: &Contents,
) -> Result<(), BadFrame> {
    let (frame, fpstate) = layout(stack_top);
    // A handler outside the user half would have the way back to ring 3 jump there, and
    // SYSRET or iretq to a non-canonical address faults in ring 0: the program gets the
    // SIGSEGV of a frame it cannot have, as on Linux, where the jump itself would fault.
    let user_end = crate::user::address_space::USER_END;
    if frame > stack_top || fpstate + FPU_BYTES as u64 > user_end || handler >= user_end {
        return Err(BadFrame);
    }
    let fp_at = (fpstate - frame) as usize;
    space
        .with_window(frame, fp_at + FPU_BYTES, true, |window| {
            match window.slice_mut(0, HEAD) {
                Some(head) => write_frame(
                    head.try_into().expect("HEAD bytes"),
                    regs,
                    fpstate,
                    contents,
                ),
                None => {
                    let mut head = [0u8; HEAD];
                    write_frame(&mut head, regs, fpstate, contents);
                    window.write(0, &head);
                }
            }
            match window.slice_mut(fp_at, FPU_BYTES) {
                Some(image) => user_state::save_fpu_into(image),
                None => {
                    let mut image = FpuImage::new();
                    window.write(fp_at, user_state::save_fpu_to(&mut image.0));
                }
            }
        })
        .map_err(|_| BadFrame)?;
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

/// The frame's first [`FRAME_BYTES`] into `out` (whatever it held): pretcode, the
/// ucontext, the siginfo. Every byte is written: the fields, and zeros where the frame has
/// nothing to say.
#[inline]
fn write_frame(out: &mut [u8; HEAD], regs: &TrapFrame, fpstate: u64, contents: &Contents) {
    // uc_link; sigcontext's selectors, err, trapno, oldmask and cr2, and its reserved tail;
    // the siginfo (write_sigcontext and write_siginfo write their fields over zeros).
    out[UCONTEXT + 8..UCONTEXT + 16].fill(0);
    out[SIGCONTEXT + 144..SIGCONTEXT + 184].fill(0);
    out[SIGCONTEXT + 192..SIGCONTEXT + 256].fill(0);
    out[SIGINFO..].fill(0);
    let mut put = |offset: usize, value: u64| {
        out[offset..offset + 8].copy_from_slice(&value.to_le_bytes());
    };
    put(0, contents.restorer);
    put(UCONTEXT, UC_FLAGS);
    put(STACK_T, contents.altstack.sp);
    put(STACK_T + 8, u64::from(contents.altstack.flags as u32));
    put(STACK_T + 16, contents.altstack.size);
    put(SIGMASK, contents.mask);
    write_sigcontext(
        &mut out[SIGCONTEXT..SIGCONTEXT + 256],
        regs,
        fpstate,
        &contents.trap,
    );
    write_siginfo(
        &mut out[SIGINFO..SIGINFO + 128],
        contents.signal,
        &contents.info,
    );
}

/// `struct sigcontext`'s 256 bytes for `regs`, into `out` (zeroed).
#[inline]
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
#[inline]
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
#[derive(Default)]
pub struct Restored {
    pub mask: u64,
    pub altstack: StackT,
}

/// What became of the FPU image while the window was open.
enum Fpu {
    Restored,
    /// Away from where `push` puts it: read separately.
    Elsewhere(u64),
}

/// `rt_sigreturn`: reads the frame the handler returned from (its `ucontext` is at the
/// stack pointer, `sa_restorer` having popped `pretcode`) and puts the registers and the
/// FPU back into `regs`. What a program may not choose is kept: the segments, the
/// interrupt flag, the I/O privilege level; a non-canonical or kernel rip is refused
/// (Err: the caller kills with SIGSEGV, as Linux's `rt_sigreturn` does on a bad frame).
/// The `ucontext` is read, and the FPU image loaded, where they lie when the image is where
/// [`push`] put it, as it nearly always is.
pub fn pop(regs: &mut TrapFrame, space: &AddressSpace) -> Result<Restored, BadFrame> {
    let ucontext = regs.rsp;
    // The ucontext and, past it, as far as `push` may have put the FPU image: one window.
    // If that reaches memory that is not there, the ucontext alone.
    const SPAN: usize = UC + 160 + FPU_BYTES;
    // The mask and alternate stack come back through `restored`, so that little is moved
    // through the window's result.
    let mut restored = Restored::default();
    let mut read = |window: &mut Window| read_ucontext(window, ucontext, regs, &mut restored);
    let fpu = match space.with_window(ucontext, SPAN, false, &mut read) {
        Ok(fpu) => fpu,
        Err(_) => space
            .with_window(ucontext, UC, false, &mut read)
            .map_err(|_| BadFrame)?,
    }?;
    if let Fpu::Elsewhere(fpstate) = fpu {
        // Through an aligned image of its own.
        let mut image = FpuImage::new();
        let image = space
            .read_uninit(fpstate, &mut image.0)
            .map_err(|_| BadFrame)?;
        user_state::restore_fpu_from(image);
    }
    Ok(restored)
}

/// [`pop`]'s look through the window at `ucontext`: the saved registers into `regs`, the
/// mask and alternate stack to restore into `restored`, and the FPU loaded from its image if
/// that lies in the window (else where it is, for the caller). Err (and nothing changed) for
/// a rip in the kernel's half.
fn read_ucontext(
    window: &mut Window,
    ucontext: u64,
    regs: &mut TrapFrame,
    restored: &mut Restored,
) -> Result<Fpu, BadFrame> {
    // Read where it lies, or (straddling two pages) from a copy.
    let copy: [u8; UC];
    let uc: &[u8; UC] = match window.slice_mut(0, UC) {
        Some(uc) => (&*uc).try_into().expect("UC bytes"),
        None => {
            let mut bytes = [0u8; UC];
            window.read(0, &mut bytes);
            copy = bytes;
            &copy
        }
    };
    let word = |offset: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&uc[offset..offset + 8]);
        u64::from_le_bytes(w)
    };
    let mc = SIGCONTEXT - UCONTEXT;
    let r = |i: usize| word(mc + 8 * i);
    let rip = r(16);
    if rip >= crate::user::address_space::USER_END {
        return Err(BadFrame);
    }
    (regs.r8, regs.r9, regs.r10, regs.r11) = (r(0), r(1), r(2), r(3));
    (regs.r12, regs.r13, regs.r14, regs.r15) = (r(4), r(5), r(6), r(7));
    (regs.rdi, regs.rsi, regs.rbp, regs.rbx) = (r(8), r(9), r(10), r(11));
    (regs.rdx, regs.rax, regs.rcx, regs.rsp) = (r(12), r(13), r(14), r(15));
    regs.rip = rip;
    regs.set_user_rflags(r(17));
    // Not a system call any more: nothing to restart on the way out.
    regs.orig_rax = crate::arch::user_mode::NOT_A_SYSCALL;
    let stack = STACK_T - UCONTEXT;
    *restored = Restored {
        mask: word(SIGMASK - UCONTEXT),
        altstack: StackT {
            sp: word(stack),
            flags: word(stack + 8) as i32,
            size: word(stack + 16),
        },
    };
    let fpstate = word(mc + 184);
    if fpstate == 0 {
        user_state::reset_fpu();
        return Ok(Fpu::Restored);
    }
    let offset = fpstate.wrapping_sub(ucontext);
    let near = offset >= UC as u64 && fpstate.is_multiple_of(16);
    let Some(at) = usize::try_from(offset).ok().filter(|_| near) else {
        return Ok(Fpu::Elsewhere(fpstate));
    };
    if at + FPU_BYTES > window.size() {
        return Ok(Fpu::Elsewhere(fpstate));
    }
    let in_place = window
        .slice_mut(at, FPU_BYTES)
        .is_some_and(|image| user_state::restore_fpu_if_valid(image));
    if !in_place {
        // Straddling two pages, or with MXCSR bits to clear: through a copy.
        let mut image = FpuImage::new();
        let image = image.0.write_filled(0);
        window.read(at, image);
        user_state::restore_fpu_from(image);
    }
    Ok(Fpu::Restored)
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
