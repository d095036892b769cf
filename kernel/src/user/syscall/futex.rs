//! The `futex` call: its operations read from the registers and user memory (the sleeping
//! and waking are `sched::futex`'s). FUTEX_WAIT sleeps if the word still holds the value
//! the caller saw; FUTEX_WAKE wakes up to N sleepers on the word. The `_BITSET` forms (which
//! musl and glibc use for timed waits) take an absolute deadline and a mask that must
//! overlap.

use super::{errno, space};
use crate::sched::futex::{wait, wake};
use crate::time::clock;

const FUTEX_WAIT: u64 = 0;
const FUTEX_WAKE: u64 = 1;
const FUTEX_WAIT_BITSET: u64 = 9;
const FUTEX_WAKE_BITSET: u64 = 10;
/// The option bits: FUTEX_PRIVATE_FLAG (128) and FUTEX_CLOCK_REALTIME (256, one clock here).
const OPTIONS: u64 = 128 | 256;

/// `futex(uaddr, op, val, timeout, uaddr2, val3)`.
pub fn futex(uaddr: u64, op: u64, val: u64, timeout: u64, val3: u64) -> i64 {
    if !uaddr.is_multiple_of(4) {
        return -errno::EINVAL;
    }
    let space = space();
    match op & !OPTIONS {
        FUTEX_WAIT => match read_timeout(timeout) {
            Ok(t) => wait(
                &space,
                uaddr,
                val as u32,
                t.map(|ns| clock::now().saturating_add(ns)),
                !0,
            ),
            Err(e) => e,
        },
        FUTEX_WAIT_BITSET if val3 as u32 == 0 => -errno::EINVAL,
        FUTEX_WAIT_BITSET => match read_timeout(timeout) {
            Ok(deadline) => wait(&space, uaddr, val as u32, deadline, val3 as u32),
            Err(e) => e,
        },
        FUTEX_WAKE => wake(&space, uaddr, val as u32, !0),
        FUTEX_WAKE_BITSET if val3 as u32 == 0 => -errno::EINVAL,
        FUTEX_WAKE_BITSET => wake(&space, uaddr, val as u32, val3 as u32),
        _ => -errno::ENOSYS,
    }
}

/// The timeout's nanoseconds (`None`: none given).
fn read_timeout(timeout: u64) -> Result<Option<u64>, i64> {
    if timeout == 0 {
        return Ok(None);
    }
    super::info::read_timespec(timeout).map(Some)
}
