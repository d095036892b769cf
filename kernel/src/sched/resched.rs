//! Each CPU's `need_resched` where the scheduler's lock is not held: the return from an
//! interrupt ([`super::preempt_from_interrupt`]), the idle loops and `schedule()`'s own
//! loop read it on every pass, as Linux tests the thread flag without `rq->lock`. Each CPU's
//! runqueue sets and clears its flag (`sched::ReschedFlag`, under the lock); this keeps a
//! handle on it per CPU, published as the runqueue is made (runqueues live as long as the
//! kernel).

use crate::percpu::this_cpu;
use sched::ReschedFlag;
use spin::Once;

/// CPU by CPU, the handle on its runqueue's flag (unset until its runqueue exists).
static FLAGS: [Once<ReschedFlag>; bootopts::MAX_CPUS as usize] =
    [const { Once::new() }; bootopts::MAX_CPUS as usize];

/// CPU `cpu`'s runqueue exists, with `flag` as its `need_resched`.
pub(super) fn publish(cpu: usize, flag: ReschedFlag) {
    FLAGS[cpu].call_once(|| flag);
}

/// Whether this CPU's runqueue asks its running task to give the CPU up (false before the
/// scheduler has started, or while this CPU has no runqueue).
pub(super) fn asked_here() -> bool {
    FLAGS[this_cpu().index()]
        .get()
        .is_some_and(ReschedFlag::is_set)
}
