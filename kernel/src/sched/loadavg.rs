//! The load average (Linux's `calc_global_load`, kernel/sched/loadavg.c): every five seconds
//! the number of runnable tasks — running or waiting for the CPU; cfslab has no
//! uninterruptible sleep to count — is folded into three exponentially decaying averages,
//! over 1, 5 and 15 minutes, in Linux's 11-bit fixed point and with its rounding, so that
//! `/proc/loadavg` and `uptime` read as Linux's.

use crate::sync::{Rank, SpinLock};
use core::sync::atomic::{AtomicU64, Ordering};

/// Fixed point: 1.0 is 1 << 11.
const FSHIFT: u32 = 11;
const FIXED_1: u64 = 1 << FSHIFT;
/// e^(-5 s / 1 min), e^(-5 s / 5 min), e^(-5 s / 15 min) in fixed point.
const EXP: [u64; 3] = [1884, 2014, 2037];
/// Linux samples every 5 s plus a tick (LOAD_FREQ), so as not to beat with 5 s timers.
const LOAD_FREQ_NS: u64 = 5_000_000_000;

/// The three averages, in fixed point.
static LOAD: SpinLock<[u64; 3]> = SpinLock::new(Rank::Leaf, [0; 3]);

/// When the next sample is due: read at every tick without the lock (a sample is due once
/// in 1 250 ticks at HZ 250), written under it.
static NEXT_SAMPLE: AtomicU64 = AtomicU64::new(LOAD_FREQ_NS);

/// Linux's `calc_load`: the new average, rounded up while the load rises.
fn fold(load: u64, exp: u64, active: u64) -> u64 {
    let mut new = load * exp + active * (FIXED_1 - exp);
    if active >= load {
        new += FIXED_1 - 1;
    }
    new / FIXED_1
}

/// Whether a sample is due at `now` (what [`tick`] checks first, without its lock).
pub fn due(now: u64) -> bool {
    now >= NEXT_SAMPLE.load(Ordering::Relaxed)
}

/// Called from the boot CPU's tick with the clock and, lazily, the number of runnable
/// tasks: folds them in when a sample is due (then `runnable` is called, under the
/// scheduler's lock, and before this module's: counting may take runqueue locks, which
/// rank below it).
pub fn tick(now: u64, runnable: impl FnOnce() -> u64) {
    if !due(now) {
        return;
    }
    let active = runnable() * FIXED_1;
    let mut averages = LOAD.lock();
    // Checked again under the lock, so that one tick folds one sample.
    if !due(now) {
        return;
    }
    for (average, exp) in averages.iter_mut().zip(EXP) {
        *average = fold(*average, exp, active);
    }
    let next = now + LOAD_FREQ_NS + crate::time::tick_ns();
    NEXT_SAMPLE.store(next, Ordering::Relaxed);
}

/// The three averages in fixed point (1.0 is 2048), for `sysinfo`.
pub fn raw() -> [u64; 3] {
    *LOAD.lock()
}

/// The three averages as `/proc/loadavg` prints them: "0.52 0.21 0.08".
pub fn text() -> alloc::string::String {
    let averages = *LOAD.lock();
    let mut out = alloc::string::String::new();
    for (i, a) in averages.iter().enumerate() {
        let frac = ((a & (FIXED_1 - 1)) * 100) >> FSHIFT;
        let sep = if i == 0 { "" } else { " " };
        out.push_str(&alloc::format!("{sep}{}.{frac:02}", a >> FSHIFT));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test_case]
    fn one_runnable_task_for_a_minute_is_a_load_of_about_0_63() {
        // Twelve 5 s samples of one task: 1 - e^-1 of the way from 0 to 1 on the 1-minute
        // average, as Linux's uptime shows after a minute of one busy loop.
        let mut load = 0;
        for _ in 0..12 {
            load = fold(load, EXP[0], FIXED_1);
        }
        let hundredths = load * 100 / FIXED_1;
        assert!((62..=64).contains(&hundredths), "{hundredths}");
    }
}
