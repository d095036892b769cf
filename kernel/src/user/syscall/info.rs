//! Time and system information: `clock_gettime`, `nanosleep`, `clock_nanosleep`, `uname`,
//! and `reboot`, which ends the run.

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
        // PROCESS_CPUTIME_ID: every thread's; THREAD_CPUTIME_ID: the caller's.
        2 => {
            let t = super::rusage::process_times();
            t.user_ns + t.system_ns
        }
        3 => sched::current_cpu_ns(),
        _ => return -errno::EINVAL,
    };
    match space().write(ts, &timespec_bytes(ns)) {
        Ok(()) => 0,
        Err(_) => -errno::EFAULT,
    }
}

/// Reads a `struct timespec` from the program: nanoseconds, EFAULT or EINVAL (a negative
/// second or a nanosecond field outside 0..10^9, as Linux's `timespec64_valid`).
pub(super) fn read_timespec(ts: u64) -> Result<u64, i64> {
    let mut raw = [0u8; 16];
    space().read(ts, &mut raw).map_err(|_| -errno::EFAULT)?;
    let sec = i64::from_le_bytes(raw[..8].try_into().unwrap_or_default());
    let nsec = i64::from_le_bytes(raw[8..].try_into().unwrap_or_default());
    if sec < 0 || !(0..1_000_000_000).contains(&nsec) {
        return Err(-errno::EINVAL);
    }
    Ok((sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(nsec as u64))
}

/// `nanosleep(req, rem)`: EINTR if a signal's handler is to run first, with the time left in
/// `rem` (unless it is null).
pub fn nanosleep(req: u64, rem: u64) -> i64 {
    match read_timespec(req) {
        Ok(ns) => user_sleep_until(clock::now().saturating_add(ns), rem),
        Err(e) => e,
    }
}

/// A user task's timed sleep, with Linux's timer slack (`time::TIMER_SLACK_NS`), until
/// `deadline` or until a signal is to be taken: then EINTR, and the time left goes to `rem`
/// (unless it is null). The check for a signal and the sleep are one step with interrupts
/// off, so that a signal sent between them still ends the sleep.
fn user_sleep_until(deadline: u64, rem: u64) -> i64 {
    loop {
        let now = clock::now();
        if now >= deadline {
            return 0;
        }
        let interrupted = crate::arch::irq::without(|| {
            if sched::signal_pending() {
                return true;
            }
            sched::sleep_until_woken(Some(deadline), crate::time::TIMER_SLACK_NS);
            false
        });
        if interrupted {
            let left = deadline.saturating_sub(clock::now());
            if rem != 0 && space().write(rem, &timespec_bytes(left)).is_err() {
                return -errno::EFAULT;
            }
            return -errno::EINTR;
        }
    }
}

/// `clock_nanosleep(clock, flags, req, rem)` on CLOCK_REALTIME or CLOCK_MONOTONIC (one
/// clock in cfslab), relative or with TIMER_ABSTIME; the CPU-time clocks give EINVAL
/// (Linux sleeps on the process's, which cfslab does not). Unlike `nanosleep` it returns
/// the error as a positive number in the C library, but the system call is `-errno` as
/// always.
pub fn clock_nanosleep(clock_id: u64, flags: u64, req: u64, rem: u64) -> i64 {
    const TIMER_ABSTIME: u64 = 1;
    if clock_id > 1 {
        return -errno::EINVAL;
    }
    match read_timespec(req) {
        // An absolute sleep leaves `rem` alone: the same deadline serves a retry.
        Ok(deadline) if flags & TIMER_ABSTIME != 0 => user_sleep_until(deadline, 0),
        Ok(ns) => user_sleep_until(clock::now().saturating_add(ns), rem),
        Err(e) => e,
    }
}

/// `time(tloc)`: seconds on CLOCK_REALTIME (which counts from boot on cfslab), also
/// written to `tloc` unless it is null.
pub fn time(tloc: u64) -> i64 {
    let seconds = clock::now() / 1_000_000_000;
    if tloc != 0 && space().write(tloc, &seconds.to_le_bytes()).is_err() {
        return -errno::EFAULT;
    }
    seconds as i64
}

/// `sysinfo(info)`: Linux's `struct sysinfo` (112 bytes) — uptime in seconds, the load
/// averages (×65536), memory in bytes (mem_unit 1): total, free, shared 0, buffers 0, no
/// swap — and the number of tasks, as `free` and `uptime` read them.
pub fn sysinfo(info: u64) -> i64 {
    let (total, free, _) = crate::mm::frame_counts();
    let loads = crate::sched::loadavg::raw();
    let tasks = crate::sched::procview::listed_tasks().len() as u16;
    let mut out = [0u8; 112];
    out[0..8].copy_from_slice(&(clock::now() / 1_000_000_000).to_le_bytes());
    for (i, load) in loads.iter().enumerate() {
        // Linux's SI_LOAD_SHIFT is 16, the averages' own FSHIFT 11.
        out[8 + 8 * i..16 + 8 * i].copy_from_slice(&(load << 5).to_le_bytes());
    }
    out[32..40].copy_from_slice(&(total * 4096).to_le_bytes());
    out[40..48].copy_from_slice(&(free * 4096).to_le_bytes());
    out[80..82].copy_from_slice(&tasks.to_le_bytes());
    out[104..108].copy_from_slice(&1u32.to_le_bytes());
    match space().write(info, &out) {
        Ok(()) => 0,
        Err(_) => -errno::EFAULT,
    }
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

/// `reboot(magic1, magic2, cmd)`: root only (EPERM), with Linux's two magic numbers
/// (EINVAL). Power-off, halt and restart all end the run with success, with Linux's line;
/// other commands give EINVAL.
pub fn reboot(magic1: u64, magic2: u64, cmd: u64) -> i64 {
    const MAGIC1: u32 = 0xfee1_dead;
    const MAGIC2: [u32; 4] = [672_274_793, 85_072_278, 369_367_448, 537_993_216];
    const RESTART: u32 = 0x0123_4567;
    const HALT: u32 = 0xcdef_0123;
    const POWER_OFF: u32 = 0x4321_fedc;
    if sched::current_uid() != 0 {
        return -errno::EPERM;
    }
    if magic1 as u32 != MAGIC1 || !MAGIC2.contains(&(magic2 as u32)) {
        return -errno::EINVAL;
    }
    let line = match cmd as u32 {
        POWER_OFF => "reboot: Power down",
        HALT => "reboot: System halted",
        RESTART => "reboot: Restarting system",
        _ => return -errno::EINVAL,
    };
    crate::println!("{line}");
    crate::println!(
        "RESULT {{\"kind\":\"reboot\",\"pid\":{},\"cmd\":\"{}\"}}",
        crate::task::pid_of(sched::current()),
        line.trim_start_matches("reboot: ")
    );
    crate::exit(crate::ExitCode::Success)
}
