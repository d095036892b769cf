//! The CPU state a user task owns beyond its general registers: the FPU/SSE registers
//! (x87, MMX, XMM0–15 and MXCSR, as `fxsave` lays them out) and the FS base, which musl
//! and glibc point at the thread's TLS block (`arch_prctl(ARCH_SET_FS)`).
//!
//! The kernel itself never touches either: its target, x86_64-unknown-none, is soft-float,
//! and it does not use FS. So the registers hold the running user task's values, saved when
//! it is switched out and restored when it is switched back in (Linux's
//! `switch_fpu_prepare`/`switch_fpu_finish` and `x86_fsbase_save`/`load`, done eagerly as
//! Linux has done since 4.6). Kernel threads carry no such state and cost the switch nothing.
//!
//! A signal handler's frame saves the FPU registers as they are, straight into the frame in
//! the program's memory ([`save_fpu_into`]; [`save_fpu_to`] for an image that straddles two
//! pages and is built aside), the handler starts from a clean FPU ([`reset_fpu`]), and
//! `rt_sigreturn` loads them back from the frame ([`restore_fpu_if_valid`]; through a
//! sanitised copy, [`restore_fpu_from`], if MXCSR has bits the CPU lacks).
//!
//! What this does *not* do: AVX (xsave), or lazy switching.

use x86_64::VirtAddr;
use x86_64::registers::control::{Cr0, Cr0Flags, Cr4, Cr4Flags};
use x86_64::registers::model_specific::FsBase;

/// The 512-byte `fxsave` image, 16-byte aligned as the instruction requires.
#[repr(C, align(16))]
#[derive(Clone)]
pub struct FxArea([u8; 512]);

/// The reset `fxsave` image: x87 control word 0x37f, MXCSR 0x1f80 (its mask 0xffff), every
/// register zero.
const fn initial_fx() -> FxArea {
    let mut fx = [0u8; 512];
    fx[0] = 0x7f; // FCW 0x037f
    fx[1] = 0x03;
    fx[24] = 0x80; // MXCSR 0x1f80
    fx[25] = 0x1f;
    fx[28] = 0xff; // MXCSR_MASK 0xffff
    fx[29] = 0xff;
    FxArea(fx)
}

/// A user task's extra CPU state while it is not running.
#[derive(Clone)]
pub struct UserCpuState {
    fx: FxArea,
    fs_base: u64,
}

impl UserCpuState {
    /// The state a new program starts with, as after `execve` on Linux: x87 control word
    /// 0x37f (all exceptions masked, 64-bit precision), MXCSR 0x1f80 (all SSE exceptions
    /// masked, round to nearest), every register zero, no TLS.
    pub fn initial() -> Self {
        UserCpuState {
            fx: initial_fx(),
            fs_base: 0,
        }
    }

    /// Copies the registers as they are now (the running task's) into `self`.
    pub fn save(&mut self) {
        // SAFETY: `fx` is 512 writable bytes aligned to 16; SSE is on (see `enable`).
        unsafe { core::arch::asm!("fxsave64 [{}]", in(reg) &raw mut self.fx, options(nostack)) };
        self.fs_base = FsBase::read().as_u64();
    }

    /// Loads `self` into the registers (for the task about to run).
    pub fn restore(&self) {
        // SAFETY: `fx` was written by `fxsave64` or `initial`, so its MXCSR has no reserved
        // bit set (fxrstor would fault on one); it is 512 readable bytes aligned to 16.
        unsafe { core::arch::asm!("fxrstor64 [{}]", in(reg) &raw const self.fx, options(nostack)) };
        FsBase::write(VirtAddr::new_truncate(self.fs_base));
    }

    /// The same state with FS pointing at `base`: a new thread's TLS (`clone` with
    /// CLONE_SETTLS). The caller has checked that `base` is a user address.
    pub fn with_fs_base(self, base: u64) -> Self {
        UserCpuState {
            fs_base: base,
            ..self
        }
    }

    /// The state of the running task now, for a fork's child.
    pub fn current() -> Self {
        let mut state = UserCpuState::initial();
        state.save();
        state
    }
}

/// The size of the FPU image a signal frame holds (`fxsave`'s).
pub const FPU_BYTES: usize = 512;

/// MXCSR's writable bits on this CPU (`fxsave`'s MXCSR_MASK, read by [`enable`] on each
/// CPU: the same on every one, as the bring-up's check of the APs' registers implies).
static MXCSR_MASK: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0xffbf);

/// Saves the running task's FPU/SSE registers into `out` as `fxsave` lays them out, and
/// returns it: a signal frame's `fpstate`, built aside when it straddles two pages. `fxsave`
/// leaves bytes
/// 464–511 alone: they are zeroed. Panics unless `out` is 512 bytes aligned to 16, as
/// `fxsave` needs.
pub fn save_fpu_to(out: &mut [core::mem::MaybeUninit<u8>]) -> &mut [u8] {
    assert!(out.len() == FPU_BYTES && out.as_ptr().addr().is_multiple_of(16));
    out[464..].write_filled(0);
    // SAFETY: `out` is 512 writable bytes aligned to 16 (checked above); SSE is on.
    unsafe { core::arch::asm!("fxsave64 [{}]", in(reg) out.as_mut_ptr(), options(nostack)) };
    // SAFETY: `fxsave` wrote bytes 0..464 and the tail was zeroed: all 512 are initialized.
    unsafe { core::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), FPU_BYTES) }
}

/// [`save_fpu_to`] into a signal frame's FPU image in place (the program's own memory, which
/// holds whatever it held). Panics unless `out` is 512 bytes aligned to 16.
#[inline]
pub fn save_fpu_into(out: &mut [u8]) {
    assert!(out.len() == FPU_BYTES && out.as_ptr().addr().is_multiple_of(16));
    out[464..].fill(0);
    // SAFETY: `out` is 512 writable bytes aligned to 16 (checked above); SSE is on.
    unsafe { core::arch::asm!("fxsave64 [{}]", in(reg) out.as_mut_ptr(), options(nostack)) };
}

/// Loads an FPU image a program handed back (`rt_sigreturn`), in place. Bits of MXCSR the
/// CPU does not have are cleared first: `fxrstor` would fault in the kernel on them. Panics
/// unless `image` is 512 bytes aligned to 16.
pub fn restore_fpu_from(image: &mut [u8]) {
    assert!(image.len() == FPU_BYTES && image.as_ptr().addr().is_multiple_of(16));
    let mask = MXCSR_MASK.load(core::sync::atomic::Ordering::Relaxed);
    let mxcsr = u32::from_le_bytes([image[24], image[25], image[26], image[27]]) & mask;
    image[24..28].copy_from_slice(&mxcsr.to_le_bytes());
    // SAFETY: MXCSR has no bit outside the CPU's mask now, the one way `fxrstor` faults on
    // 512 readable bytes aligned to 16 (checked above).
    unsafe { core::arch::asm!("fxrstor64 [{}]", in(reg) image.as_ptr(), options(nostack)) };
}

/// Loads an FPU image a program handed back (`rt_sigreturn`) where it lies, if its MXCSR
/// has no bit the CPU lacks; false (and nothing loaded) if it has: the caller sanitizes a
/// copy with [`restore_fpu_from`]. Panics unless `image` is 512 bytes aligned to 16.
#[inline]
pub fn restore_fpu_if_valid(image: &[u8]) -> bool {
    assert!(image.len() == FPU_BYTES && image.as_ptr().addr().is_multiple_of(16));
    let mask = MXCSR_MASK.load(core::sync::atomic::Ordering::Relaxed);
    let mxcsr = u32::from_le_bytes([image[24], image[25], image[26], image[27]]);
    if mxcsr & !mask != 0 {
        return false;
    }
    // SAFETY: 512 readable bytes aligned to 16 (checked above; the caller holds the page
    // tables' lock, so they stay mapped). Their MXCSR was valid a moment ago; a thread of
    // the program on another CPU may have changed it since, and then `fxrstor` faults,
    // which `fxrstor_fixup` turns into a failure here.
    unsafe { cfslab_fxrstor_user(image.as_ptr()) == 0 }
}

// `fxrstor` of an image in a program's memory, the one kernel instruction a program may
// make fault: between the check of its MXCSR and this load, a thread of the program on
// another CPU may store reserved bits there, and `fxrstor` then raises #GP in ring 0. The
// instruction is the function's first, so at the fault the stack is as at its entry, and
// the handler resumes at `cfslab_fxrstor_user_fixup` ([`fxrstor_fixup`]), which returns
// 1 where the load returns 0: Linux's exception-table fix-up for its `fxrstor_safe`.
core::arch::global_asm!(
    ".pushsection .text.cfslab_fxrstor_user, \"ax\"",
    ".global cfslab_fxrstor_user",
    "cfslab_fxrstor_user:",
    "fxrstor64 [rdi]",
    "xor eax, eax",
    "ret",
    ".global cfslab_fxrstor_user_fixup",
    "cfslab_fxrstor_user_fixup:",
    "mov eax, 1",
    "ret",
    ".popsection",
);

unsafe extern "C" {
    /// Loads the FPU image at `image` (512 bytes aligned to 16): 0, or 1 if it faulted.
    fn cfslab_fxrstor_user(image: *const u8) -> u32;
    fn cfslab_fxrstor_user_fixup();
}

/// Where a general-protection fault in the kernel at `rip` resumes, if it is the one
/// allowed there (see `cfslab_fxrstor_user`); `None` for any other, which is fatal.
pub(super) fn fxrstor_fixup(rip: u64) -> Option<u64> {
    let load = cfslab_fxrstor_user as *const () as u64;
    (rip == load).then_some(cfslab_fxrstor_user_fixup as *const () as u64)
}

/// The FPU's state after `execve` (see [`UserCpuState::initial`]), made once.
static INITIAL_FPU: FxArea = initial_fx();

/// A clean FPU for a signal handler (the FS base stays): as after `execve`.
pub fn reset_fpu() {
    // SAFETY: the reset state, with a valid MXCSR; 512 bytes aligned to 16.
    unsafe { core::arch::asm!("fxrstor64 [{}]", in(reg) &raw const INITIAL_FPU, options(nostack)) };
}

/// Points FS at `base` for the running task (`arch_prctl(ARCH_SET_FS)`). The caller has
/// checked that `base` is a canonical user address; a non-canonical one would fault in
/// `wrmsr`.
pub fn set_fs_base(base: u64) {
    FsBase::write(VirtAddr::new_truncate(base));
}

/// The running task's FS base (`arch_prctl(ARCH_GET_FS)`).
pub fn fs_base() -> u64 {
    FsBase::read().as_u64()
}

/// Turns on the FPU and SSE for ring 3: no emulation (CR0.EM clear), `wait` honours TS
/// (CR0.MP), x87 errors as exceptions (CR0.NE), `fxsave`/`fxrstor` and SSE instructions
/// allowed (CR4.OSFXSR) with SIMD exceptions as #XM (CR4.OSXMMEXCPT). Then resets the FPU so
/// the first user task's `initial` state is what it finds. Sets UMIP where the CPU has it.
pub fn enable() {
    let mut cr0 = Cr0::read();
    cr0.remove(Cr0Flags::EMULATE_COPROCESSOR | Cr0Flags::TASK_SWITCHED);
    cr0.insert(Cr0Flags::MONITOR_COPROCESSOR | Cr0Flags::NUMERIC_ERROR);
    // SAFETY: only the FPU's behaviour changes; the kernel does not use it.
    unsafe { Cr0::write(cr0) };
    let mut cr4 = Cr4::read();
    cr4.insert(Cr4Flags::OSFXSR | Cr4Flags::OSXMMEXCPT_ENABLE);
    if has_umip() {
        cr4.insert(Cr4Flags::USER_MODE_INSTRUCTION_PREVENTION);
    }
    // SAFETY: as above; the CPU QEMU emulates has SSE2 (every x86_64 CPU does), and UMIP
    // only where CPUID says so.
    unsafe { Cr4::write(cr4) };
    UserCpuState::initial().restore();
    let mut probe = UserCpuState::initial();
    probe.save();
    let mask = u32::from_le_bytes([
        probe.fx.0[28],
        probe.fx.0[29],
        probe.fx.0[30],
        probe.fx.0[31],
    ]);
    // A CPU that reports no mask has Intel's default one.
    if mask != 0 {
        MXCSR_MASK.store(mask, core::sync::atomic::Ordering::Relaxed);
    }
}

/// Whether the CPU has UMIP (CPUID leaf 7, ECX bit 2). With CR4.UMIP set, `sgdt`, `sidt`,
/// `sldt`, `smsw` and `str` fault in ring 3 (#GP, so SIGSEGV) instead of showing a program
/// where the kernel's tables are, as Linux sets it where the CPU has it (`setup_umip`).
/// Linux 5.10+ then answers them with dummy values for old programs (Wine), and so does
/// cfslab (`user::umip`).
fn has_umip() -> bool {
    // Leaf 0 gives the highest leaf: leaf 7 is read only where it exists.
    use core::arch::x86_64::{__cpuid, __cpuid_count};
    __cpuid(0).eax >= 7 && __cpuid_count(7, 0).ecx & (1 << 2) != 0
}

/// The `si_code` of an x87 floating-point error (#MF) in the running program: the first of
/// the exceptions its status word raised and its control word unmasks, in the order
/// Linux's `fpu__exception_code` tries them (invalid, divide by zero, overflow, underflow
/// or denormal, precision).
pub fn x87_exception_code() -> i32 {
    let (mut status, mut control) = (0u16, 0u16);
    // SAFETY: stores the live x87 status and control words (the program's: the kernel
    // does not use the FPU) into two locals.
    unsafe {
        core::arch::asm!(
            "fnstsw [{s}]", "fnstcw [{c}]",
            s = in(reg) &raw mut status, c = in(reg) &raw mut control,
            options(nostack),
        )
    };
    fpe_code(u32::from(status & !control))
}

/// The `si_code` of a SIMD floating-point error (#XM): as [`x87_exception_code`], from
/// MXCSR, whose mask bits sit 7 above its flags.
pub fn simd_exception_code() -> i32 {
    let mut mxcsr = 0u32;
    // SAFETY: stores the live MXCSR (the program's) into a local.
    unsafe { core::arch::asm!("stmxcsr [{}]", in(reg) &raw mut mxcsr, options(nostack)) };
    fpe_code(mxcsr & !(mxcsr >> 7))
}

/// FPE_FLTINV, FPE_FLTDIV, FPE_FLTOVF, FPE_FLTUND, FPE_FLTRES for the first raised
/// exception bit in `raised` (the x87 and MXCSR layouts agree on the low six); 0 if none.
fn fpe_code(raised: u32) -> i32 {
    match raised & 0x3f {
        r if r & 0x01 != 0 => 7,
        r if r & 0x04 != 0 => 3,
        r if r & 0x08 != 0 => 4,
        r if r & 0x12 != 0 => 5,
        r if r & 0x20 != 0 => 6,
        _ => 0,
    }
}

/// The debug status (DR6) of the #DB just taken, reset for the next one (the CPU sets its
/// bits but never clears them): bit 14 (BS) for a single step, bits 0-3 for a hardware
/// breakpoint.
pub fn take_debug_status() -> u64 {
    const RESET: u64 = 0xffff_0ff0;
    let status: u64;
    // SAFETY: reading and writing DR6 in ring 0 only reports and resets what the last
    // debug exception was; the value written is the register's reset state.
    unsafe {
        core::arch::asm!("mov {}, dr6", out(reg) status, options(nomem, nostack));
        core::arch::asm!("mov dr6, {}", in(reg) RESET, options(nomem, nostack));
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test_case]
    fn an_fpu_load_that_faults_fails_and_the_kernel_goes_on() {
        // Two images side by side, aligned to 16: one starting 8 bytes in is misaligned, on
        // which `fxrstor` raises #GP — the fault a reserved MXCSR bit raises on hardware
        // (QEMU's `fxrstor` does not check MXCSR, but does check alignment).
        #[repr(C, align(16))]
        struct Two([u8; 2 * FPU_BYTES]);
        let mut two = Two([0; 2 * FPU_BYTES]);
        two.0[..FPU_BYTES].copy_from_slice(&initial_fx().0);
        two.0[8..8 + FPU_BYTES].copy_from_slice(&initial_fx().0);
        // SAFETY: 512 readable bytes; misaligned, so the load faults and is caught.
        assert_eq!(unsafe { cfslab_fxrstor_user(two.0[8..].as_ptr()) }, 1);
        two.0[..FPU_BYTES].copy_from_slice(&initial_fx().0);
        // SAFETY: 512 bytes aligned to 16, a valid image.
        assert_eq!(unsafe { cfslab_fxrstor_user(two.0.as_ptr()) }, 0);
        reset_fpu();
    }
}
