//! A kernel stack overflow must be caught: the write below the stack hits the bootloader's
//! guard page, the page fault cannot push its frame on the dead stack, the CPU raises a
//! double fault, and that handler must run on its own IST stack and report it.
//! `harness = false`: the fault is the success.

#![no_std]
#![no_main]

use bootloader_api::BootInfo;
use kernel::arch::fault::Fault;
use kernel::arch::{gdt, interrupts};
use kernel::{ExitCode, exit, print, println};

bootloader_api::entry_point!(main, config = &kernel::BOOTLOADER_CONFIG);

fn main(boot_info: &'static mut BootInfo) -> ! {
    kernel::init(boot_info);
    interrupts::set_fatal_hook(expect_double_fault_on_ist_stack);
    print!("stack_overflow::overflow_is_caught_on_the_ist_stack ... ");
    let depth = recurse(0);
    println!("FAILED (recursion returned {depth})");
    exit(ExitCode::Failure)
}

/// Endless recursion with a frame that cannot be optimised away.
#[allow(unconditional_recursion)]
fn recurse(depth: u64) -> u64 {
    let frame = core::hint::black_box([depth; 8]);
    recurse(depth + 1) + frame[0]
}

fn expect_double_fault_on_ist_stack(fault: &Fault) -> ! {
    let ist = gdt::double_fault_stack();
    if fault.vector == 8 && ist.contains(&fault.handler_stack_pointer) {
        println!("ok");
        println!("(reported: {fault})");
        exit(ExitCode::Success)
    }
    println!("FAILED (expected a double fault on the IST stack {ist:#x?}, got: {fault})");
    exit(ExitCode::Failure)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    kernel::testing::test_panic_handler(info)
}
