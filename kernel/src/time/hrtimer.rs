//! High-resolution timers: a queue of callbacks ordered by expiry, and the clock event device
//! that fires for the earliest one (Linux's hrtimer core over clockevents).
//!
//! With the local APIC (`clockevent=lapic`) every change of the earliest expiry re-programs
//! the APIC's one-shot timer, so timers fire on time to within the interrupt's latency. With
//! the PIT (`clockevent=pit`) the device only ticks periodically, and a timer fires at the
//! first tick at or after its expiry — the resolution of the jiffies world.
//!
//! Callbacks run in interrupt context with interrupts off; they must be short and must not
//! start a context switch themselves (they may ask for one).

use super::clock;
use crate::arch::x86_64::apic;
use alloc::collections::BTreeMap;
use spin::Mutex;

/// What a timer calls when it expires: `callback(data, now)`.
pub type Callback = fn(u64, u64);

/// A pending timer, for [`cancel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimerId {
    expiry: u64,
    sequence: u64,
}

/// The device that interrupts for expired timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    /// The APIC timer in one-shot mode, counting `apic_hz` ticks per second.
    Lapic { apic_hz: u64 },
    /// The PIT, periodic: timers are checked at each of its interrupts.
    PitPeriodic,
}

struct Queue {
    timers: BTreeMap<TimerId, (Callback, u64)>,
    sequence: u64,
    device: Option<Device>,
}

static QUEUE: Mutex<Queue> = Mutex::new(Queue {
    timers: BTreeMap::new(),
    sequence: 0,
    device: None,
});

fn with_queue<R>(f: impl FnOnce(&mut Queue) -> R) -> R {
    x86_64::instructions::interrupts::without_interrupts(|| f(&mut QUEUE.lock()))
}

/// Chooses the device timers are served by.
pub fn set_device(device: Device) {
    with_queue(|q| {
        q.device = Some(device);
        program(q);
    });
}

/// Arms the one-shot for the earliest expiry (APIC only; the PIT just keeps ticking).
fn program(q: &Queue) {
    let Some(Device::Lapic { apic_hz }) = q.device else {
        return;
    };
    match q.timers.keys().next() {
        Some(first) => {
            let delta_ns = first.expiry.saturating_sub(clock::now());
            let ticks = (u128::from(delta_ns) * u128::from(apic_hz) / 1_000_000_000) as u64;
            apic::arm_oneshot(ticks.max(1));
        }
        None => apic::disarm(),
    }
}

/// Starts a timer that calls `callback(data, now)` at `expiry` (clock nanoseconds).
pub fn start(expiry: u64, callback: Callback, data: u64) -> TimerId {
    with_queue(|q| {
        q.sequence += 1;
        let id = TimerId {
            expiry,
            sequence: q.sequence,
        };
        q.timers.insert(id, (callback, data));
        program(q);
        id
    })
}

/// Cancels a timer; false if it already fired (or never existed).
pub fn cancel(id: TimerId) -> bool {
    with_queue(|q| {
        let was_pending = q.timers.remove(&id).is_some();
        program(q);
        was_pending
    })
}

/// Runs every expired timer (from the timer interrupt). Each callback runs with the queue
/// unlocked, so it may start new timers.
pub fn run_expired() {
    loop {
        let now = clock::now();
        let due = with_queue(|q| {
            let (&id, _) = q.timers.iter().next().filter(|(id, _)| id.expiry <= now)?;
            q.timers.remove(&id)
        });
        match due {
            Some((callback, data)) => callback(data, now),
            None => break,
        }
    }
    with_queue(|q| program(q));
}

/// Number of pending timers.
pub fn pending() -> usize {
    with_queue(|q| q.timers.len())
}
