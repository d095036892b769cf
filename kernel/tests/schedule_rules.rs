//! `schedule()`'s rules hold in every build: a task that tries to switch while holding a
//! spin lock panics at once (the next task could otherwise spin on that lock for ever). The
//! lock is outside every other in the lock order, so only `schedule()`'s rule can object.
//! `harness = false`: the panic is the success.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::string::ToString;
use bootloader_api::BootInfo;
use kernel::sync::{Rank, SpinLock};
use kernel::{ExitCode, exit, print, println, sched};

bootloader_api::entry_point!(main, config = &kernel::BOOTLOADER_CONFIG);

static HELD: SpinLock<u32> = SpinLock::new(Rank::TestOutermost, 0);

fn main(boot_info: &'static mut BootInfo) -> ! {
    kernel::init(boot_info);
    print!("schedule_rules::a_sleep_with_a_spin_lock_held_panics ... ");
    let _held = HELD.lock();
    // A sleep always switches (to the idle task, if nothing else runs).
    sched::sleep(1_000_000);
    println!("FAILED (no panic)");
    exit(ExitCode::Failure)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let message = info.message().to_string();
    if message.contains("schedule() with a spin lock held") {
        println!("ok");
        exit(ExitCode::Success)
    }
    println!("FAILED (unexpected panic: {message})");
    exit(ExitCode::Failure)
}
