//! The context switch: save the running task's callee-saved registers and flags on its
//! stack, remember its stack pointer, load the next task's, restore its registers, return
//! into it. Everything else a task needs is on its stack already (caller-saved registers,
//! saved by the compiler around the call), or is a user task's own and switched beside this
//! by the scheduler: its FPU/SSE registers and FS base ([`super::user_state`], which the
//! kernel itself never uses: x86_64-unknown-none is soft-float), its address space and its
//! ring-3 kernel stack ([`prepare`]).
//!
//! A new task's stack is laid out by [`initial_stack`] so that the first switch "returns"
//! into [`task_trampoline`], which calls the entry the scheduler gave (its `task_entry`).
//! Arch names nothing above it: the entry travels in the new task's saved r12.

/// Saves the current context, storing its stack pointer at `*save_rsp`, and resumes the
/// context whose stack pointer is `load_rsp`.
///
/// # Safety
/// Interrupts must be off; `save_rsp` must be valid for a write; `load_rsp` must be a stack
/// pointer saved by this function or prepared by [`initial_stack`], on a live stack.
#[unsafe(naked)]
pub unsafe extern "C" fn switch_context(save_rsp: *mut u64, load_rsp: u64) {
    core::arch::naked_asm!(
        "push rbp",
        "push rbx",
        "push r12",
        "push r13",
        "push r14",
        "push r15",
        "pushfq",
        "mov [rdi], rsp",
        "mov rsp, rsi",
        "popfq",
        "pop r15",
        "pop r14",
        "pop r13",
        "pop r12",
        "pop rbx",
        "pop rbp",
        "ret",
    )
}

/// Where a new task starts: calls the entry its first switch restored into r12, which
/// never returns.
#[unsafe(naked)]
extern "C" fn task_trampoline() {
    core::arch::naked_asm!("call r12", "ud2")
}

/// Prepares the stack whose top is `top` (16-byte aligned) so that switching to the returned
/// stack pointer starts `task_trampoline` with interrupts off, which calls `entry`.
///
/// # Safety
/// `top` must be the top of a mapped, unused stack of at least 64 bytes.
pub unsafe fn initial_stack(top: u64, entry: extern "C" fn() -> !) -> u64 {
    // From the top down: the return address `ret` will take, then rbp, rbx, r12, r13, r14,
    // r15 and rflags in the order `switch_context` pops them. After `ret` the stack pointer is
    // `top`, 16-byte aligned, so the trampoline's `call` sees the alignment the ABI wants.
    let frame: [u64; 8] = [
        0x2,                       // rflags: interrupts off (task_entry enables them)
        0,                         // r15
        0,                         // r14
        0,                         // r13
        entry as *const () as u64, // r12: what the trampoline calls
        0,                         // rbx
        0,                         // rbp
        task_trampoline as *const () as u64,
    ];
    let rsp = top - 8 * frame.len() as u64;
    // SAFETY: the caller guarantees the 64 bytes below `top` are mapped and unused.
    unsafe { core::ptr::copy_nonoverlapping(frame.as_ptr(), rsp as *mut u64, frame.len()) };
    rsp
}

/// The kernel's own level-4 table (the bootloader's), loaded whenever a kernel thread
/// follows a user process: the process's table may be freed once it has exited.
static KERNEL_CR3: spin::Once<x86_64::structures::paging::PhysFrame> = spin::Once::new();

/// Before switching to a task: its address space (`None` for a kernel thread, which keeps
/// the kernel's) and, for a process, the kernel stack its interrupts and system calls from
/// ring 3 use. Interrupts must be off.
pub fn prepare(
    address_space: Option<x86_64::structures::paging::PhysFrame>,
    kernel_stack_top: u64,
) {
    use x86_64::registers::control::Cr3;
    let kernel = *KERNEL_CR3.call_once(|| Cr3::read().0);
    let wanted = address_space.unwrap_or(kernel);
    // What this CPU's CR3 holds (0: the bootloader's table, not yet switched from).
    let loaded = super::cpu_local::read::<{ super::cpu_local::LOADED_CR3 }>();
    let wanted_address = wanted.start_address().as_u64();
    if loaded != wanted_address {
        if loaded != 0 || wanted != kernel {
            let (_, flags) = Cr3::read();
            // SAFETY: `wanted` is the kernel's table or a process's, whose upper half is the
            // kernel's: the code and stack running now stay mapped.
            unsafe { Cr3::write(wanted, flags) };
        }
        super::cpu_local::write::<{ super::cpu_local::LOADED_CR3 }>(wanted_address);
    }
    // Only a task with an address space of its own can be in ring 3: a kernel thread never
    // changes rings, so the stack for ring changes may stay the last process's (a kernel
    // thread becomes a process only through exec, whose `replace_program` sets it).
    if address_space.is_some() && kernel_stack_top != 0 {
        super::user_mode::set_kernel_stack(kernel_stack_top);
    }
}
