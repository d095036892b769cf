//! Ending the run: QEMU's `isa-debug-exit` device (configured by the boot tool at I/O port
//! 0xf4, 4 bytes wide) makes QEMU exit with status `(value << 1) | 1` when the guest writes
//! `value` to it. The boot tool maps those statuses back to its own (see [`crate::ExitCode`]).

use x86_64::instructions::port::Port;

const ISA_DEBUG_EXIT_PORT: u16 = 0xf4;

/// Writes `value` to the debug-exit port. QEMU stops at once; on a machine without the
/// device the write is ignored, so the CPU is parked afterwards.
pub fn exit(value: u32) -> ! {
    // SAFETY: port 0xf4 is reserved for QEMU's debug-exit device in cfslab's machine
    // configuration; the write has no effect on memory.
    unsafe { Port::new(ISA_DEBUG_EXIT_PORT).write(value) };
    super::irq::halt_forever()
}
