//! The boot self-check that `make run` shows until the lab exists: what memory the machine
//! has, proof that the heap allocates and frees, the options this run was given, and, with
//! several CPUs, proof that they exclude each other (`cpus::contention`). Each check
//! asserts what it claims, so a broken heap or lock ends the run as a failure, not a line.

use crate::Boot;
use crate::mm::heap;
use crate::println;
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

/// Allocates a mix of boxes, a vector and a B-tree, checks their contents, frees them and
/// checks that the heap is back where it started. Returns the peak bytes allocated.
pub fn heap_round_trip() -> usize {
    let before = heap::stats().used;
    let peak = {
        let numbers: Vec<u64> = (0..100_000).collect();
        let boxed = Box::new([7u8; 4096]);
        let tree: BTreeMap<u32, u32> = (0..1000).map(|i| (i, i * i)).collect();
        assert_eq!(numbers.iter().sum::<u64>(), 100_000 * 99_999 / 2);
        assert!(boxed.iter().all(|&b| b == 7));
        assert_eq!(tree[&999], 998_001);
        heap::stats().used - before
    };
    assert_eq!(
        heap::stats().used,
        before,
        "the heap did not return to its starting level"
    );
    peak
}

/// Runs the self-check and prints its report.
pub fn run(boot: &Boot) {
    println!("memory: {}", boot.memory);
    println!("time: {}", boot.time);
    println!("kernel image at {:#x}", boot.kernel_image_offset);
    let peak = heap_round_trip();
    let heap = heap::stats();
    println!(
        "heap: round trip of {peak} bytes ok, {} of {} bytes in use",
        heap.used, heap.size
    );
    // Before the self-check's line, which tests take as the start of a program's output.
    if let Some(c) = &boot.cpus.contention {
        println!(
            "RESULT {{\"kind\":\"cpus\",\"online\":{},\"lock_rounds\":{},\"counted\":{}}}",
            boot.cpus.online(),
            c.expected,
            c.counted
        );
        assert_eq!(
            c.counted, c.expected,
            "the CPUs lost updates under one spin lock"
        );
    }
    println!(
        "RESULT {{\"kind\":\"selfcheck\",\"usable_bytes\":{},\"heap_bytes\":{},\"heap_round_trip_bytes\":{},\"kernel_image_offset\":{},\"options\":{:?}}}",
        boot.memory.usable_bytes,
        heap.size,
        peak,
        boot.kernel_image_offset,
        // A JSON string: the options may hold a double-quoted argument.
        alloc::string::ToString::to_string(&boot.config)
    );
}
