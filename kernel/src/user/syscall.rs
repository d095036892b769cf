//! The system-call table: Linux's x86_64 numbers and semantics (arguments in rdi, rsi, rdx,
//! r10, r8, r9; the result in rax, `-errno` on failure). A number cfslab does not implement
//! answers ENOSYS, and the console says so once per number.
//!
//! The dispatcher runs on the calling task's kernel stack with interrupts on, so a call may
//! sleep (nanosleep) or be preempted like any kernel code; it returns with them off, as the
//! SYSRET path needs.

use super::process::{self, Exit};
use crate::arch::x86_64::syscall::SyscallFrame;
use crate::sched;
use crate::time::clock;
use x86_64::instructions::interrupts;

/// Linux's error numbers used here.
mod errno {
    pub const EBADF: i64 = 9;
    pub const EFAULT: i64 = 14;
    pub const EINVAL: i64 = 22;
    pub const ENOTTY: i64 = 25;
    pub const ENOSYS: i64 = 38;
}

/// Linux's numbers (arch/x86/entry/syscalls/syscall_64.tbl) for the calls handled here.
mod nr {
    pub const WRITE: u64 = 1;
    pub const IOCTL: u64 = 16;
    pub const SCHED_YIELD: u64 = 24;
    pub const NANOSLEEP: u64 = 35;
    pub const GETPID: u64 = 39;
    pub const EXIT: u64 = 60;
    pub const UNAME: u64 = 63;
    pub const GETUID: u64 = 102;
    pub const GETGID: u64 = 104;
    pub const GETEUID: u64 = 107;
    pub const GETEGID: u64 = 108;
    pub const GETPPID: u64 = 110;
    pub const GETTID: u64 = 186;
    pub const SET_TID_ADDRESS: u64 = 218;
    pub const CLOCK_GETTIME: u64 = 228;
    pub const EXIT_GROUP: u64 = 231;
}

/// Most bytes one `write` copies (a longer write is a short write, as POSIX allows).
const WRITE_MAX: usize = 64 * 1024;

/// SYSCALL's handler (called from the entry path with the saved registers).
pub extern "C" fn dispatch(frame: &mut SyscallFrame) {
    interrupts::enable();
    let args = [
        frame.rdi, frame.rsi, frame.rdx, frame.r10, frame.r8, frame.r9,
    ];
    let result = call(frame.rax, args);
    frame.rax = result as u64;
    interrupts::disable();
}

fn call(number: u64, a: [u64; 6]) -> i64 {
    match number {
        nr::WRITE => write(a[0], a[1], a[2]),
        nr::IOCTL => -errno::ENOTTY,
        nr::SCHED_YIELD => {
            sched::yield_now();
            0
        }
        nr::NANOSLEEP => nanosleep(a[0]),
        nr::GETPID | nr::GETTID | nr::SET_TID_ADDRESS => pid_of(sched::current()),
        nr::GETPPID => sched::parent_of(sched::current()).map_or(0, pid_of),
        nr::GETUID | nr::GETEUID | nr::GETGID | nr::GETEGID => i64::from(sched::current_uid()),
        nr::UNAME => uname(a[0]),
        nr::CLOCK_GETTIME => clock_gettime(a[0], a[1]),
        nr::EXIT | nr::EXIT_GROUP => {
            process::record_exit(Exit::Status(a[0] as u8));
            sched::exit()
        }
        other => {
            unimplemented(other);
            -errno::ENOSYS
        }
    }
}

/// A task's pid as programs see it: its id plus one (pid 0 is the idle task, as in the
/// trace).
fn pid_of(id: crate::task::TaskId) -> i64 {
    id as i64 + 1
}

/// Says once per number that a program called something cfslab does not implement.
fn unimplemented(number: u64) {
    static SEEN: spin::Mutex<[u64; 8]> = spin::Mutex::new([0; 8]);
    let first = interrupts::without_interrupts(|| {
        let mut seen = SEEN.lock();
        let word = (number / 64) as usize;
        if word >= seen.len() {
            return true;
        }
        let first = seen[word] & (1 << (number % 64)) == 0;
        seen[word] |= 1 << (number % 64);
        first
    });
    if first {
        crate::println!("cfslab: system call {number} is not implemented (ENOSYS)");
    }
}

fn write(fd: u64, buf: u64, len: u64) -> i64 {
    if fd != 1 && fd != 2 {
        return -errno::EBADF;
    }
    let Some(space) = sched::current_address_space() else {
        return -errno::EFAULT;
    };
    let len = (len as usize).min(WRITE_MAX);
    let mut bytes = alloc::vec![0u8; len];
    if space.read(buf, &mut bytes).is_err() {
        return -errno::EFAULT;
    }
    crate::arch::x86_64::serial::with_console(|out| {
        let _ = out.write_str(&alloc::string::String::from_utf8_lossy(&bytes));
    });
    len as i64
}

/// Linux's `struct timespec` as 16 little-endian bytes.
fn timespec_bytes(ns: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&(ns / 1_000_000_000).to_le_bytes());
    out[8..].copy_from_slice(&(ns % 1_000_000_000).to_le_bytes());
    out
}

fn clock_gettime(clock_id: u64, ts: u64) -> i64 {
    let ns = match clock_id {
        // REALTIME: cfslab has no wall clock; it counts from boot, as MONOTONIC does.
        0 | 1 => clock::now(),
        2 | 3 => sched::current_cpu_ns(),
        _ => return -errno::EINVAL,
    };
    match sched::current_address_space().map(|s| s.write(ts, &timespec_bytes(ns))) {
        Some(Ok(())) => 0,
        _ => -errno::EFAULT,
    }
}

fn nanosleep(req: u64) -> i64 {
    let Some(space) = sched::current_address_space() else {
        return -errno::EFAULT;
    };
    let mut raw = [0u8; 16];
    if space.read(req, &mut raw).is_err() {
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

fn uname(buf: u64) -> i64 {
    // Six fields of 65 bytes: sysname, nodename, release, version, machine, domainname.
    let mut uts = [0u8; 6 * 65];
    let fields: [&[u8]; 6] = [
        b"cfslab", b"cfslab", b"0.1.0", b"cfslab", b"x86_64", b"(none)",
    ];
    for (i, field) in fields.iter().enumerate() {
        uts[i * 65..i * 65 + field.len()].copy_from_slice(field);
    }
    match sched::current_address_space().map(|s| s.write(buf, &uts)) {
        Some(Ok(())) => 0,
        _ => -errno::EFAULT,
    }
}
