//! Ring 3 and the kernel: the registers a system call saves ([`SyscallFrame`]), the kernel
//! stack ring 3 lands on, the first entry into a program, and the way back to one (SYSRET,
//! or `iretq` the first time). One CPU: the two statics below are only touched with
//! interrupts off.
//!
//! A leaf: the entry that fills a frame and calls up into the kernel is `syscall.rs`.

use super::gdt;
use x86_64::registers::rflags::RFlags;

/// What the entry path leaves on the kernel stack, lowest address first — the reverse of
/// the push order in [`syscall_entry`]. The dispatcher reads the number and the arguments
/// here, writes the result into `rax`, and a forked child starts from a copy of it.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SyscallFrame {
    pub r15: u64,
    pub r14: u64,
    pub r13: u64,
    pub r12: u64,
    pub rbp: u64,
    pub rbx: u64,
    /// Arguments 6, 5, 4, 3, 2, 1 (Linux's order: rdi, rsi, rdx, r10, r8, r9).
    pub r9: u64,
    pub r8: u64,
    pub r10: u64,
    pub rdx: u64,
    pub rsi: u64,
    pub rdi: u64,
    /// The call's number in, its result out.
    pub rax: u64,
    /// The user's rflags (SYSCALL put them in r11) and rip (in rcx).
    pub rflags: u64,
    pub rip: u64,
    /// The user's stack pointer.
    pub rsp: u64,
}

/// The user's rsp between SYSCALL and the first push (interrupts are off there).
pub(super) static mut USER_RSP: u64 = 0;
/// The top of the running task's kernel stack, where a SYSCALL's frame goes.
pub(super) static mut KERNEL_RSP: u64 = 0;

/// The kernel stack interrupts and system calls from ring 3 land on: the next task's.
/// Called by the scheduler as it switches (interrupts off).
pub fn set_kernel_stack(top: u64) {
    gdt::set_kernel_stack(top);
    // SAFETY: interrupts are off (the scheduler is switching); only SYSCALL's entry reads it.
    unsafe { KERNEL_RSP = top };
}

/// Restores the [`SyscallFrame`] at rsp and returns to ring 3 with SYSRET. Reached from
/// [`syscall_entry`] after the dispatcher, and by a forked child's first switch (its stack
/// holds a copy of its parent's frame, rax = 0).
///
/// # Safety
/// Interrupts off, and rsp pointing at a [`SyscallFrame`] of the running process whose
/// rip and rsp are its own user addresses.
#[unsafe(naked)]
pub unsafe extern "C" fn return_to_user() {
    core::arch::naked_asm!(
        "pop r15", "pop r14", "pop r13", "pop r12", "pop rbp", "pop rbx", "pop r9", "pop r8",
        "pop r10", "pop rdx", "pop rsi", "pop rdi", "pop rax", "pop r11", "pop rcx", "pop rsp",
        "sysretq",
    )
}

/// Returns to ring 3 with the registers in `frame` (a forked child's first return).
///
/// # Safety
/// Interrupts off; the running task's address space maps `frame.rip` and `frame.rsp`.
pub unsafe fn resume_user(frame: &SyscallFrame) -> ! {
    // SAFETY: `frame` is a SyscallFrame on this stack; `return_to_user` pops it from rsp
    // upwards and leaves the kernel stack for good.
    unsafe {
        core::arch::asm!(
            "mov rsp, {frame}",
            "jmp {exit}",
            frame = in(reg) frame as *const SyscallFrame,
            exit = sym return_to_user,
            options(noreturn),
        )
    }
}

/// Enters ring 3 for the first time: at `entry`, with the stack pointer `user_sp`, every
/// general register zero and interrupts on (an `iretq` into the user segments).
///
/// # Safety
/// The running task's address space must map `entry` and the stack for ring 3, and the
/// kernel stack for its interrupts must be set ([`set_kernel_stack`]).
pub unsafe fn enter_user(entry: u64, user_sp: u64) -> ! {
    let s = gdt::selectors();
    // SAFETY: the caller vouches for the address space; the iretq frame is built on the
    // current kernel stack, which the task gives up for good.
    unsafe {
        core::arch::asm!(
            "push {ss}",
            "push {sp}",
            "push {flags}",
            "push {cs}",
            "push {entry}",
            "xor eax, eax",
            "xor ebx, ebx",
            "xor ecx, ecx",
            "xor edx, edx",
            "xor esi, esi",
            "xor edi, edi",
            "xor ebp, ebp",
            "xor r8d, r8d",
            "xor r9d, r9d",
            "xor r10d, r10d",
            "xor r11d, r11d",
            "xor r12d, r12d",
            "xor r13d, r13d",
            "xor r14d, r14d",
            "xor r15d, r15d",
            "iretq",
            ss = in(reg) u64::from(s.user_data.0),
            sp = in(reg) user_sp,
            flags = in(reg) (RFlags::INTERRUPT_FLAG | RFlags::from_bits_retain(0x2)).bits(),
            cs = in(reg) u64::from(s.user_code.0),
            entry = in(reg) entry,
            options(noreturn),
        )
    }
}
