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
//! Each CPU has a queue of its own (Linux's per-CPU `hrtimer_cpu_base`), served by its own
//! local APIC: a timer fires on the CPU that started it — a task's sleep on the CPU it
//! sleeps on, each CPU's tick on that CPU — and is cancelled from anywhere by its
//! [`TimerId`], which names the queue it started on. A CPU going offline hands its timers
//! to another ([`take_timers_of`]); they keep their ids, and [`cancel`] finds them there.
//!
//! A timer carries an [`Action`], not a function pointer: what expiring means is written in
//! one place, the timer interrupt's (`trap::timer_interrupt`), where a reader sees every
//! kind of timer at once. Actions run in interrupt context with interrupts off; they must
//! be short and must not start a context switch themselves (they may ask for one).

use super::clock;
use crate::arch::apic;
use crate::percpu::this_cpu;
use crate::sync::{Rank, SpinLock};
use crate::task::{TaskId, TaskRef};
use alloc::collections::BTreeMap;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What happens when a timer expires.
#[derive(Debug, Clone, Copy)]
pub enum Action {
    /// The periodic scheduler tick (`time::start_tick`): the queue re-arms it one period
    /// after each expiry, so ticks do not drift with interrupt latency. While the PIT
    /// drives the tick its expiries are skipped: each PIT interrupt is a tick itself.
    Tick,
    /// A timed sleep ends: wake this task (as its wakers keep it: its CPU is where the
    /// wake-up looks first).
    Wake(TaskRef),
    /// A long lab window prints how far it has got (`lab::progress`).
    LabProgress,
    /// A process's ITIMER_REAL expires (`alarm`, `setitimer`): SIGALRM to the process
    /// this task leads.
    Alarm(TaskId),
    /// The boot CPU's wait for the anchor ends (`time::anchor`): waking it is all.
    Anchor,
    /// The kernel's own tests: `record(data, now)`.
    #[cfg(test)]
    Test(fn(u64, u64), u64),
}

/// A pending timer, for [`cancel`]: the queue's order, by hard expiry, and the CPU whose
/// queue it started on (another's since, if that CPU went offline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimerId {
    expiry: u64,
    sequence: u64,
    cpu: usize,
}

/// A queued timer: what it does, and its soft expiry (the earliest it may fire).
struct Timer {
    action: Action,
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
    /// The tick's period, in ns.
    tick_ns: u64,
}

/// Every CPU's queue, by CPU number.
static QUEUES: [SpinLock<Queue>; bootopts::MAX_CPUS as usize] = [const {
    SpinLock::new(
        Rank::Timers,
        Queue {
            timers: BTreeMap::new(),
            sequence: 0,
            device: None,
            tick_ns: 1_000_000,
        },
    )
}; bootopts::MAX_CPUS as usize];

/// The PIT, not the APIC, drives the tick (read at every timer interrupt, without the lock).
static PIT_DRIVES_TICK: AtomicBool = AtomicBool::new(false);

/// The running CPU's queue.
fn with_queue<R>(f: impl FnOnce(&mut Queue) -> R) -> R {
    f(&mut QUEUES[this_cpu().index()].lock())
}

/// Chooses the device timers are served by, and the tick's period, for every CPU (each
/// CPU's APIC timer counts at the same rate: QEMU's bus clock).
pub fn set_device(device: Device, tick_ns: u64) {
    PIT_DRIVES_TICK.store(device == Device::PitPeriodic, Ordering::Relaxed);
    for queue in &QUEUES {
        let mut q = queue.lock();
        q.device = Some(device);
        q.tick_ns = tick_ns;
    }
    reprogram();
}

/// Whether each timer interrupt is itself a tick (`clockevent=pit`).
pub fn pit_drives_tick() -> bool {
    PIT_DRIVES_TICK.load(Ordering::Relaxed)
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

/// Starts a timer that does `action` at `expiry` (clock nanoseconds).
pub fn start(expiry: u64, action: Action) -> TimerId {
    start_range(expiry, 0, action)
}

/// Starts a timer that does `action` once the clock has passed `expiry`, at the first
/// interrupt from then on, and at `expiry + slack` at the latest.
pub fn start_range(expiry: u64, slack: u64, action: Action) -> TimerId {
    with_queue(|q| {
        let id = q.insert(expiry, slack, action);
        program(q);
        id
    })
}

impl Queue {
    fn insert(&mut self, expiry: u64, slack: u64, action: Action) -> TimerId {
        self.sequence += 1;
        let id = TimerId {
            expiry: expiry.saturating_add(slack),
            sequence: self.sequence,
            cpu: this_cpu().index(),
        };
        let timer = Timer {
            action,
            soft_expiry: expiry,
        };
        self.timers.insert(id, timer);
        id
    }
}

/// Cancels a timer, on whichever CPU's queue it is; false if it already fired (or never
/// existed). Only the running CPU's device is re-armed: another CPU's fires as it was
/// armed, finds nothing expired, and re-arms itself.
///
/// A timer keeps its id when its CPU goes offline and it moves ([`take_timers_of`]): one
/// not in the queue its id names is looked for in the queues that have taken moved timers,
/// and a search that finds nothing while timers were on their way between queues looks
/// again (a sequence count, as a seqlock's reader does).
pub fn cancel(id: TimerId) -> bool {
    loop {
        let before = MOVES.load(Ordering::Acquire);
        if before.is_multiple_of(2) {
            // Until a CPU first goes offline no timer has moved: one look, no other lock.
            let moved = before > 0;
            let takers = RECEIVED.load(Ordering::Acquire);
            let taker = |c: usize| c != id.cpu && takers & 1 << c != 0;
            let elsewhere = (0..QUEUES.len()).filter(|&c| moved && taker(c));
            if core::iter::once(id.cpu)
                .chain(elsewhere)
                .any(|c| remove_from(c, id))
            {
                return true;
            }
            if MOVES.load(Ordering::Acquire) == before {
                return false;
            }
        }
        core::hint::spin_loop();
    }
}

/// Takes timer `id` off CPU `cpu`'s queue; whether it was there.
fn remove_from(cpu: usize, id: TimerId) -> bool {
    let mut q = QUEUES[cpu].lock();
    let was_pending = q.timers.remove(&id).is_some();
    if was_pending && cpu == this_cpu().index() {
        program(&q);
    }
    was_pending
}

/// Counts the moves of timers between queues, twice each: odd while one is under way.
static MOVES: AtomicU64 = AtomicU64::new(0);
/// The queues that have taken another CPU's timers, one bit each: where [`cancel`] looks
/// for a timer its own queue no longer holds.
static RECEIVED: AtomicU64 = AtomicU64::new(0);

/// Moves the timers of CPU `cpu`, gone offline (its tick already stopped), onto the
/// running CPU's queue and re-arms the running CPU's device (Linux's `hrtimers_cpu_dying`):
/// a sleep that CPU timed ends on time here. Each keeps its id ([`cancel`] finds it).
pub fn take_timers_of(cpu: usize) {
    let here = this_cpu().index();
    if cpu == here {
        return;
    }
    // Interrupts off while the count is odd: a cancel from this CPU's own interrupt would
    // wait for the move for ever.
    crate::arch::irq::without(|| {
        MOVES.fetch_add(1, Ordering::AcqRel);
        RECEIVED.fetch_or(1 << here, Ordering::AcqRel);
        let moved = core::mem::take(&mut QUEUES[cpu].lock().timers);
        with_queue(|q| {
            for (id, timer) in moved {
                if !matches!(timer.action, Action::Tick) {
                    q.timers.insert(id, timer);
                }
            }
            program(q);
        });
        MOVES.fetch_add(1, Ordering::AcqRel);
    });
}

/// Stops the periodic tick on the running CPU (its queue's tick timer is removed).
pub fn stop_tick() {
    with_queue(|q| {
        q.timers.retain(|_, t| !matches!(t.action, Action::Tick));
        program(q);
    });
}

/// The action of the next expired timer at `now`, taken off the queue (from the timer
/// interrupt): in order of hard expiry, each whose soft expiry has passed, up to the first
/// whose has not (Linux's `__hrtimer_run_queues`). The caller does the action with the queue
/// unlocked, so that it may start new timers, then calls [`reprogram`].
pub fn pop_expired(now: u64) -> Option<Action> {
    with_queue(|q| {
        loop {
            let (&id, _) = q
                .timers
                .iter()
                .next()
                .filter(|(_, t)| t.soft_expiry <= now)?;
            let timer = q.timers.remove(&id)?;
            if let Action::Tick = timer.action {
                q.insert(timer.soft_expiry + q.tick_ns, 0, Action::Tick);
                if pit_drives_tick() {
                    continue;
                }
            }
            return Some(timer.action);
        }
    })
}

/// Arms the device for the earliest timer left (after the expired ones have run).
pub fn reprogram() {
    with_queue(|q| program(q));
}

/// Number of pending timers on the running CPU.
pub fn pending() -> usize {
    with_queue(|q| q.timers.len())
}
