//! `getrandom`: bytes from a generator seeded once from the TSC. cfslab has no entropy
//! pool, and under `-icount` the TSC is deterministic, so these bytes are the same on every
//! run: enough for hash-table seeds and stack canaries (what glibc and busybox want them
//! for), not for keys. Linux's flags are checked as Linux checks them.

use super::{errno, space};
use crate::sync::{Rank, SpinLock};

const GRND_NONBLOCK: u64 = 1;
const GRND_RANDOM: u64 = 2;
const GRND_INSECURE: u64 = 4;
/// At most this many bytes per call (Linux gives at most 32 MiB less a page; a smaller cap
/// keeps one call short).
const MAX_BYTES: u64 = 256;

/// SplitMix64's state (Steele, Lea and Flood, 2014): each step a new 64-bit output.
static STATE: SpinLock<Option<u64>> = SpinLock::new(Rank::Leaf, None);

fn next() -> u64 {
    let mut state = STATE.lock();
    let s = state.get_or_insert_with(crate::time::clock::now);
    *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `getrandom(buf, len, flags)`: up to [`MAX_BYTES`] bytes (the count is returned, as a
/// short read).
pub fn getrandom(buf: u64, len: u64, flags: u64) -> i64 {
    if flags & !(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE) != 0
        || flags & (GRND_RANDOM | GRND_INSECURE) == GRND_RANDOM | GRND_INSECURE
    {
        return -errno::EINVAL;
    }
    let n = len.min(MAX_BYTES) as usize;
    let mut bytes = [0u8; MAX_BYTES as usize];
    for chunk in bytes[..n].chunks_mut(8) {
        chunk.copy_from_slice(&next().to_le_bytes()[..chunk.len()]);
    }
    match space().write(buf, &bytes[..n]) {
        Ok(()) => n as i64,
        Err(_) => -errno::EFAULT,
    }
}
