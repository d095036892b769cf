//! Clocks and sleeping: `clock_gettime`, `nanosleep`, `sched_yield`.

use crate::Errno;
use crate::sys::{call, nr, simple};

/// Linux's `struct timespec`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timespec {
    pub sec: i64,
    pub nsec: i64,
}

impl Timespec {
    pub fn from_ns(ns: u64) -> Self {
        Timespec {
            sec: (ns / 1_000_000_000) as i64,
            nsec: (ns % 1_000_000_000) as i64,
        }
    }

    pub fn as_ns(self) -> u64 {
        self.sec as u64 * 1_000_000_000 + self.nsec as u64
    }
}

pub const CLOCK_REALTIME: usize = 0;
pub const CLOCK_MONOTONIC: usize = 1;
pub const CLOCK_PROCESS_CPUTIME_ID: usize = 2;
pub const CLOCK_THREAD_CPUTIME_ID: usize = 3;

/// `clock_gettime(clock)` in nanoseconds.
#[inline]
pub fn clock_ns(clock: usize) -> Result<u64, Errno> {
    let mut ts = Timespec::default();
    // SAFETY: the kernel writes one timespec into `ts`.
    unsafe { call(nr::CLOCK_GETTIME, clock, &raw mut ts as usize, 0) }?;
    Ok(ts.as_ns())
}

/// The monotonic clock in nanoseconds.
#[inline]
pub fn now_ns() -> u64 {
    clock_ns(CLOCK_MONOTONIC).unwrap_or(0)
}

/// `nanosleep` for `ns` nanoseconds.
pub fn sleep_ns(ns: u64) -> Result<(), Errno> {
    let ts = Timespec::from_ns(ns);
    // SAFETY: the kernel reads one timespec; no remainder is asked for.
    unsafe { call(nr::NANOSLEEP, &raw const ts as usize, 0, 0) }.map(drop)
}

/// `sched_yield`.
#[inline]
pub fn yield_now() -> usize {
    simple(nr::SCHED_YIELD)
}

/// `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, at)`: sleeps until the monotonic clock
/// reads `at` ns (at once if it has), as a periodic program wakes at each expiry.
pub fn sleep_until_ns(at: u64) -> Result<(), Errno> {
    const TIMER_ABSTIME: usize = 1;
    let ts = Timespec::from_ns(at);
    // SAFETY: the kernel reads one timespec; no remainder is asked for.
    unsafe {
        Errno::result(crate::sys::syscall6(
            nr::CLOCK_NANOSLEEP,
            [
                CLOCK_MONOTONIC,
                TIMER_ABSTIME,
                &raw const ts as usize,
                0,
                0,
                0,
            ],
        ))
    }
    .map(drop)
}

/// Linux's `struct timeval`.
#[repr(C)]
struct Timeval {
    sec: i64,
    usec: i64,
}

/// `select(0, NULL, NULL, NULL, &tv)`: the classic way to sleep `us` microseconds, as
/// seed 002's `lat3` did.
pub fn select_sleep_us(us: u64) -> Result<(), Errno> {
    let mut tv = Timeval {
        sec: (us / 1_000_000) as i64,
        usec: (us % 1_000_000) as i64,
    };
    // SAFETY: no fd sets; the kernel reads and may update one timeval.
    unsafe {
        Errno::result(crate::sys::syscall6(
            nr::SELECT,
            [0, 0, 0, 0, &raw mut tv as usize, 0],
        ))
    }
    .map(drop)
}

/// CPU time of the calling thread, in ns.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
}
