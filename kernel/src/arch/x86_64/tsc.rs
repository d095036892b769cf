//! The time-stamp counter: a 64-bit count of CPU clock cycles, read with `rdtsc`. It is
//! cfslab's clock source once calibrated against the PIT (see [`super::pit`]); under QEMU's
//! `-icount` it advances exactly once per virtual nanosecond.

/// The current TSC value.
pub fn read() -> u64 {
    // SAFETY: `rdtsc` only reads the counter; it is available on every x86_64 CPU.
    unsafe { core::arch::x86_64::_rdtsc() }
}
