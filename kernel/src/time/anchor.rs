//! The anchor: before the other CPUs start, the boot CPU halts until the TSC reaches a
//! fixed absolute value, so that every multi-CPU run goes on from the same virtual instant.
//! Linux has no such thing; it is here for QEMU's sake.
//!
//! Why: under `-icount` QEMU runs every vCPU on one thread, in turn, and cuts the turns
//! with a round-robin kick timer on the virtual clock, re-armed from when the vCPUs last
//! woke. The firmware stage takes a different virtual time on every boot (its disk reads
//! complete when the host's do), so without an anchor the kick timer's phase against the
//! kernel differs from one boot to the next, the CPUs interleave differently, and a
//! multi-CPU run's figures differ. With one CPU there is nothing to interleave and all
//! figures are relative to the kernel's own clock, so one CPU needs no anchor. While every
//! vCPU halts QEMU jumps the clock to the next timer and the wait costs no instructions.
//!
//! What is fixed: the first whole second of TSC time, and never less than [`ANCHOR_S`]
//! seconds (the boot reaches here at about 0.2 s, so a later anchor keeps the same value
//! if the boot grows). The kernel's clock starts again at 0 at the anchor instead of
//! counting from its calibration, whose instant differs as the firmware's time does: the
//! timers the kernel arms then fall at the same instants on every boot, and so do the kick
//! timer's cuts against them. (Measured: without the new start two runs of the same 8-CPU
//! scenario still differed; with it, they repeat byte for byte.) A multi-CPU run's clock
//! thus reads from the anchor as a one-CPU run's reads from calibration.

use super::{clock, hrtimer};
use crate::arch::{irq, tsc};

/// The earliest anchor, in seconds of TSC time since the machine's reset.
pub const ANCHOR_S: u64 = 1;

/// Halts the (boot) CPU until the TSC reads the anchor, where the clock starts again.
/// The timer device is set up ([`super::init`]) and the APs are not started yet.
pub fn wait() {
    let hz = clock::tsc_hz();
    let anchor = tsc::read().div_ceil(hz).max(ANCHOR_S) * hz;
    // The wake-up: a timer that does nothing but end the halt (the APIC timer's: several
    // CPUs tick with it alone).
    hrtimer::start(clock::at_tsc(anchor), hrtimer::Action::Anchor);
    loop {
        irq::disable();
        if tsc::read() >= anchor {
            clock::restart_at(anchor);
            irq::enable();
            return;
        }
        irq::enable_and_wait();
    }
}
