//! The kernel's clock: nanoseconds since boot, from the TSC, calibrated against the PIT.
//!
//! The TSC's rate is measured, not assumed: 50 ms of PIT channel 2 against the TSC. Under
//! QEMU's `-icount` both run on virtual time and the measurement gives 1 GHz (one TSC tick per
//! virtual nanosecond); without it the TSC runs at the host's rate.

use crate::arch::{pit, tsc};
use core::sync::atomic::{AtomicU64, Ordering};

/// PIT ticks of the calibration window: 59 659 × (1 / 1.193182 MHz) = 50 ms.
const CALIBRATION_PIT_TICKS: u16 = 59_659;

static TSC_HZ: AtomicU64 = AtomicU64::new(0);
static TSC_AT_BOOT: AtomicU64 = AtomicU64::new(0);
/// Nanoseconds per TSC tick as a 32.32 fixed-point number: `now` multiplies by it and shifts
/// instead of dividing by the frequency, as Linux's clocksources do (`mult`/`shift`). A
/// 128-bit division costs about a hundred instructions, and the scheduler reads the clock
/// on every switch; the fraction's 32 bits are finer than the calibration itself (one part
/// in 10⁷).
static NS_PER_TICK_32_32: AtomicU64 = AtomicU64::new(0);
const FRACTION_BITS: u32 = 32;

/// Measures the TSC's frequency and starts the clock at 0. Returns the frequency in Hz.
pub fn calibrate() -> u64 {
    let delta = pit::measure_tsc(CALIBRATION_PIT_TICKS, tsc::read);
    let hz = delta * pit::PIT_HZ / u64::from(CALIBRATION_PIT_TICKS);
    TSC_HZ.store(hz.max(1), Ordering::Relaxed);
    let mult = (1_000_000_000u128 << FRACTION_BITS) / u128::from(hz.max(1));
    NS_PER_TICK_32_32.store(u64::try_from(mult).unwrap_or(u64::MAX), Ordering::Relaxed);
    TSC_AT_BOOT.store(tsc::read(), Ordering::Relaxed);
    hz
}

/// The calibrated TSC frequency (0 before [`calibrate`]).
pub fn tsc_hz() -> u64 {
    TSC_HZ.load(Ordering::Relaxed)
}

/// Nanoseconds since [`calibrate`] (on several CPUs, since the anchor: [`restart_at`]).
pub fn now() -> u64 {
    ns_of(tsc::read().wrapping_sub(TSC_AT_BOOT.load(Ordering::Relaxed)))
}

/// `ticks` of the TSC in nanoseconds.
#[inline(always)]
fn ns_of(ticks: u64) -> u64 {
    let mult = NS_PER_TICK_32_32.load(Ordering::Relaxed);
    ((u128::from(ticks) * u128::from(mult)) >> FRACTION_BITS) as u64
}

/// The clock starts again at 0 when the TSC reads `tsc` (`time::anchor`, before the other
/// CPUs start): from there on it counts from a fixed instant of the machine instead of from
/// calibration, whose instant differs from boot to boot. Only the boot's own set-up has
/// read the clock before, and keeps no reading of it.
pub fn restart_at(tsc: u64) {
    TSC_AT_BOOT.store(tsc, Ordering::Relaxed);
}

/// What the clock reads when the TSC reads `tsc` (0 for a TSC before calibration).
pub fn at_tsc(tsc: u64) -> u64 {
    ns_of(tsc.saturating_sub(TSC_AT_BOOT.load(Ordering::Relaxed)))
}

/// Spins until the clock reads `deadline`.
pub fn spin_until(deadline: u64) {
    while now() < deadline {
        core::hint::spin_loop();
    }
}
