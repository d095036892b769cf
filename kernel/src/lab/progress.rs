//! Progress lines for long windows: `seed002-a: progress 5.5 of 30 s` each half virtual
//! second, so that a long run shows it is alive at least every 10 host seconds (a busy
//! virtual second cost 7–8 host seconds at icount shift 0 on an idle 2-core machine, more
//! when the host is busy).
//!
//! The lines come from a timer callback, in the timer interrupt, not from a task: a task
//! waking every second to print would be one more task competing for the CPU and would move
//! the figures (it did: one of seed 000's samples changed by 4 ms). The callback costs the
//! interrupted task about a microsecond and changes no scheduling decision.

use crate::println;
use crate::sync::{Rank, SpinLock};
use crate::time::hrtimer;

/// How often a long window says how far it has got.
const EVERY_NS: u64 = 500_000_000;

struct Window {
    scenario: &'static str,
    start: u64,
    end: u64,
    pending: Option<hrtimer::TimerId>,
}

static WINDOW: SpinLock<Option<Window>> = SpinLock::new(Rank::LabWindow, None);

/// Reports progress through the window `start..end` of `scenario`, if it is longer than a
/// step.
pub fn start(scenario: &'static str, start: u64, end: u64) {
    if end - start <= EVERY_NS {
        return;
    }
    let timer = hrtimer::start(start + EVERY_NS, hrtimer::Action::LabProgress);
    *WINDOW.lock() = Some(Window {
        scenario,
        start,
        end,
        pending: Some(timer),
    });
}

/// Stops reporting (the window is over).
pub fn stop() {
    let window = WINDOW.lock().take();
    if let Some(timer) = window.and_then(|w| w.pending) {
        hrtimer::cancel(timer);
    }
}

/// The timer's action (interrupt context): prints a line and arms the next step.
pub fn report(now: u64) {
    let mut guard = WINDOW.lock();
    let Some(w) = guard.as_mut() else { return };
    let step = (now - w.start) / EVERY_NS;
    let tenths = step * EVERY_NS / 100_000_000;
    println!(
        "{}: progress {}.{} of {} s",
        w.scenario,
        tenths / 10,
        tenths % 10,
        (w.end - w.start).div_ceil(1_000_000_000)
    );
    let next = w.start + (step + 1) * EVERY_NS;
    w.pending = (next < w.end).then(|| hrtimer::start(next, hrtimer::Action::LabProgress));
}
