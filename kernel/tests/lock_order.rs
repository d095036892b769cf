//! The lock-order checker, in every build (`make test` runs this test in the debug and the
//! optimised build): taking a lock while holding one of a higher rank must panic, naming
//! both locks' ranks and the CPU. The right order first passes, so that the checker is seen
//! to let correct code through. `harness = false`: the panic is the success.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::string::ToString;
use bootloader_api::BootInfo;
use kernel::sync::{Rank, SpinLock};
use kernel::{ExitCode, exit, print, println};

bootloader_api::entry_point!(main, config = &kernel::BOOTLOADER_CONFIG);

static OUTER: SpinLock<u32> = SpinLock::new(Rank::TestOuter, 0);
static INNER: SpinLock<u32> = SpinLock::new(Rank::TestInner, 0);

fn main(boot_info: &'static mut BootInfo) -> ! {
    kernel::init(boot_info);
    print!("lock_order::the_right_order_passes ... ");
    {
        let mut outer = OUTER.lock();
        let mut inner = INNER.lock();
        *outer += 1;
        *inner += 1;
    }
    println!("ok");
    print!("lock_order::the_wrong_order_panics ... ");
    let _inner = INNER.lock();
    let _outer = OUTER.lock();
    println!("FAILED (no panic)");
    exit(ExitCode::Failure)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let message = info.message().to_string();
    let expected = alloc::format!(
        "lock order violated on CPU 0: taking TestOuter (rank {}) while holding TestInner (rank {})",
        Rank::TestOuter as u32,
        Rank::TestInner as u32
    );
    if message == expected {
        println!("ok");
        exit(ExitCode::Success)
    }
    println!("FAILED (unexpected panic: {message})");
    exit(ExitCode::Failure)
}
