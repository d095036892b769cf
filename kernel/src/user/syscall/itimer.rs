//! `alarm`, `setitimer` and `getitimer` on ITIMER_REAL, the process's real-time timer that
//! sends SIGALRM (`sched::proc::alarm`). The CPU-time timers ITIMER_VIRTUAL and ITIMER_PROF
//! are not kept: asking for them gives EINVAL.

use super::{errno, space};
use crate::sched;
use crate::time::clock;

const ITIMER_REAL: u64 = 0;
const NS_PER_US: u64 = 1_000;
const US_PER_S: u64 = 1_000_000;

/// Sets the running process's timer; returns the old (left, interval) in ns.
fn set(value: u64, interval: u64) -> (u64, u64) {
    let group = sched::current_group().expect("a process");
    let leader = group.leader;
    group
        .sighand
        .with_alarm(|t| t.set(clock::now(), value, interval, leader))
}

/// `alarm(seconds)`: SIGALRM in `seconds` (0 cancels); returns the seconds that were left
/// of the previous alarm, rounded to the nearest (at least 1 if any was left), as Linux.
pub fn alarm(seconds: u64) -> i64 {
    let (left, _) = set(seconds.saturating_mul(1_000_000_000), 0);
    let left_us = left.div_ceil(NS_PER_US);
    let (secs, us) = (left_us / US_PER_S, left_us % US_PER_S);
    let rounded = if (secs == 0 && us != 0) || us >= US_PER_S / 2 {
        secs + 1
    } else {
        secs
    };
    rounded as i64
}

/// Linux's `struct itimerval`: the interval, then the value, each a `timeval`.
fn itimerval_bytes(left: u64, interval: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, ns) in [interval, left].into_iter().enumerate() {
        let us = ns.div_ceil(NS_PER_US);
        out[16 * i..16 * i + 8].copy_from_slice(&(us / US_PER_S).to_le_bytes());
        out[16 * i + 8..16 * i + 16].copy_from_slice(&(us % US_PER_S).to_le_bytes());
    }
    out
}

/// A `timeval` as ns; EINVAL for a negative one or microseconds out of range.
fn timeval_ns(raw: &[u8]) -> Result<u64, i64> {
    let sec = i64::from_le_bytes(raw[..8].try_into().unwrap_or_default());
    let usec = i64::from_le_bytes(raw[8..16].try_into().unwrap_or_default());
    if sec < 0 || !(0..US_PER_S as i64).contains(&usec) {
        return Err(-errno::EINVAL);
    }
    Ok((sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(usec as u64 * NS_PER_US))
}

/// `getitimer(which, value)`.
pub fn getitimer(which: u64, value: u64) -> i64 {
    if which != ITIMER_REAL {
        return -errno::EINVAL;
    }
    let group = sched::current_group().expect("a process");
    let (left, interval) = group.sighand.with_alarm(|t| t.get(clock::now()));
    match space().write(value, &itimerval_bytes(left, interval)) {
        Ok(()) => 0,
        Err(_) => -errno::EFAULT,
    }
}

/// `setitimer(which, new, old)`: a null `new` disarms the timer, as Linux has allowed
/// (with a warning) since 5.x.
pub fn setitimer(which: u64, new: u64, old: u64) -> i64 {
    if which != ITIMER_REAL {
        return -errno::EINVAL;
    }
    let (value, interval) = if new == 0 {
        (0, 0)
    } else {
        let mut raw = [0u8; 32];
        if space().read(new, &mut raw).is_err() {
            return -errno::EFAULT;
        }
        match (timeval_ns(&raw[16..]), timeval_ns(&raw[..16])) {
            (Ok(v), Ok(i)) => (v, i),
            (Err(e), _) | (_, Err(e)) => return e,
        }
    };
    let (left, old_interval) = set(value, interval);
    if old != 0
        && space()
            .write(old, &itimerval_bytes(left, old_interval))
            .is_err()
    {
        return -errno::EFAULT;
    }
    0
}
