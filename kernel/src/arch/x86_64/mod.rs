//! The x86_64 machine as cfslab uses it under QEMU: the COM1 UART, the GDT/TSS, the IDT with
//! its exception and interrupt entries, SYSCALL's entry, the context switch and a user
//! task's FPU state, the interrupt flag, paging's vocabulary, the clock devices (TSC, local
//! APIC timer, PIT, the 8259 PIC), QEMU's fw_cfg device (boot options) and isa-debug-exit
//! (the exit status the host sees).

pub mod acpi;
pub mod ap_start;
pub mod apic;
pub mod cpu_local;
pub mod cpuid;
mod exceptions;
pub mod fault;
pub mod fw_cfg;
pub mod gdt;
pub mod interrupts;
pub mod irq;
pub mod paging;
pub mod pic;
pub mod pit;
pub mod qemu_exit;
pub mod serial;
pub mod switch;
pub mod syscall;
mod trap_entry;
pub mod tsc;
pub mod user_mode;
pub mod user_state;

/// Brings up the CPU: first the GDT (with the TSS and its double-fault stack), then the
/// IDT, which refers to the TSS's stacks, then SYSCALL and the FPU state user tasks keep.
/// Interrupts stay disabled: `time::init` enables them once the clock devices are set.
pub fn init() {
    gdt::init();
    interrupts::init();
    syscall::init();
    user_state::enable();
}
