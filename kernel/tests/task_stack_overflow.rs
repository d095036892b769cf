//! A task that overflows its kernel stack must hit the guard page below it and end the run
//! with a clear report — not scribble over a neighbour's stack. The fault cannot push its
//! frame on the full stack, so the CPU raises a double fault, handled on its IST stack; the
//! report names the guard page (CR2). `harness = false`: the fault is the success.

#![no_std]
#![no_main]

use bootloader_api::BootInfo;
use kernel::arch::fault::Fault;
use kernel::arch::interrupts;
use kernel::{ExitCode, exit, print, println, sched};

bootloader_api::entry_point!(main, config = &kernel::BOOTLOADER_CONFIG);

fn main(boot_info: &'static mut BootInfo) -> ! {
    kernel::init(boot_info);
    interrupts::set_fatal_hook(expect_guard_page_hit);
    print!("task_stack_overflow::a_task_overflow_hits_its_guard_page ... ");
    let id = sched::spawn(overflow, 0, "overflow", 1, 0).unwrap();
    sched::join(id);
    println!("FAILED (the task finished)");
    exit(ExitCode::Failure)
}

fn overflow(depth: u64) {
    recurse(depth);
}

#[allow(unconditional_recursion)]
fn recurse(depth: u64) -> u64 {
    let frame = core::hint::black_box([depth; 8]);
    recurse(depth + 1) + frame[0]
}

fn expect_guard_page_hit(fault: &Fault) -> ! {
    let guard_hit = fault
        .faulting_address()
        .filter(|&a| kernel::mm::stack::is_guard(a));
    match guard_hit {
        Some(address) => {
            println!("ok");
            println!("(reported: {fault}; guard page at {address:#x})");
            exit(ExitCode::Success)
        }
        None => {
            println!("FAILED (a fault that is not a stack overflow: {fault})");
            exit(ExitCode::Failure)
        }
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    kernel::testing::test_panic_handler(info)
}
