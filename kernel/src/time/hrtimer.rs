//! High-resolution timers: a queue of callbacks ordered by expiry, and the clock event device
//! that fires for the earliest one (Linux's hrtimer core over clockevents).
//!
//! With the local APIC (`clockevent=lapic`) every change of the earliest expiry re-programs
//! the APIC's one-shot timer, so timers fire on time to within the interrupt's latency. With
//! the PIT (`clockevent=pit`) the device only ticks periodically, and a timer fires at the
//! first tick at or after its expiry — the resolution of the jiffies world.
//!
//! A timer may have a range (Linux's `hrtimer_set_expires_range_ns`): it may fire anywhere
//! from its soft expiry to its hard expiry = soft + slack. The device is armed for the
//! earliest hard expiry, and every interrupt runs the timers whose soft expiry has passed,
//! so a sleep with slack ends with the next interrupt inside its range — the tick, another
//! timer — or at its hard expiry: user sleeps get Linux's 50 µs `timer_slack_ns` this way.
//!
//! Callbacks run in interrupt context with interrupts off; they must be short and must not
//! start a context switch themselves (they may ask for one).

use super::clock;
use crate::arch::x86_64::apic;
use alloc::collections::BTreeMap;
use spin::Mutex;

/// What a timer calls when it expires: `callback(data, now)`.
pub type Callback = fn(u64, u64);

/// A pending timer, for [`cancel`]: the queue's order, by hard expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimerId {
    expiry: u64,
    sequence: u64,
}

/// A queued timer: what it calls, and its soft expiry (the earliest it may fire).
struct Timer {
    callback: Callback,
    data: u64,
    soft_expiry: u64,
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
    timers: BTreeMap<TimerId, Timer>,
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
    start_range(expiry, 0, callback, data)
}

/// Starts a timer that calls `callback(data, now)` once the clock has passed `expiry`, at
/// the first interrupt from then on, and at `expiry + slack` at the latest.
pub fn start_range(expiry: u64, slack: u64, callback: Callback, data: u64) -> TimerId {
    with_queue(|q| {
        q.sequence += 1;
        let id = TimerId {
            expiry: expiry.saturating_add(slack),
            sequence: q.sequence,
        };
        let timer = Timer {
            callback,
            data,
            soft_expiry: expiry,
        };
        q.timers.insert(id, timer);
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

/// Runs the expired timers (from the timer interrupt): in order of hard expiry, each whose
/// soft expiry has passed, up to the first whose has not (Linux's `__hrtimer_run_queues`).
/// Each callback runs with the queue unlocked, so it may start new timers.
pub fn run_expired() {
    loop {
        let now = clock::now();
        let due = with_queue(|q| {
            let (&id, _) = q
                .timers
                .iter()
                .next()
                .filter(|(_, t)| t.soft_expiry <= now)?;
            q.timers.remove(&id)
        });
        match due {
            Some(t) => (t.callback)(t.data, now),
            None => break,
        }
    }
    with_queue(|q| program(q));
}

/// Number of pending timers.
pub fn pending() -> usize {
    with_queue(|q| q.timers.len())
}
