//! The exceptions a program can cause (a divide error, a breakpoint, an invalid opcode, a
//! general-protection or page fault, ...): entries that save every register in a
//! [`TrapFrame`], as a device interrupt's do, so that the signal the exception turns into
//! can show the program's registers to its handler (in the `ucontext`) and return to
//! whatever the handler leaves there (Linux's `idtentry` entries, arch/x86/entry/entry_64.S).
//! What the exception means is decided above: `crate::trap::user_exception` in ring 3; in
//! the kernel a breakpoint is counted and resumed, the one `fxrstor` of a program's FPU image
//! that may fault resumes at its fix-up (`user_state::fxrstor_fixup`), and anything else is
//! fatal ([`fatal`], which a test may replace with [`set_fatal_hook`]; `interrupts` uses it
//! too).

use super::fault::{Fault, PAGE_FAULT_VECTOR};
use super::trap_entry::trap_entry;
use super::user_mode::TrapFrame;
use core::sync::atomic::{AtomicU64, Ordering};
use spin::Once;
use x86_64::registers::control::Cr2;
use x86_64::structures::idt::PageFaultErrorCode;

static FATAL_HOOK: Once<fn(&Fault) -> !> = Once::new();

/// Replaces the default ending of a fatal exception (print, exit as failure). Only the
/// first call has an effect. Meant for tests whose success *is* a fault.
pub fn set_fatal_hook(hook: fn(&Fault) -> !) {
    FATAL_HOOK.call_once(|| hook);
}

/// An exception the kernel cannot survive: a test's hook if one is set, else the kernel's
/// report and the end of the run (`trap::kernel_exception`).
pub(super) fn fatal(fault: Fault) -> ! {
    // A fault between a `swapgs` and its ring change has ring 3's GS base in place.
    super::cpu_local::ensure_kernel_base();
    if let Some(hook) = FATAL_HOOK.get() {
        hook(&fault);
    }
    crate::trap::kernel_exception(&fault)
}

/// An address on the current stack: good enough to tell which stack we are on.
pub(super) fn current_stack_address() -> u64 {
    let marker = 0u8;
    core::ptr::addr_of!(marker) as u64
}

/// An exception a program can cause: `$handler` describes it, and its entry
/// (`trap_entry`) saves every register in a [`TrapFrame`], so that the signal it turns into
/// can show the program's registers to a handler (in the `ucontext`) and return to whatever
/// the handler leaves there.
macro_rules! program_exception {
    ($entry:ident, $handler:ident, $what:expr) => {
        extern "C" fn $handler(frame: &mut TrapFrame) {
            exception(frame, $what, None)
        }
        trap_entry!($entry, $handler);
    };
    ($entry:ident, $handler:ident, $what:expr, error_code) => {
        extern "C" fn $handler(frame: &mut TrapFrame) {
            let code = frame.align;
            exception(frame, $what, Some(code))
        }
        trap_entry!($entry, $handler, error_code);
    };
}

program_exception!(divide_error_entry, divide_error, ("divide error", "#DE", 0));
program_exception!(debug_entry, debug, ("debug", "#DB", 1));
program_exception!(breakpoint_entry, breakpoint, ("breakpoint", "#BP", 3));
program_exception!(overflow_entry, overflow, ("overflow", "#OF", 4));
program_exception!(
    bound_range_exceeded_entry,
    bound_range_exceeded,
    ("bound range exceeded", "#BR", 5)
);
program_exception!(
    invalid_opcode_entry,
    invalid_opcode,
    ("invalid opcode", "#UD", 6)
);
program_exception!(
    segment_not_present_entry,
    segment_not_present,
    ("segment not present", "#NP", 11),
    error_code
);
program_exception!(
    stack_segment_fault_entry,
    stack_segment_fault,
    ("stack-segment fault", "#SS", 12),
    error_code
);
program_exception!(
    general_protection_fault_entry,
    general_protection_fault,
    ("general protection fault", "#GP", 13),
    error_code
);
program_exception!(
    page_fault_entry,
    page_fault,
    ("page fault", "#PF", PAGE_FAULT_VECTOR),
    error_code
);
program_exception!(
    x87_floating_point_entry,
    x87_floating_point,
    ("x87 floating-point error", "#MF", 16)
);
program_exception!(
    alignment_check_entry,
    alignment_check,
    ("alignment check", "#AC", 17),
    error_code
);
program_exception!(
    simd_floating_point_entry,
    simd_floating_point,
    ("SIMD floating-point error", "#XM", 19)
);

/// What the exception `what` means, wherever it came from: in ring 3 it is the program's
/// (`trap::user_exception` turns it into a signal, after a page fault had its chance to be
/// resolved); in the kernel, a breakpoint is counted and resumed, and anything else is
/// fatal.
fn exception(
    frame: &mut TrapFrame,
    what: (&'static str, &'static str, u8),
    error_code: Option<u64>,
) {
    let fault = Fault {
        name: what.0,
        mnemonic: what.1,
        vector: what.2,
        error_code,
        instruction_pointer: frame.rip,
        stack_pointer: frame.rsp,
        handler_stack_pointer: current_stack_address(),
        fault_address: (what.2 == PAGE_FAULT_VECTOR).then(Cr2::read_raw),
    };
    if !frame.from_user() {
        if fault.vector == 3 {
            BREAKPOINTS.fetch_add(1, Ordering::Relaxed);
            log::debug!("breakpoint (#BP) at rip={:#x}", frame.rip);
            return;
        }
        if fault.vector == 13
            && let Some(resume) = super::user_state::fxrstor_fixup(frame.rip)
        {
            frame.rip = resume;
            return;
        }
        fatal(fault)
    }
    if let (Some(address), Some(code)) = (fault.fault_address, error_code)
        && resolved_page_fault(address, PageFaultErrorCode::from_bits_truncate(code))
    {
        return;
    }
    crate::trap::user_exception(frame, &fault)
}

/// Whether a page fault in ring 3 was the program's due and is resolved, so that the
/// access runs again: a store to a page it shares copy-on-write since a fork (it gets its
/// own copy), or a first touch of a stack page (mapped now).
fn resolved_page_fault(address: u64, code: PageFaultErrorCode) -> bool {
    let write = code.contains(PageFaultErrorCode::CAUSED_BY_WRITE);
    if code.contains(PageFaultErrorCode::PROTECTION_VIOLATION) {
        write && crate::trap::user_page_fault(address, true, true)
    } else {
        crate::trap::user_page_fault(address, write, false)
    }
}

static BREAKPOINTS: AtomicU64 = AtomicU64::new(0);

/// How many `int3` breakpoints the kernel has taken (and resumed from) so far.
pub fn breakpoint_count() -> u64 {
    BREAKPOINTS.load(Ordering::Relaxed)
}
