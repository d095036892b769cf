//! The NMI a gdb helper sends to wake a halted CPU. The helpers (`boot/gdb/cfslab.py`) call
//! a kernel function on CPU 0 with interrupts masked; a CPU stopped in its idle task's `hlt`
//! would never run that call (QEMU keeps a halted CPU halted until an interrupt it takes
//! arrives, and the masked ones cannot). So the helper marks every CPU here, then asks
//! QEMU's monitor for an NMI (`monitor nmi`, which QEMU sends to every CPU): a marked CPU
//! takes it as the debugger's, unmarks itself and returns from it — the halted one straight
//! into the call, the others whenever gdb lets them run again.
//!
//! Nothing else in the kernel sends or expects such an NMI: an NMI on an unmarked CPU is a
//! stop (`apic::send_stop`) or a fault, as before.

use core::sync::atomic::{AtomicBool, Ordering};

/// One flag per initial APIC id (CPUID leaf 1), which the helper sets through gdb before
/// its `monitor nmi`; QEMU's APIC ids of `-smp N` fit in the eight bits that leaf gives.
pub static DEBUGGER_NMI: [AtomicBool; 256] = [const { AtomicBool::new(false) }; 256];

/// Whether the NMI being handled is the debugger's: this CPU was marked, and is not any
/// more. Reads no per-CPU state (an NMI may arrive in ring 3, with the user's GS base).
pub fn take() -> bool {
    let apic_id = (super::cpuid::leaf(1).ebx >> 24) as usize;
    DEBUGGER_NMI[apic_id].swap(false, Ordering::SeqCst)
}
