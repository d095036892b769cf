//! Time: the clock (TSC in nanoseconds), high-resolution timers on a clock event device, and
//! the periodic scheduler tick built on them. Mechanism only: what an expired timer *does*
//! (the tick calls the scheduler) is decided in the timer interrupt, `trap::timer_interrupt`.

pub mod anchor;
pub mod clock;
pub mod hrtimer;

use crate::arch::{apic, pic, pit};
use crate::config::ClockEvent;
use core::fmt;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use spin::Once;

/// What [`init`] measured and chose.
#[derive(Debug, Clone, Copy)]
pub struct TimeReport {
    pub tsc_hz: u64,
    /// The APIC timer's rate (0 with `clockevent=pit`).
    pub apic_hz: u64,
    pub clockevent: ClockEvent,
    /// The tick period in ns (with the PIT: its nearest divisor's period).
    pub tick_ns: u64,
    pub hrtimer: bool,
}

impl fmt::Display for TimeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "TSC {}.{:06} MHz, clockevent {}, tick {} ns, hrtimers {}",
            self.tsc_hz / 1_000_000,
            self.tsc_hz % 1_000_000,
            match self.clockevent {
                ClockEvent::Lapic => "lapic",
                ClockEvent::Pit => "pit",
            },
            self.tick_ns,
            if self.hrtimer { "on" } else { "off" }
        )?;
        if self.apic_hz != 0 {
            write!(
                f,
                " (APIC timer {}.{:06} MHz)",
                self.apic_hz / 1_000_000,
                self.apic_hz % 1_000_000
            )?;
        }
        Ok(())
    }
}

static TICK_NS: AtomicU64 = AtomicU64::new(1_000_000);
static HRTIMER_OFF: AtomicBool = AtomicBool::new(false);

/// Maps the local APIC's registers (once): the timer needs them, and so does starting the
/// other CPUs, whatever the clock event device.
pub fn map_local_apic() {
    static MAPPED: Once<()> = Once::new();
    MAPPED.call_once(|| {
        crate::mm::map_mmio(
            crate::arch::paging::PhysAddr::new(apic::physical_base()),
            crate::arch::paging::VirtAddr::new(apic::LAPIC_VIRT),
        )
        .expect("cannot map the local APIC");
    });
}

/// Calibrates the clock (once: the clock never restarts) and sets up the clock event device
/// for `clockevent` at `hz`. Interrupts are enabled on return. Called at boot, and again by
/// tests that switch devices.
pub fn init(clockevent: ClockEvent, hz: u32, hrtimer: bool) -> TimeReport {
    crate::arch::irq::disable();
    static CALIBRATED: Once<u64> = Once::new();
    let tsc_hz = *CALIBRATED.call_once(clock::calibrate);
    HRTIMER_OFF.store(!hrtimer, Ordering::Relaxed);
    let (tick_ns, apic_hz) = match clockevent {
        ClockEvent::Lapic => {
            pit::stop_periodic();
            pic::init(0);
            map_local_apic();
            apic::enable();
            // 10 ms by the calibrated clock.
            let window = 10_000_000;
            let ticks = apic::measure_ticks(|| clock::spin_until(clock::now() + window));
            let apic_hz = ticks * 1_000_000_000 / window;
            let tick_ns = 1_000_000_000 / u64::from(hz);
            hrtimer::set_device(hrtimer::Device::Lapic { apic_hz }, tick_ns);
            (tick_ns, apic_hz)
        }
        ClockEvent::Pit => {
            apic::disarm_if_mapped();
            pic::init(1 << 0);
            let tick_ns = pit::start_periodic(hz);
            hrtimer::set_device(hrtimer::Device::PitPeriodic, tick_ns);
            (tick_ns, 0)
        }
    };
    TICK_NS.store(tick_ns, Ordering::Relaxed);
    crate::arch::irq::enable();
    TimeReport {
        tsc_hz,
        apic_hz,
        clockevent,
        tick_ns,
        hrtimer,
    }
}

/// The tick period in ns.
pub fn tick_ns() -> u64 {
    TICK_NS.load(Ordering::Relaxed)
}

/// When a sleep that should end at `t` really ends: `t` with hrtimers; with `hrtimer=off`
/// the next tick boundary at or after it, as a jiffies-based kernel would wake it.
pub fn sleep_expiry(t: u64) -> u64 {
    // Linux's KTIME_MAX: a deadline "for ever" (a program may ask for 2^64 - 1 ns) is 292
    // years away, and no arithmetic on it can overflow.
    let t = t.min(i64::MAX as u64);
    if HRTIMER_OFF.load(Ordering::Relaxed) {
        t.next_multiple_of(tick_ns())
    } else {
        t
    }
}

/// How late an ordinary user task's timed sleep may end: Linux's default `timer_slack_ns`,
/// 50 µs, so that timers close together fire in one interrupt (2.6.28's timer slack). It
/// applies to `nanosleep`, `clock_nanosleep` and futex waits.
pub const TIMER_SLACK_NS: u64 = ::sched::programs::TIMER_SLACK_NS;

/// The slack of a `select` or `poll` that waits up to `timeout_ns`: 0.1 % of the timeout,
/// at most 100 ms, and never less than [`TIMER_SLACK_NS`] (Linux's
/// `select_estimate_accuracy`; its 0.5 % for niced tasks and none for real-time ones are
/// not modelled).
pub fn poll_slack(timeout_ns: u64) -> u64 {
    (timeout_ns / 1_000).clamp(TIMER_SLACK_NS, 100_000_000)
}

/// Ticks so far (on this CPU).
pub fn ticks() -> u64 {
    crate::percpu::this_cpu().ticks()
}

/// Starts the periodic scheduler tick on the running CPU, on the next multiple of the
/// period, so that every CPU ticks in phase (later calls do nothing while it runs).
pub fn start_tick() {
    let cpu = crate::percpu::this_cpu();
    if !cpu.tick_on() {
        cpu.set_tick_on(true);
        let first = clock::now().next_multiple_of(tick_ns());
        hrtimer::start(first, hrtimer::Action::Tick);
    }
}

/// Stops the running CPU's periodic tick, as an idle AP does (Linux's
/// `tick_nohz_idle_stop_tick`): under `-icount` a CPU that halts with no timer armed
/// costs the machine no instructions. [`start_tick`] starts it again.
pub fn stop_tick() {
    let cpu = crate::percpu::this_cpu();
    if cpu.tick_on() {
        cpu.set_tick_on(false);
        hrtimer::stop_tick();
    }
}

#[cfg(test)]
mod tests;
