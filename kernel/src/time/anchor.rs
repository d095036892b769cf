//! The anchor: before the other CPUs start, the boot CPU waits until the TSC reaches a
//! fixed value, halting once on the way, so that every multi-CPU run goes on from the same
//! virtual instant. Linux has no such thing; it is here for QEMU's sake.
//!
//! Why: under `-icount` QEMU runs every vCPU on one thread, in turn, and cuts the turns
//! with a round-robin kick timer on the virtual clock, re-armed when the vCPUs wake after
//! all of them halted. The firmware stage takes a different virtual time on every boot (its
//! disk reads complete when the host's do), so without an anchor the kick timer's phase
//! against the kernel differs from one boot to the next, the CPUs interleave differently,
//! and a multi-CPU run's figures differ. With one CPU there is nothing to interleave and
//! all figures are relative to the kernel's own clock, so one CPU needs no anchor.
//!
//! How: the anchor is the TSC's first whole second at least [`POLLED_MS`] ahead (and never
//! before [`ANCHOR_S`]): whole seconds, because QEMU keeps a timer of its own on them
//! (most likely its RTC's once-a-second update, armed at reset) — anchors a tenth of a
//! second apart gave two different runs of one 8-CPU scenario, anchors at 1 s and 2 s the
//! same. The CPU halts (its own timer wakes it) until [`POLLED_MS`] before the anchor,
//! polls the TSC until just before it, then halts once more, the anchor's timer armed: every
//! vCPU halts (the others have not started), QEMU stops its kick timer and leaps the
//! clock to the timer, and re-arms the kick timer from there — at the same instant of the
//! kernel's clock on every boot, since the clock starts again at 0 at the anchor instead of
//! counting from its calibration (whose instant differs as the firmware's time does).
//!
//! Why poll first: QEMU's leap is made by its main-loop thread, which reads the virtual
//! clock without the instructions of the turn that just ended in `hlt` until the vCPU
//! thread has counted them (read in QEMU 10.0.2's `util/main-loop.c`,
//! `accel/tcg/icount-common.c`, `tcg-accel-ops-rr.c`). A main loop still busy from an
//! earlier leap (each leap wakes it once more) when the CPU halts could leap from the
//! stale clock, and the wake-up would come late by those instructions — by the host's
//! timing. The ticks' halts before the anchor are such leaps; after 50 ms of polling the
//! main loop has long gone back to sleep. (Not seen to matter here; a CI machine's two runs
//! of one commit once differed, for a reason not found, and this is the one instant every
//! run's interleaving hangs on.) Measured without the anchor: three runs of an 8-CPU
//! scenario, three results; with it, the same bytes every time.

use super::{clock, hrtimer};
use crate::arch::{irq, tsc};

/// The earliest anchor, in seconds of TSC time since the machine's reset.
pub const ANCHOR_S: u64 = 1;
/// The boot CPU polls for this many milliseconds before its last halt (see the module's
/// docs): the host's main loop has long gone back to sleep by then.
pub const POLLED_MS: u64 = 50;
/// It halts this many microseconds before the anchor.
const HALT_BEFORE_US: u64 = 10;

/// Waits on the (boot) CPU until the TSC reads the anchor, where the clock starts again.
/// The timer device is set up ([`super::init`]) and the APs are not started yet.
pub fn wait() {
    let hz = clock::tsc_hz();
    let polled = hz / 1000 * POLLED_MS;
    let anchor = (tsc::read() + polled).div_ceil(hz).max(ANCHOR_S) * hz;
    // Halted until the polled stretch (other timers may end a halt early: halt again).
    halt_until(anchor - polled);
    let halt_at = anchor - hz / 1_000_000 * HALT_BEFORE_US;
    while tsc::read() < halt_at {
        core::hint::spin_loop();
    }
    // The last halt, the anchor's timer armed; an earlier timer (the tick) may end it: the
    // rest is polled, not halted again.
    hrtimer::start(clock::at_tsc(anchor), hrtimer::Action::Anchor);
    irq::disable();
    if tsc::read() < anchor {
        irq::enable_and_wait();
        irq::disable();
    }
    while tsc::read() < anchor {
        core::hint::spin_loop();
    }
    clock::restart_at(anchor);
    irq::enable();
}

/// Halts until the TSC reads `until`, woken by a timer that does nothing but end the halt
/// (the APIC timer's: several CPUs tick with it alone); interrupts are on at the end.
fn halt_until(until: u64) {
    hrtimer::start(clock::at_tsc(until), hrtimer::Action::Anchor);
    loop {
        irq::disable();
        if tsc::read() >= until {
            irq::enable();
            return;
        }
        irq::enable_and_wait();
    }
}
