//! The lock-order checker's keys, in every build (`make test` runs this test in the debug
//! and the optimised build): locks of one rank may be held together when each is taken with
//! a key above every key held — the runqueues, lowest CPU first, as Linux's
//! `double_rq_lock` takes them — and a key taken out of that order panics, naming the rank,
//! both keys and the CPU. The right orders first pass, so that the checker is seen to let
//! correct code through. `harness = false`: the panic is the success.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::string::ToString;
use bootloader_api::BootInfo;
use kernel::percpu::this_cpu;
use kernel::sync::{KeyedLock, Rank, SpinLock};
use kernel::{ExitCode, exit, print, println};

bootloader_api::entry_point!(main, config = &kernel::BOOTLOADER_CONFIG);

static OUTER: SpinLock<u32> = SpinLock::new(Rank::TestOutermost, 0);
static FIRST: KeyedLock<u32> = KeyedLock::new(Rank::Runqueue, 1, 0);
static SECOND: KeyedLock<u32> = KeyedLock::new(Rank::Runqueue, 3, 0);
static INNER: SpinLock<u32> = SpinLock::new(Rank::TestInner, 0);

fn main(boot_info: &'static mut BootInfo) -> ! {
    kernel::init(boot_info);
    print!("lock_order_keys::keys_in_order_under_a_lower_rank_pass ... ");
    {
        let _outer = OUTER.lock();
        let mut first = FIRST.lock();
        let mut second = SECOND.lock();
        let _inner = INNER.lock();
        *first += 1;
        *second += 1;
        // Four locks, counted as four (the keyed rank's bit once, each key once).
        assert_eq!(this_cpu().locks_held(), 4);
        assert!(this_cpu().holds_key(Rank::Runqueue as u32, 3));
    }
    {
        // The higher key alone, then released: the lower one may be taken afterwards.
        drop(SECOND.lock());
        drop(FIRST.lock());
    }
    assert_eq!(this_cpu().locks_held(), 0);
    println!("ok");
    print!("lock_order_keys::a_key_below_one_held_panics ... ");
    let _second = SECOND.lock();
    let _first = FIRST.lock();
    println!("FAILED (no panic)");
    exit(ExitCode::Failure)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let message = info.message().to_string();
    let expected = alloc::format!(
        "lock order violated on CPU 0: taking Runqueue 1 (rank {0}) while holding Runqueue 3",
        Rank::Runqueue as u32,
    );
    if message == expected {
        println!("ok");
        exit(ExitCode::Success)
    }
    println!("FAILED (unexpected panic: {message})");
    exit(ExitCode::Failure)
}
