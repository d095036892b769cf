//! The Interrupt Descriptor Table: the entries of the CPU exceptions and of the device
//! interrupts (the APIC timer, the PIT, the serial port). Each entry only reads what the
//! hardware hands it (the frame, the error code, CR2) and calls up through `crate::trap`,
//! which decides what happens. The device interrupts save every register in a
//! [`TrapFrame`], as SYSCALL's entry does, so that their way back to ring 3 can run a
//! signal handler.
//!
//! Every architecturally defined exception has a handler. Those a program can cause have
//! entries of their own (`exceptions`): a breakpoint (`int3`) in the kernel is counted,
//! logged and resumed; a page fault in ring 3 may be resolved (a copy-on-write store, a
//! first touch of a stack page); any other exception in ring 3 is the program's signal
//! (`crate::trap::user_exception`). The others (an NMI, a #TS, ...) in ring 3 kill the
//! program that raised it. An exception in the kernel is fatal: it is described in one
//! line (name, vector, error code, RIP, and CR2 for a page fault) and the run ends as a
//! failure. The double fault runs on its own IST stack (see [`super::gdt`]) so that a kernel
//! stack overflow is still reported instead of becoming a silent triple fault.
//!
//! Tests replace the fatal ending with [`set_fatal_hook`] to check what was reported.

use spin::Lazy;
use x86_64::registers::control::Cr2;
use x86_64::structures::idt::{InterruptDescriptorTable, InterruptStackFrame};

// What a fault report holds is `fault.rs`'s; the entries below fill it in.
use super::exceptions::{
    alignment_check_entry, bound_range_exceeded_entry, breakpoint_entry, current_stack_address,
    debug_entry, divide_error_entry, fatal, general_protection_fault_entry, invalid_opcode_entry,
    overflow_entry, page_fault_entry, segment_not_present_entry, simd_floating_point_entry,
    stack_segment_fault_entry, x87_floating_point_entry,
};
pub use super::exceptions::{breakpoint_count, set_fatal_hook};
use super::fault::{Fault, PAGE_FAULT_VECTOR};
use super::gdt::{DOUBLE_FAULT_IST_INDEX, NMI_IST_INDEX};
use super::trap_entry::trap_entry;
use super::user_mode::TrapFrame;

fn describe(
    (name, mnemonic, vector): (&'static str, &'static str, u8),
    frame: &InterruptStackFrame,
    error_code: Option<u64>,
) -> Fault {
    let fault_address = (vector == PAGE_FAULT_VECTOR).then(Cr2::read_raw);
    Fault {
        name,
        mnemonic,
        vector,
        error_code,
        instruction_pointer: frame.instruction_pointer.as_u64(),
        stack_pointer: frame.stack_pointer.as_u64(),
        handler_stack_pointer: current_stack_address(),
        fault_address,
    }
}

/// Defines a fatal handler; `error_code` marks the exceptions for which the CPU pushes one.
macro_rules! fatal_handler {
    ($handler:ident, $what:expr) => {
        extern "x86-interrupt" fn $handler(frame: InterruptStackFrame) {
            fault_or_fatal(describe($what, &frame, None), &frame)
        }
    };
    ($handler:ident, $what:expr, error_code) => {
        extern "x86-interrupt" fn $handler(frame: InterruptStackFrame, code: u64) {
            fault_or_fatal(describe($what, &frame, Some(code)), &frame)
        }
    };
}

/// An NMI: another CPU's panic stopping this one (`apic::send_stop`), which halts here for
/// good — NMIs stay blocked until an `iretq` that never comes — or a gdb helper waking this
/// CPU (`debugger_nmi`), which returns at once, or else a fault.
extern "x86-interrupt" fn non_maskable_interrupt(frame: InterruptStackFrame) {
    if super::apic::is_stopping() {
        super::irq::halt_forever()
    }
    if super::debugger_nmi::take() {
        return;
    }
    fault_or_fatal(
        describe(("non-maskable interrupt", "NMI", 2), &frame, None),
        &frame,
    )
}
fatal_handler!(device_not_available, ("device not available", "#NM", 7));
fatal_handler!(invalid_tss, ("invalid TSS", "#TS", 10), error_code);
fatal_handler!(virtualization, ("virtualization exception", "#VE", 20));
fatal_handler!(
    control_protection,
    ("control protection", "#CP", 21),
    error_code
);
fatal_handler!(hypervisor_injection, ("hypervisor injection", "#HV", 28));
fatal_handler!(
    vmm_communication,
    ("VMM communication", "#VC", 29),
    error_code
);
fatal_handler!(security, ("security exception", "#SX", 30), error_code);

/// An exception in ring 3 that no program is expected to cause kills the program (and
/// only it); in the kernel it ends the run.
fn fault_or_fatal(fault: Fault, frame: &InterruptStackFrame) -> ! {
    // These handlers are the compiler's: from ring 3 they start on ring 3's GS base.
    super::cpu_local::ensure_kernel_base();
    if frame.code_segment.rpl() == x86_64::PrivilegeLevel::Ring3 {
        crate::trap::user_exception_fatal(&fault)
    }
    fatal(fault)
}

extern "x86-interrupt" fn double_fault(frame: InterruptStackFrame, code: u64) -> ! {
    fatal(describe(("double fault", "#DF", 8), &frame, Some(code)))
}

extern "x86-interrupt" fn machine_check(frame: InterruptStackFrame) -> ! {
    fatal(describe(("machine check", "#MC", 18), &frame, None))
}

// The device interrupts' entries save every register in a TrapFrame, as a system call's
// does, so that the way back to ring 3 can deliver a signal from either.
trap_entry!(apic_timer_entry, apic_timer);
trap_entry!(pit_tick_entry, pit_tick);
trap_entry!(serial_input_entry, serial_input);
trap_entry!(call_function_entry, call_function);
trap_entry!(reschedule_entry, reschedule);

/// The local APIC's timer: end the interrupt first (so that a context switch from the
/// handler cannot leave it unacknowledged), then let the time code run expired timers.
extern "C" fn apic_timer(frame: &mut TrapFrame) {
    super::apic::end_of_interrupt();
    crate::trap::timer_interrupt(frame);
}

/// IRQ 0, the PIT's periodic tick (`clockevent=pit`).
extern "C" fn pit_tick(frame: &mut TrapFrame) {
    super::pic::end_of_interrupt(super::pic::PIT_VECTOR);
    crate::trap::timer_interrupt(frame);
}

/// IRQ 4: the serial port received bytes (typed at the console). Acknowledged first, as the
/// timer is; the bytes go to the terminal (see `trap::serial_interrupt`).
extern "C" fn serial_input(frame: &mut TrapFrame) {
    super::pic::end_of_interrupt(super::pic::SERIAL_VECTOR);
    crate::trap::serial_interrupt(frame);
}

/// Another CPU left a function for this one to run (`cpus::call_on`).
extern "C" fn call_function(_frame: &mut TrapFrame) {
    super::apic::end_of_interrupt();
    crate::trap::call_function_interrupt();
}

/// Another CPU made a task runnable on this one's runqueue, or marked the running task
/// (`cpus::ipi::send_reschedule`).
extern "C" fn reschedule(frame: &mut TrapFrame) {
    super::apic::end_of_interrupt();
    crate::trap::reschedule_interrupt(frame);
}

/// Spurious APIC interrupts need no EOI and no action.
extern "x86-interrupt" fn spurious(_frame: InterruptStackFrame) {}

fn entry_address(entry: extern "C" fn()) -> x86_64::VirtAddr {
    x86_64::VirtAddr::new(entry as *const () as u64)
}

static IDT: Lazy<InterruptDescriptorTable> = Lazy::new(|| {
    let mut idt = InterruptDescriptorTable::new();
    // SAFETY: each address is a naked entry that saves every register, and ends with
    // `iretq` after restoring them, as an interrupt gate's handler must.
    unsafe {
        idt[super::apic::TIMER_VECTOR].set_handler_addr(entry_address(apic_timer_entry));
        idt[super::pic::PIT_VECTOR].set_handler_addr(entry_address(pit_tick_entry));
        idt[super::pic::SERIAL_VECTOR].set_handler_addr(entry_address(serial_input_entry));
        idt[super::apic::CALL_FUNCTION_VECTOR].set_handler_addr(entry_address(call_function_entry));
        idt[super::apic::RESCHEDULE_VECTOR].set_handler_addr(entry_address(reschedule_entry));
    }
    idt[super::apic::SPURIOUS_VECTOR].set_handler_fn(spurious);
    // SAFETY: each address is a naked entry that saves every register, and ends with
    // `iretq` after restoring them and dropping the error code (where the CPU pushed one)
    // and orig_rax, as an interrupt gate's handler must.
    unsafe {
        idt.divide_error
            .set_handler_addr(entry_address(divide_error_entry));
        idt.debug.set_handler_addr(entry_address(debug_entry));
        // Ring 3 may execute `int3` (the gate's DPL is checked for it); any other vector
        // it names with `int` is a general-protection fault, as on Linux.
        idt.breakpoint
            .set_handler_addr(entry_address(breakpoint_entry))
            .set_privilege_level(x86_64::PrivilegeLevel::Ring3);
        idt.overflow.set_handler_addr(entry_address(overflow_entry));
        idt.bound_range_exceeded
            .set_handler_addr(entry_address(bound_range_exceeded_entry));
        idt.invalid_opcode
            .set_handler_addr(entry_address(invalid_opcode_entry));
        idt.segment_not_present
            .set_handler_addr(entry_address(segment_not_present_entry));
        idt.stack_segment_fault
            .set_handler_addr(entry_address(stack_segment_fault_entry));
        idt.general_protection_fault
            .set_handler_addr(entry_address(general_protection_fault_entry));
        idt.page_fault
            .set_handler_addr(entry_address(page_fault_entry));
        idt.x87_floating_point
            .set_handler_addr(entry_address(x87_floating_point_entry));
        idt.alignment_check
            .set_handler_addr(entry_address(alignment_check_entry));
        idt.simd_floating_point
            .set_handler_addr(entry_address(simd_floating_point_entry));
    }
    // SAFETY: the IST index names the NMI stack set up in every CPU's TSS by gdt, before
    // this table is loaded; only the NMI handler uses it, and NMIs do not nest (the CPU
    // blocks the next until this one's `iretq`).
    unsafe {
        idt.non_maskable_interrupt
            .set_handler_fn(non_maskable_interrupt)
            .set_stack_index(NMI_IST_INDEX);
    }
    idt.device_not_available
        .set_handler_fn(device_not_available);
    // SAFETY: the IST index names the double-fault stack set up in the TSS by gdt::init,
    // which runs before this table is loaded, and no other handler uses that stack.
    unsafe {
        idt.double_fault
            .set_handler_fn(double_fault)
            .set_stack_index(DOUBLE_FAULT_IST_INDEX);
    }
    idt.invalid_tss.set_handler_fn(invalid_tss);
    idt.machine_check.set_handler_fn(machine_check);
    idt.virtualization.set_handler_fn(virtualization);
    idt.cp_protection_exception
        .set_handler_fn(control_protection);
    idt.hv_injection_exception
        .set_handler_fn(hypervisor_injection);
    idt.vmm_communication_exception
        .set_handler_fn(vmm_communication);
    idt.security_exception.set_handler_fn(security);
    idt
});

/// Loads the IDT. Must run after [`super::gdt::init`] (the double fault needs the TSS).
pub fn init() {
    IDT.load();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test_case]
    fn breakpoint_returns_to_the_next_instruction() {
        let before = breakpoint_count();
        x86_64::instructions::interrupts::int3();
        x86_64::instructions::interrupts::int3();
        assert_eq!(breakpoint_count(), before + 2);
    }

    #[test_case]
    fn page_fault_line_names_cr2_and_decodes_the_error_code() {
        let fault = Fault {
            name: "page fault",
            mnemonic: "#PF",
            vector: 14,
            error_code: Some(0b10),
            instruction_pointer: 0x1000,
            stack_pointer: 0x2000,
            handler_stack_pointer: 0,
            fault_address: Some(0xdead_b000),
        };
        let line = alloc::format!("{fault}");
        assert_eq!(
            line,
            "EXCEPTION: page fault (#PF, vector 14) error_code=0x2 (PageFaultErrorCode(CAUSED_BY_WRITE)) \
             rip=0x1000 rsp=0x2000 cr2=0xdeadb000"
        );
    }
}
