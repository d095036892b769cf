//! A write to an unmapped page must be reported as a page fault with the faulting address
//! (CR2) and an error code saying "write to a page that is not present".
//! `harness = false`: the fault is the success.

#![no_std]
#![no_main]

use bootloader_api::BootInfo;
use kernel::arch::fault::Fault;
use kernel::arch::interrupts;
use kernel::{ExitCode, exit, mm, print, println};
use x86_64::VirtAddr;
use x86_64::structures::idt::PageFaultErrorCode;

bootloader_api::entry_point!(main, config = &kernel::BOOTLOADER_CONFIG);

/// An address in a level-4 slot nothing maps (checked below before it is touched).
const PROBE: u64 = 0x5555_0000_0000;

fn main(boot_info: &'static mut BootInfo) -> ! {
    kernel::init(boot_info);
    interrupts::set_fatal_hook(expect_page_fault_at_probe);
    print!("page_fault::unmapped_write_is_reported ... ");
    assert!(
        mm::translate(VirtAddr::new(PROBE)).is_none(),
        "the probe address is mapped"
    );
    // SAFETY: not safe at all, on purpose: the address is unmapped (asserted above), so the
    // write faults and never touches memory; the fault handler ends the run.
    unsafe { (PROBE as *mut u64).write_volatile(42) };
    println!("FAILED (no fault)");
    exit(ExitCode::Failure)
}

fn expect_page_fault_at_probe(fault: &Fault) -> ! {
    let code = PageFaultErrorCode::from_bits_truncate(fault.error_code.unwrap_or(0));
    let write_to_missing_page = code.contains(PageFaultErrorCode::CAUSED_BY_WRITE)
        && !code.contains(PageFaultErrorCode::PROTECTION_VIOLATION);
    if fault.vector == 14 && fault.fault_address == Some(PROBE) && write_to_missing_page {
        println!("ok");
        println!("(reported: {fault})");
        exit(ExitCode::Success)
    }
    println!("FAILED (expected a write fault at {PROBE:#x}, got: {fault})");
    exit(ExitCode::Failure)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    kernel::testing::test_panic_handler(info)
}
