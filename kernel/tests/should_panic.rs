//! A failing assertion must panic, and the panic must carry its message and location.
//! `harness = false`: here a panic is the success, so this kernel has its own handler.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::string::ToString;
use bootloader_api::BootInfo;
use kernel::{ExitCode, exit, print, println};

bootloader_api::entry_point!(main, config = &kernel::BOOTLOADER_CONFIG);

fn main(boot_info: &'static mut BootInfo) -> ! {
    kernel::init(boot_info);
    print!("should_panic::failing_assertion_panics ... ");
    failing_assertion();
    println!("FAILED (no panic)");
    exit(ExitCode::Failure)
}

fn failing_assertion() {
    assert_eq!(core::hint::black_box(1) + 1, 3, "arithmetic is broken");
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let message = info.message().to_string();
    let file = info.location().map(|l| l.file()).unwrap_or("");
    if message.contains("arithmetic is broken") && file.ends_with("should_panic.rs") {
        println!("ok");
        exit(ExitCode::Success)
    }
    println!("FAILED (unexpected panic at {file}: {message})");
    exit(ExitCode::Failure)
}
