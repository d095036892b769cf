//! Ring 3 and the kernel: the registers an entry from ring 3 saves ([`TrapFrame`]), the
//! kernel stack ring 3 lands on, the first entry into a program, and the one way back to
//! ring 3 ([`return_to_user`]: SYSRET where it can, `iretq` where it must). One CPU: the two
//! statics below are only touched with interrupts off.
//!
//! A leaf: the entries that fill a frame and call up into the kernel are `syscall.rs`
//! (SYSCALL) and `interrupts.rs` (the device interrupts).

use super::gdt::{USER_CS, USER_DS};

/// The registers of the code an entry interrupted, as the entry saved them on the kernel
/// stack, lowest address first: Linux's `struct pt_regs`, in its order. A system call and
/// an interrupt leave the same frame, so that what happens on the way back to ring 3 — a
/// signal handler's frame, `rt_sigreturn`, a restarted call — has one shape to work on.
///
/// The dispatcher reads a call's number and arguments here and writes its result into
/// `rax`; a forked child starts from a copy of it; a signal's delivery saves it on the user
/// stack and points `rip` at the handler.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct TrapFrame {
    pub r15: u64,
    pub r14: u64,
    pub r13: u64,
    pub r12: u64,
    pub rbp: u64,
    pub rbx: u64,
    /// After SYSCALL: the user's rflags (SYSCALL's copy; the user's own r11 is lost).
    pub r11: u64,
    /// Arguments 4, 5 and 6 of a system call are r10, r8 and r9.
    pub r10: u64,
    pub r9: u64,
    pub r8: u64,
    /// A system call's number in, its result out.
    pub rax: u64,
    /// After SYSCALL: the user's rip (SYSCALL's copy; the user's own rcx is lost).
    pub rcx: u64,
    /// Arguments 3, 2 and 1.
    pub rdx: u64,
    pub rsi: u64,
    pub rdi: u64,
    /// The system call's number as it came in, kept when `rax` takes the result, so that
    /// an interrupted call can be issued again (`SA_RESTART`); [`NOT_A_SYSCALL`] for an
    /// interrupt.
    pub orig_rax: u64,
    /// Keeps the frame a multiple of 16 bytes, so that the entries call Rust with the
    /// stack aligned as the ABI wants (`pt_regs` has no such word).
    pub align: u64,
    /// What `iretq` pops (and the CPU pushed for an interrupt).
    pub rip: u64,
    pub cs: u64,
    pub rflags: u64,
    pub rsp: u64,
    pub ss: u64,
}

/// `orig_rax` of a frame an interrupt made (Linux's -1).
pub const NOT_A_SYSCALL: u64 = u64::MAX;

impl TrapFrame {
    /// The frame a new program starts from: at `entry`, with the stack pointer `user_sp`,
    /// every general register zero and interrupts on.
    pub fn new_program(entry: u64, user_sp: u64) -> TrapFrame {
        TrapFrame {
            orig_rax: NOT_A_SYSCALL,
            rip: entry,
            cs: USER_CS,
            rflags: USER_RFLAGS_SET,
            rsp: user_sp,
            ss: USER_DS,
            ..TrapFrame::default()
        }
    }

    /// Whether the entry came from ring 3.
    pub fn from_user(&self) -> bool {
        self.cs & 3 == 3
    }

    /// Sets the user's rflags to `flags` as far as a program may choose them: the
    /// arithmetic flags, the direction flag, single-step and resume (Linux's `FIX_EFLAGS`);
    /// interrupts stay on and the I/O privilege level 0, whatever a signal frame says.
    pub fn set_user_rflags(&mut self, flags: u64) {
        self.rflags = (flags & USER_RFLAGS_CHOSEN) | USER_RFLAGS_SET;
    }
}

/// rflags bits a program chooses: CF, PF, AF, ZF, SF, TF, DF, OF, RF, AC.
const USER_RFLAGS_CHOSEN: u64 =
    1 | 1 << 2 | 1 << 4 | 1 << 6 | 1 << 7 | 1 << 8 | 1 << 10 | 1 << 11 | 1 << 16 | 1 << 18;
/// rflags bits always set in ring 3: IF, and bit 1, which is always one.
const USER_RFLAGS_SET: u64 = 1 << 9 | 1 << 1;

/// The kernel stack interrupts and system calls from ring 3 land on: the next task's.
/// Called by the scheduler as it switches (interrupts off).
pub fn set_kernel_stack(top: u64) {
    super::gdt::set_kernel_stack(top);
    super::cpu_local::write::<{ super::cpu_local::KERNEL_RSP }>(top);
}

/// Restores the [`TrapFrame`] at rsp and returns to ring 3: the way back from every system
/// call, and a forked child's and a new program's first way there.
///
/// SYSRET is the cheap way, but it takes rip from rcx and rflags from r11. So it is used
/// only when the frame's rcx and r11 hold those (as SYSCALL left them); a frame the kernel
/// rewrote — a signal handler's entry, `rt_sigreturn`, a new program — returns with
/// `iretq`, which restores every register, as Linux's `syscall_return_via_sysret` decides.
///
/// # Safety
/// Interrupts off, and rsp pointing at a [`TrapFrame`] of the running process whose cs and
/// ss are the user segments and whose rip is a canonical user address (SYSRET would fault
/// in ring 0 on a non-canonical one).
#[unsafe(naked)]
pub unsafe extern "C" fn return_to_user() {
    core::arch::naked_asm!(
        "pop r15",
        "pop r14",
        "pop r13",
        "pop r12",
        "pop rbp",
        "pop rbx",
        "pop r11",
        "pop r10",
        "pop r9",
        "pop r8",
        "pop rax",
        "pop rcx",
        "pop rdx",
        "pop rsi",
        "pop rdi",
        // orig_rax and the alignment word.
        "add rsp, 16",
        // Ring 3's GS base back in place (`cpu_local`): from here on, nothing may use GS.
        "swapgs",
        "cmp rcx, [rsp]",
        "jne 2f",
        "cmp r11, [rsp + 16]",
        "jne 2f",
        "mov rsp, [rsp + 24]",
        "sysretq",
        "2:",
        "iretq",
    )
}

/// Returns to ring 3 with the registers in `frame`: a forked child's first return, or a
/// new program's first instruction.
///
/// # Safety
/// Interrupts off; the running task's address space maps `frame.rip` and `frame.rsp`, and
/// the kernel stack for its interrupts is set ([`set_kernel_stack`]).
pub unsafe fn resume_user(frame: &TrapFrame) -> ! {
    // SAFETY: `frame` is a TrapFrame on this stack; `return_to_user` pops it from rsp
    // upwards and leaves the kernel stack for good.
    unsafe {
        core::arch::asm!(
            "mov rsp, {frame}",
            "jmp {exit}",
            frame = in(reg) frame as *const TrapFrame,
            exit = sym return_to_user,
            options(noreturn),
        )
    }
}

/// Enters ring 3 for the first time: at `entry`, with the stack pointer `user_sp`, every
/// general register zero and interrupts on.
///
/// # Safety
/// As [`resume_user`].
pub unsafe fn enter_user(entry: u64, user_sp: u64) -> ! {
    let frame = TrapFrame::new_program(entry, user_sp);
    // SAFETY: the caller's promises are `resume_user`'s.
    unsafe { resume_user(&frame) }
}
