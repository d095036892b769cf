//! The kernel heap under use: boxes, big vectors, many small allocations freed and reused,
//! and an allocation larger than the heap refused without bringing the kernel down.

#![no_std]
#![no_main]
#![feature(custom_test_frameworks)]
#![test_runner(kernel::testing::run_tests)]
#![reexport_test_harness_main = "test_main"]

extern crate alloc;

use alloc::boxed::Box;
use alloc::vec::Vec;
use bootloader_api::BootInfo;
use kernel::mm::heap;
use kernel::{ExitCode, exit};

bootloader_api::entry_point!(main, config = &kernel::BOOTLOADER_CONFIG);

fn main(boot_info: &'static mut BootInfo) -> ! {
    kernel::init(boot_info);
    test_main();
    exit(ExitCode::Success)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    kernel::testing::test_panic_handler(info)
}

#[test_case]
fn the_heap_is_at_least_16_mib() {
    assert!(heap::stats().size >= 16 << 20);
}

#[test_case]
fn boxes_hold_their_values() {
    let a = Box::new(41);
    let b = Box::new([1u64; 512]);
    assert_eq!(*a + 1, 42);
    assert_eq!(b.iter().sum::<u64>(), 512);
}

#[test_case]
fn a_large_vector_grows_and_keeps_its_contents() {
    let n = 1_000_000u64; // 8 MB
    let v: Vec<u64> = (0..n).collect();
    assert_eq!(v.iter().sum::<u64>(), (n - 1) * n / 2);
}

#[test_case]
fn many_small_allocations_are_freed_and_reused() {
    // Far more bytes in total than the heap holds: only reuse makes this possible.
    let rounds = heap::stats().size / 64 * 2;
    let long_lived = Box::new(7u64);
    for i in 0..rounds {
        let x = Box::new(i);
        assert_eq!(*x, i);
    }
    assert_eq!(*long_lived, 7);
}

#[test_case]
fn freeing_everything_returns_the_heap_to_its_level() {
    let before = heap::stats().used;
    let boxes: Vec<Box<[u8; 100]>> = (0..10_000).map(|_| Box::new([0; 100])).collect();
    assert!(heap::stats().used >= before + 10_000 * 100);
    drop(boxes);
    assert_eq!(heap::stats().used, before);
}

#[test_case]
fn an_allocation_larger_than_the_heap_is_refused_not_fatal() {
    let mut v: Vec<u8> = Vec::new();
    assert!(v.try_reserve(heap::stats().size * 2).is_err());
    // And the heap still works afterwards.
    assert!(v.try_reserve(1024).is_ok());
}
