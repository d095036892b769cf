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
pub mod debugger_nmi;
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

/// Brings up an AP as [`init`] brought up the boot CPU — its own GDT and TSS, then the one
/// IDT, SYSCALL and the FPU state — for each CPU has its own copy of these registers.
pub fn init_ap() {
    gdt::init_ap();
    interrupts::init();
    syscall::init();
    user_state::enable();
}

/// A fingerprint of the registers a program in ring 3 depends on: the bits of CR0, CR4 and
/// EFER that change what it may do or how it runs (paging and protection, the FPU and SSE,
/// UMIP, RDTSC and RDPMC, FSGSBASE, XSAVE, SMEP/SMAP, protection keys; SYSCALL, NX) and
/// SYSCALL's STAR, LSTAR and SFMASK. Each CPU must have the boot CPU's, or a program would
/// run differently there (`cpus::bring_up` compares them); the other bits (caching,
/// machine checks, global pages) may differ from CPU to CPU without a program seeing it.
pub fn ring3_fingerprint() -> u64 {
    use x86_64::registers::control::{Cr0, Cr0Flags, Cr4, Cr4Flags};
    use x86_64::registers::model_specific::{Efer, EferFlags, LStar, SFMask, Star};
    let cr0 = Cr0Flags::PROTECTED_MODE_ENABLE
        | Cr0Flags::MONITOR_COPROCESSOR
        | Cr0Flags::EMULATE_COPROCESSOR
        | Cr0Flags::TASK_SWITCHED
        | Cr0Flags::NUMERIC_ERROR
        | Cr0Flags::WRITE_PROTECT
        | Cr0Flags::ALIGNMENT_MASK
        | Cr0Flags::PAGING;
    let cr4 = Cr4Flags::TIMESTAMP_DISABLE
        | Cr4Flags::PERFORMANCE_MONITOR_COUNTER
        | Cr4Flags::OSFXSR
        | Cr4Flags::OSXMMEXCPT_ENABLE
        | Cr4Flags::USER_MODE_INSTRUCTION_PREVENTION
        | Cr4Flags::FSGSBASE
        | Cr4Flags::OSXSAVE
        | Cr4Flags::SUPERVISOR_MODE_EXECUTION_PROTECTION
        | Cr4Flags::SUPERVISOR_MODE_ACCESS_PREVENTION
        | Cr4Flags::PROTECTION_KEY_USER;
    let efer = EferFlags::SYSTEM_CALL_EXTENSIONS
        | EferFlags::LONG_MODE_ACTIVE
        | EferFlags::NO_EXECUTE_ENABLE;
    let (star_sysret, star_syscall) = Star::read_raw();
    let words = [
        Cr0::read_raw() & cr0.bits(),
        Cr4::read_raw() & cr4.bits(),
        Efer::read_raw() & efer.bits(),
        u64::from(star_sysret) << 16 | u64::from(star_syscall),
        LStar::read().as_u64(),
        SFMask::read().bits(),
    ];
    // FNV-1a over the words: equal registers give equal fingerprints, and one changed bit
    // changes it.
    words.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &word| {
        (hash ^ word).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
