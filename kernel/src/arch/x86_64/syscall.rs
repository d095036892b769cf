//! SYSCALL's entry: how a system call from ring 3 reaches the kernel.
//!
//! SYSCALL (set up in [`init`]: EFER.SCE, STAR's selectors, LSTAR's entry, SFMASK) jumps to
//! [`syscall_entry`] in ring 0 with the user's rip in rcx and rflags in r11, interrupts off
//! (SFMASK clears IF) and — unlike an interrupt — the *user's* stack pointer and GS base
//! still in place. The entry swaps in the kernel's GS base (this CPU's area, `cpu_local`),
//! saves rsp there, switches to the running task's kernel stack (the same top as the TSS's
//! rsp0, both set at every switch by `user_mode::set_kernel_stack`), saves every register in
//! a `TrapFrame` and calls up into `crate::trap::syscall`. The way back
//! (`user_mode::return_to_user`) restores them all, rax holding the result, and returns
//! with SYSRET (or `iretq` if the kernel rewrote the frame: a signal handler's entry).
//!
//! The one module of `arch` besides `interrupts` that calls up into the kernel: what ring 3
//! and the kernel exchange (the frame, the first entry into a program, the way back) is
//! `user_mode`'s, a leaf.

use super::gdt;
use x86_64::VirtAddr;
use x86_64::registers::model_specific::{Efer, EferFlags, LStar, SFMask, Star};
use x86_64::registers::rflags::RFlags;

/// Turns SYSCALL on and points it at [`syscall_entry`].
pub fn init() {
    let s = gdt::selectors();
    Star::write(s.user_code, s.user_data, s.kernel_code, s.kernel_data)
        .expect("the GDT's user segments are laid out for SYSRET");
    LStar::write(VirtAddr::new(syscall_entry as *const () as u64));
    // Interrupts off on entry (until the entry has a kernel stack); no single-stepping or
    // reversed string operations leak in from the user's flags.
    SFMask::write(RFlags::INTERRUPT_FLAG | RFlags::DIRECTION_FLAG | RFlags::TRAP_FLAG);
    // SAFETY: enabling SYSCALL/SYSRET changes nothing until a program executes SYSCALL.
    unsafe { Efer::update(|flags| flags.insert(EferFlags::SYSTEM_CALL_EXTENSIONS)) };
}

/// SYSCALL's entry (see the module's docs). It builds the same [`TrapFrame`] an interrupt
/// from ring 3 would, with SYSCALL's copies of rip and rflags (rcx, r11) in their places.
///
/// [`TrapFrame`]: super::user_mode::TrapFrame
#[unsafe(naked)]
unsafe extern "C" fn syscall_entry() {
    core::arch::naked_asm!(
        // The kernel's GS base (`cpu_local`): this CPU's area, where its stacks are noted.
        "swapgs",
        "mov gs:[{user_rsp}], rsp",
        "mov rsp, gs:[{kernel_rsp}]",
        // What an interrupt's CPU would have pushed: ss, rsp, rflags, cs, rip.
        "push {user_ds}",
        "push qword ptr gs:[{user_rsp}]",
        "push r11",
        "push {user_cs}",
        "push rcx",
        // The alignment word, then orig_rax: the call's number.
        "push 0",
        "push rax",
        "push rdi",
        "push rsi",
        "push rdx",
        "push rcx",
        "push rax",
        "push r8",
        "push r9",
        "push r10",
        "push r11",
        "push rbx",
        "push rbp",
        "push r12",
        "push r13",
        "push r14",
        "push r15",
        "mov rdi, rsp",
        "call {dispatch}",
        "jmp {exit}",
        user_rsp = const super::cpu_local::USER_RSP,
        kernel_rsp = const super::cpu_local::KERNEL_RSP,
        user_ds = const super::gdt::USER_DS,
        user_cs = const super::gdt::USER_CS,
        dispatch = sym crate::trap::syscall,
        exit = sym super::user_mode::return_to_user,
    )
}
