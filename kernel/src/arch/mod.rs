//! Hardware lives here and only here. cfslab runs on one architecture, x86_64 under QEMU;
//! everything outside `arch/` talks to the machine through the modules re-exported below
//! (the `x86_64` crate is named nowhere else). Arch is a leaf: its entry code calls up into
//! the kernel only through `crate::trap`.

pub mod x86_64;

pub use self::x86_64::irq::halt_forever;
pub use self::x86_64::{
    acpi, ap_start, apic, cpu_local, cpuid, fault, fw_cfg, gdt, init, init_ap, interrupts, irq,
    paging, pic, pit, qemu_exit, ring3_fingerprint, serial, switch, syscall, tsc, user_mode,
    user_state,
};
