//! gdb's way into the runqueues: its helpers read them with every CPU stopped, where taking
//! a lock could wait for ever, so while an [`Inspecting`] lives the lenders' checks let a
//! runqueue be reached without its lock (`locks`).

use core::sync::atomic::{AtomicBool, Ordering};

/// gdb reads the runqueues with the machine stopped, holding no lock ([`Inspecting`]).
static INSPECTING: AtomicBool = AtomicBool::new(false);

/// While this lives, the runqueues may be read without their locks: only for gdb's helpers,
/// called with every CPU stopped (`debugger`), where taking a lock could wait for ever. (A
/// guard, not a function taking a closure: gdb's Rust parser takes a function that holds a
/// closure for a namespace, and then cannot call it.)
pub(in crate::sched) struct Inspecting(());

impl Inspecting {
    pub(in crate::sched) fn start() -> Inspecting {
        INSPECTING.store(true, Ordering::Relaxed);
        Inspecting(())
    }
}

impl Drop for Inspecting {
    fn drop(&mut self) {
        INSPECTING.store(false, Ordering::Relaxed);
    }
}

/// Whether gdb is looking (see [`Inspecting`]).
#[inline(always)]
pub(super) fn inspecting() -> bool {
    INSPECTING.load(Ordering::Relaxed)
}
