//! The Global Descriptor Table and the Task State Segment.
//!
//! In long mode segmentation is almost gone, but three things still need the GDT: the code
//! segment the CPU runs in (ring 0 for the kernel, ring 3 for user programs), SYSCALL and
//! SYSRET, which take their selectors from it, and the TSS, whose `rsp0` is the kernel stack
//! an interrupt in ring 3 lands on and whose Interrupt Stack Table gives the double-fault
//! handler a stack of its own. That matters when the kernel stack overflows: the page fault
//! on the guard page cannot push its frame on the dead stack, the CPU escalates to a double
//! fault, and only a known-good stack lets the handler run and report it.
//!
//! Each CPU has its own TSS (its rsp0 is its running task's stack) and so its own GDT, which
//! holds the TSS's descriptor; the boot CPU's are statics, an AP's are made as it starts
//! ([`init_ap`]). The selectors are the same on every CPU.

use super::cpu_local;
use alloc::boxed::Box;
use core::ops::Range;
use spin::Lazy;
use x86_64::VirtAddr;
use x86_64::instructions::segmentation::{CS, DS, ES, SS, Segment};
use x86_64::instructions::tables::load_tss;
use x86_64::structures::gdt::{Descriptor, GlobalDescriptorTable, SegmentSelector};
use x86_64::structures::tss::TaskStateSegment;

/// The IST slot (0-based, as the `x86_64` crate counts) holding the double-fault stack.
pub const DOUBLE_FAULT_IST_INDEX: u16 = 0;

const DOUBLE_FAULT_STACK_SIZE: usize = 32 * 1024;

/// The IST slot of the NMI's stack. An NMI may come anywhere, even between SYSCALL and the
/// switch to the kernel stack, while RSP is still the program's: it must bring its own
/// stack, as on Linux.
pub const NMI_IST_INDEX: u16 = 1;

const NMI_STACK_SIZE: usize = 16 * 1024;

/// The boot CPU's NMI stack (as [`DOUBLE_FAULT_STACK`], never referenced from Rust).
static mut NMI_STACK: [u128; NMI_STACK_SIZE / 16] = [0; NMI_STACK_SIZE / 16];

/// The double-fault stack. It lives in .bss, so it exists before the heap does; `u128`
/// elements give it the 16-byte alignment the x86_64 ABI wants for stacks. Only the CPU
/// writes it (through the TSS), so it is never referenced from Rust, only its address.
static mut DOUBLE_FAULT_STACK: [u128; DOUBLE_FAULT_STACK_SIZE / 16] =
    [0; DOUBLE_FAULT_STACK_SIZE / 16];

/// Address range of the double-fault stack, for tests that check the handler really runs on it.
pub fn double_fault_stack() -> Range<u64> {
    let start = VirtAddr::from_ptr(&raw const DOUBLE_FAULT_STACK).as_u64();
    start..start + DOUBLE_FAULT_STACK_SIZE as u64
}

/// The boot CPU's TSS. Mutable because its `rsp0` (the stack the CPU switches to when an
/// interrupt arrives in ring 3) changes at every switch to a user task
/// ([`set_kernel_stack`]); only the CPU reads it otherwise.
static mut TSS: TaskStateSegment = TaskStateSegment::new();

/// The selectors of cfslab's segments. The order of the user segments — data, then code —
/// is what SYSRET wants: it loads SS from STAR[63:48] + 8 and CS from STAR[63:48] + 16.
pub struct Selectors {
    pub kernel_code: SegmentSelector,
    pub kernel_data: SegmentSelector,
    pub user_data: SegmentSelector,
    pub user_code: SegmentSelector,
    tss: SegmentSelector,
}

/// A GDT with cfslab's segments and `tss`'s descriptor.
fn table(tss: &'static TaskStateSegment) -> (GlobalDescriptorTable, Selectors) {
    let mut gdt = GlobalDescriptorTable::new();
    let kernel_code = gdt.append(Descriptor::kernel_code_segment());
    let kernel_data = gdt.append(Descriptor::kernel_data_segment());
    let user_data = gdt.append(Descriptor::user_data_segment());
    let user_code = gdt.append(Descriptor::user_code_segment());
    let tss = gdt.append(Descriptor::tss_segment(tss));
    (
        gdt,
        Selectors {
            kernel_code,
            kernel_data,
            user_data,
            user_code,
            tss,
        },
    )
}

/// The boot CPU's GDT.
static GDT: Lazy<(GlobalDescriptorTable, Selectors)> = Lazy::new(|| {
    // SAFETY: runs once, before the TSS is loaded; nothing else refers to it yet.
    let tss: &'static TaskStateSegment = unsafe {
        let tss = &raw mut TSS;
        // Stacks grow down: the IST entry is the *end* of the area.
        (*tss).interrupt_stack_table[DOUBLE_FAULT_IST_INDEX as usize] =
            VirtAddr::new(double_fault_stack().end);
        (*tss).interrupt_stack_table[NMI_IST_INDEX as usize] =
            VirtAddr::from_ptr(&raw const NMI_STACK) + NMI_STACK_SIZE as u64;
        &*tss
    };
    table(tss)
});

/// The user segments' selectors as numbers, for the entry code that pushes them into a
/// [`TrapFrame`](super::user_mode::TrapFrame): data is the GDT's third entry, code its
/// fourth, both with RPL 3 (`init` checks that the table agrees).
pub const USER_DS: u64 = 0x18 | 3;
pub const USER_CS: u64 = 0x20 | 3;

/// The segment selectors (for SYSCALL's STAR and for entering ring 3).
pub fn selectors() -> &'static Selectors {
    &GDT.1
}

/// Sets the stack the CPU switches to on an interrupt or exception in ring 3: the top of
/// the running task's kernel stack.
pub fn set_kernel_stack(top: u64) {
    let tss = cpu_local::read::<{ cpu_local::TSS }>() as *mut TaskStateSegment;
    // SAFETY: `tss` is this CPU's TSS (`load`), written only by this CPU, with interrupts
    // off (the caller switches tasks); the CPU reads it only on the next ring change.
    unsafe { (*tss).privilege_stack_table[0] = VirtAddr::new(top) };
}

/// Loads the boot CPU's GDT, reloads the segment registers from it and loads the TSS.
///
/// The data segments are reloaded too: the bootloader's selectors index *its* GDT, and a
/// stale SS would fault on the first `iretq` from an interrupt.
pub fn init() {
    let (gdt, selectors) = &*GDT;
    assert_eq!(u64::from(selectors.user_data.0), USER_DS);
    assert_eq!(u64::from(selectors.user_code.0), USER_CS);
    load(gdt, selectors, &raw const TSS as u64);
}

/// An AP's own TSS (with double-fault and NMI stacks of its own) and GDT, loaded as
/// [`init`] loads the boot CPU's.
pub fn init_ap() {
    let mut tss = TaskStateSegment::new();
    tss.interrupt_stack_table[DOUBLE_FAULT_IST_INDEX as usize] =
        leaked_stack_end(DOUBLE_FAULT_STACK_SIZE);
    tss.interrupt_stack_table[NMI_IST_INDEX as usize] = leaked_stack_end(NMI_STACK_SIZE);
    let tss: &'static TaskStateSegment = Box::leak(Box::new(tss));
    let (gdt, selectors) = table(tss);
    let gdt: &'static GlobalDescriptorTable = Box::leak(Box::new(gdt));
    load(gdt, &selectors, core::ptr::from_ref(tss) as u64);
}

/// The end (stacks grow down) of a new stack of `bytes` that lives for the rest of the run.
fn leaked_stack_end(bytes: usize) -> VirtAddr {
    let stack: &'static mut [u128] = Box::leak(alloc::vec![0u128; bytes / 16].into_boxed_slice());
    VirtAddr::from_ptr(stack.as_ptr_range().end)
}

/// Loads `gdt`, its segments and its TSS (at `tss`), and tells the entry code where the TSS
/// is (`cpu_local`).
fn load(gdt: &'static GlobalDescriptorTable, selectors: &Selectors, tss: u64) {
    gdt.load();
    // SAFETY: the selectors come from the GDT just loaded and describe flat 64-bit kernel
    // code/data segments and a TSS that lives for the rest of the run.
    unsafe {
        CS::set_reg(selectors.kernel_code);
        SS::set_reg(selectors.kernel_data);
        DS::set_reg(selectors.kernel_data);
        ES::set_reg(selectors.kernel_data);
        load_tss(selectors.tss);
    }
    cpu_local::write::<{ cpu_local::TSS }>(tss);
}
