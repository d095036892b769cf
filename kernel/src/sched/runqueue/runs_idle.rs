//! CPU by CPU, whether it runs its idle task, as its switch last said under its runqueue's
//! lock: what a wake-up's search for an idle CPU reads of the CPUs it passes over, without
//! their locks (Linux's `idle_cpu` reads `rq->curr` with none; `ttwu`).

use core::sync::atomic::{AtomicBool, Ordering};

static RUNS_IDLE: [AtomicBool; bootopts::MAX_CPUS as usize] =
    [const { AtomicBool::new(false) }; bootopts::MAX_CPUS as usize];

/// Whether CPU `cpu` runs its idle task, as its switch last said.
pub(in crate::sched) fn runs_idle(cpu: usize) -> bool {
    RUNS_IDLE[cpu].load(Ordering::Relaxed)
}

/// CPU `cpu` now runs its idle task (`idle`) or another: its runqueue, made or switching,
/// under its lock.
#[inline(always)]
pub(super) fn say(cpu: usize, idle: bool) {
    RUNS_IDLE[cpu].store(idle, Ordering::Relaxed);
}
