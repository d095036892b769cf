//! The kernel binary: boots the machine, runs what the boot options ask, exits.

#![no_std]
#![no_main]

use bootloader_api::BootInfo;
use kernel::{ExitCode, exit, selfcheck};

bootloader_api::entry_point!(kernel_main, config = &kernel::BOOTLOADER_CONFIG);

/// The kernel's entry (called by the bootloader through `_start`): `make gdb` stops here.
fn kernel_main(boot_info: &'static mut BootInfo) -> ! {
    let boot = kernel::init(boot_info);
    selfcheck::run(&boot);
    // A program after ` -- ` replaces the scenarios; the run's status follows its exit.
    if !boot.config.program.is_empty() {
        let ok = kernel::user::run_program(&boot.config.program);
        exit(if ok {
            ExitCode::Success
        } else {
            ExitCode::Failure
        })
    }
    kernel::lab::run(&boot.config);
    exit(ExitCode::Success)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    kernel::panic::report(info)
}
