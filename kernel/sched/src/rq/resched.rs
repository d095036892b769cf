//! `need_resched` (Linux's TIF_NEED_RESCHED): the one flag that says the running task should
//! give its CPU up at the next opportunity.
//!
//! The runqueue alone sets and clears it, under whatever serialises the runqueue (the
//! kernel's runqueue lock, the simulator's loop). Others read it without that lock through
//! a [`ReschedFlag`], as Linux's interrupt return and idle loop test the thread flag without
//! taking `rq->lock`: the kernel's return from an interrupt and its idle loop look at it
//! on every pass, and a lock round trip there would be paid on every interrupt.

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, Ordering};

/// A handle on one runqueue's `need_resched`: clones share the flag.
#[derive(Debug, Clone, Default)]
pub struct ReschedFlag(Arc<AtomicBool>);

impl ReschedFlag {
    /// Whether a reschedule is asked. Acquire: a CPU that sees the flag set, then takes the
    /// runqueue's lock, finds whatever the setter changed before setting it.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// Asks for a reschedule (only the runqueue does).
    pub(super) fn set(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// The pick has happened (only the runqueue does, as it picks).
    pub(super) fn clear(&self) {
        self.0.store(false, Ordering::Relaxed);
    }
}
