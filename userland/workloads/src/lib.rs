//! What the seed experiments' workload programs share: their options, spinning on the CPU,
//! the sleeper, and the reports they end with. Each program prints its seed's own format
//! itself (`sched.py`'s medians, `lat3`'s columns, `wakeup-latency`'s three lines); the
//! cyclictest, schbench and `RESULT` lines are written here, so that tools read every
//! program the same way on cfslab and on Linux. These programs *are* the lab's workloads:
//! `run=seed000-s1` starts them as processes (`kernel/src/lab/`), labelled by [`lab`].
//!
//! The programs' numbers (job lengths, I/O bursts, the sleeper's loop work) and their
//! phase generator come from `sched::programs`, the one definition the kernel's lab and the
//! host simulator use too.

#![no_std]

extern crate alloc;

pub mod lab;
pub mod options;
pub mod report;
pub mod sleeper;

pub use sched::programs::{self, Rng};

/// Spins on the CPU until the monotonic clock reads `end` ns. The clock is read every few
/// thousand iterations only, so that the spin is user time, as a hog's or a compiler's is.
pub fn spin_until(end: u64) {
    while rt::time::now_ns() < end {
        spin_a_little();
    }
}

/// A few microseconds of pure computation.
pub fn spin_a_little() {
    let mut x = 0u64;
    for i in 0..2_000u64 {
        x = core::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
    }
}

/// Burns `cpu_ns` of this thread's CPU time (not wall time: time spent waiting for the CPU
/// does not count), or until the monotonic clock reads `end`; returns what it burnt.
pub fn burn_cpu(cpu_ns: u64, end: u64) -> u64 {
    let start = rt::time::thread_cpu_ns();
    loop {
        let burnt = rt::time::thread_cpu_ns() - start;
        if burnt >= cpu_ns || rt::time::now_ns() >= end {
            return burnt;
        }
        spin_a_little();
    }
}

/// The calling process's nice value.
pub fn nice() -> i32 {
    rt::process::getpriority(rt::process::Which::Process, 0).unwrap_or(0)
}

/// Nanoseconds in a millisecond and a second.
pub const MS: u64 = 1_000_000;
pub const SECOND: u64 = 1_000_000_000;
