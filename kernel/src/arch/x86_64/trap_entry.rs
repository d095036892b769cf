//! The one entry stub of every interrupt and exception a program can meet (Linux's
//! `idtentry` and its `error_entry`/`paranoid_entry` halves, arch/x86/entry/entry_64.S):
//! it saves every register in a [`TrapFrame`](super::user_mode::TrapFrame) below what the
//! CPU pushed, calls the handler with it, and returns with `iretq`, so that the handler can
//! see and change the interrupted registers (a signal handler's entry rewrites them).
//!
//! From ring 3 it also swaps GS (`cpu_local`) on the way in and out: the frame's cs says
//! where the CPU came from. An exception with an error code has it where the frame's
//! alignment word goes; the others push a zero there.

/// Defines the naked entry `$entry` that calls `$handler(&mut TrapFrame)`; `error_code`
/// marks the exceptions for which the CPU pushes one.
macro_rules! trap_entry {
    ($entry:ident, $handler:path) => {
        trap_entry!(@stub $entry, $handler, "push 0", 8);
    };
    ($entry:ident, $handler:path, error_code) => {
        trap_entry!(@stub $entry, $handler, "", 16);
    };
    (@stub $entry:ident, $handler:path, $alignment:literal, $cs_at:literal) => {
        #[unsafe(naked)]
        pub(super) extern "C" fn $entry() {
            core::arch::naked_asm!(
                // From ring 3 (cs's RPL): the kernel's GS base.
                concat!("test byte ptr [rsp + ", $cs_at, "], 3"),
                "jz 7f",
                "swapgs",
                "7:",
                $alignment,
                // orig_rax: not a system call.
                "push -1",
                "push rdi", "push rsi", "push rdx", "push rcx", "push rax", "push r8",
                "push r9", "push r10", "push r11", "push rbx", "push rbp", "push r12",
                "push r13", "push r14", "push r15",
                // The ABI wants the direction flag clear; ring 3 may have left it set.
                "cld",
                "mov rdi, rsp",
                "call {handler}",
                "pop r15", "pop r14", "pop r13", "pop r12", "pop rbp", "pop rbx", "pop r11",
                "pop r10", "pop r9", "pop r8", "pop rax", "pop rcx", "pop rdx", "pop rsi",
                "pop rdi",
                // orig_rax and the error code (or the alignment word).
                "add rsp, 16",
                // Back to ring 3: its GS base.
                "test byte ptr [rsp + 8], 3",
                "jz 8f",
                "swapgs",
                "8:",
                "iretq",
                handler = sym $handler,
            )
        }
    };
}

pub(super) use trap_entry;
