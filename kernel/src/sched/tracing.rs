//! Where scheduling events go (see `trace` for what an event is): each CPU's flight recorder,
//! a small ring in its runqueue, always; the trace, one ring for the machine, while tracing
//! (`trace=on`, the lab's windows); and the console as well with `log=trace`.
//!
//! Per-CPU recorders, as Linux's ftrace keeps a buffer per CPU: a switch records into its
//! own CPU's, under its own runqueue's lock, and takes no other lock unless tracing is on.
//! gdb's `cfslab-trace` merges them by time ([`write_recent`]).

use super::trace::{self, Event, Trace};
use crate::sync::{Rank, SpinLock};
use core::fmt;
use core::sync::atomic::{AtomicBool, Ordering};

/// Events each CPU's recorder keeps, tracing or not, for gdb's `cfslab-trace`.
pub const RECENT_EVENTS: usize = 256;

/// Where events go beyond the recorders.
struct Tracing {
    /// The trace, while tracing.
    trace: Option<Trace>,
    /// `log=trace`: every event goes to the console too, as it happens.
    echo: bool,
}

static TRACING: SpinLock<Tracing> = SpinLock::new(
    Rank::Trace,
    Tracing {
        trace: None,
        echo: false,
    },
);

/// Whether events go beyond the recorders (a trace is on, or `log=trace`): read without
/// the lock on every event, so that a run without tracing takes no lock for it.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// An event just written to a CPU's recorder goes on: into the trace while tracing, and at
/// once to the console with `log=trace` (every decision as it is taken, at the cost of
/// slowing the run).
#[inline(always)]
pub(super) fn publish(event: &Event) {
    if ACTIVE.load(Ordering::Relaxed) {
        publish_beyond(event);
    }
}

#[cold]
fn publish_beyond(event: &Event) {
    let mut tracing = TRACING.lock();
    let Tracing { trace, echo } = &mut *tracing;
    trace::publish(event, trace, *echo);
}

/// Every event goes to the console too (`log=trace`), from now on.
pub(super) fn echo_events() {
    TRACING.lock().echo = true;
    ACTIVE.store(true, Ordering::Relaxed);
}

/// Installs `trace` (or none), returning the one it replaces.
pub(super) fn replace_trace(trace: Option<Trace>) -> Option<Trace> {
    let mut tracing = TRACING.lock();
    let old = core::mem::replace(&mut tracing.trace, trace);
    ACTIVE.store(tracing.trace.is_some() || tracing.echo, Ordering::Relaxed);
    old
}

/// Writes the last `n` events of the trace, if tracing: `None` if not.
pub(super) fn write_traced(n: usize, out: &mut dyn fmt::Write) -> Option<fmt::Result> {
    // gdb calls this with the machine stopped: a CPU may hold the lock, and a try cannot
    // wait for it. Then the recorders are shown instead.
    let tracing = TRACING.try_lock()?;
    Some(tracing.trace.as_ref()?.write_last(n, out))
}

/// Writes the last `n` events of the recorders `rings` (by CPU, `None` for a CPU without
/// one), merged by time, as one trace of `cpus` CPUs: what `cfslab-trace N` shows without a
/// trace. Allocates nothing (gdb calls it with the machine stopped, perhaps with the heap's
/// lock held).
pub(super) fn write_recent(
    rings: &[Option<&Trace>],
    n: usize,
    cpus: usize,
    out: &mut dyn fmt::Write,
) -> fmt::Result {
    let rings = || {
        rings
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i, (*r)?)))
    };
    let held: usize = rings().map(|(_, r)| r.len()).sum();
    let written = rings().map(|(_, r)| r.written()).sum();
    trace::write_header(out, held, written, cpus)?;
    // How many of each ring's events are out, oldest first; the oldest of the next ones
    // goes next.
    let mut taken = [0usize; bootopts::MAX_CPUS as usize];
    for left in (0..held).rev() {
        let (oldest, ring) = rings()
            .filter(|&(i, r)| taken[i] < r.len())
            .min_by_key(|&(i, r)| r.oldest(taken[i]).at)
            .expect("an event is left");
        let event = ring.oldest(taken[oldest]);
        taken[oldest] += 1;
        if left < n {
            trace::write_event(out, event)?;
        }
    }
    Ok(())
}
