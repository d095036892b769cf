//! Time and system information: `clock_gettime`, `nanosleep`, `uname`.

use super::{errno, space};
use crate::sched;
use crate::time::clock;

/// Linux's `struct timespec` as 16 little-endian bytes.
fn timespec_bytes(ns: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&(ns / 1_000_000_000).to_le_bytes());
    out[8..].copy_from_slice(&(ns % 1_000_000_000).to_le_bytes());
    out
}

pub fn clock_gettime(clock_id: u64, ts: u64) -> i64 {
    let ns = match clock_id {
        // REALTIME: cfslab has no wall clock; it counts from boot, as MONOTONIC does.
        0 | 1 => clock::now(),
        2 | 3 => sched::current_cpu_ns(),
        _ => return -errno::EINVAL,
    };
    match space().write(ts, &timespec_bytes(ns)) {
        Ok(()) => 0,
        Err(_) => -errno::EFAULT,
    }
}

pub fn nanosleep(req: u64) -> i64 {
    let mut raw = [0u8; 16];
    if space().read(req, &mut raw).is_err() {
        return -errno::EFAULT;
    }
    let sec = i64::from_le_bytes(raw[..8].try_into().unwrap_or_default());
    let nsec = i64::from_le_bytes(raw[8..].try_into().unwrap_or_default());
    if sec < 0 || !(0..1_000_000_000).contains(&nsec) {
        return -errno::EINVAL;
    }
    let ns = (sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(nsec as u64);
    sched::sleep(ns);
    0
}

pub fn uname(buf: u64) -> i64 {
    // Six fields of 65 bytes: sysname, nodename, release, version, machine, domainname.
    let mut uts = [0u8; 6 * 65];
    let fields: [&[u8]; 6] = [
        b"cfslab", b"cfslab", b"0.1.0", b"cfslab", b"x86_64", b"(none)",
    ];
    for (i, field) in fields.iter().enumerate() {
        uts[i * 65..i * 65 + field.len()].copy_from_slice(field);
    }
    match space().write(buf, &uts) {
        Ok(()) => 0,
        Err(_) => -errno::EFAULT,
    }
}
