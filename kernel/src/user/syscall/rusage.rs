//! CPU time as programs read it: `getrusage` (and `wait4`'s rusage, written here too).
//! User and system time come from the scheduler's exact runtime split by where the ticks
//! found the task (`CpuTimes::from_ticks`, Linux's `cputime_adjust`), so they sum to the
//! CPU time the policy charged; the switch counts are `ru_nvcsw` and `ru_nivcsw`. The other
//! fields (memory, I/O, IPC) are zero: cfslab counts none of them.

use super::{errno, space};
use crate::sched;
use crate::sched::proc::exit_status::CpuTimes;

const RUSAGE_SELF: i64 = 0;
const RUSAGE_CHILDREN: i64 = -1;
const RUSAGE_THREAD: i64 = 1;
/// `struct rusage` on x86_64: two `struct timeval`s and fourteen longs.
const RUSAGE_BYTES: usize = 144;

/// The running process's CPU time: its live threads' and its ended threads'.
pub fn process_times() -> CpuTimes {
    let group = sched::current_group().expect("a process");
    let mut times = sched::live_threads_times(&group);
    times.add(group.ended_and_children().0);
    times
}

/// `getrusage(who, usage)`.
pub fn getrusage(who: i64, usage: u64) -> i64 {
    let times = match who {
        RUSAGE_SELF => process_times(),
        RUSAGE_THREAD => sched::current_thread_times(),
        RUSAGE_CHILDREN => {
            let group = sched::current_group().expect("a process");
            group.ended_and_children().1
        }
        _ => return -errno::EINVAL,
    };
    write_rusage(usage, times)
}

/// Writes `times` as a `struct rusage` at `usage`: 0 or -EFAULT.
pub fn write_rusage(usage: u64, times: CpuTimes) -> i64 {
    let mut raw = [0u8; RUSAGE_BYTES];
    let timeval = |ns: u64| {
        let mut tv = [0u8; 16];
        tv[..8].copy_from_slice(&(ns / 1_000_000_000).to_le_bytes());
        tv[8..].copy_from_slice(&(ns % 1_000_000_000 / 1_000).to_le_bytes());
        tv
    };
    raw[0..16].copy_from_slice(&timeval(times.user_ns));
    raw[16..32].copy_from_slice(&timeval(times.system_ns));
    // ru_nvcsw and ru_nivcsw are the last two longs.
    raw[128..136].copy_from_slice(&times.voluntary_switches.to_le_bytes());
    raw[136..144].copy_from_slice(&times.involuntary_switches.to_le_bytes());
    match space().write(usage, &raw) {
        Ok(()) => 0,
        Err(_) => -errno::EFAULT,
    }
}
