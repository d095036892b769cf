//! A task's move from one CPU's runqueue to another's (Linux's `move_queued_task`, and the
//! `set_task_cpu` and `activate_task` of a wake-up that changes CPU): the task leaves with
//! its context, its CPU number is changed, it joins the other runqueue, and that CPU is
//! kicked if the task should preempt what it runs there — traced as `sched_migrate_task`
//! on the mover's CPU, as Linux writes the event where `set_task_cpu` runs.
//!
//! The one way a task changes runqueue, whoever moves it: a waker holding only the
//! runqueues its placement touches (`ttwu`), a newly-idle pass holding the two it pulls
//! between (`balance::Lent`), or the holder of the whole scheduler
//! (`Scheduler::move_between`: the tick's balancing, a change of affinity, the slow
//! wake-up).

use super::runqueue::{Focused, Locked, Runqueue, Runqueues};
use super::trace::Kind;
use crate::percpu::this_cpu;
use crate::task::Slot;
use sched::Wakeup;

/// Runqueues a mover holds, reached by CPU: the mover's own and the two a move touches.
pub(in crate::sched) trait HeldRunqueues {
    /// CPU `cpu`'s runqueue, which the mover holds.
    fn held(&mut self, cpu: usize) -> &mut Runqueue;
}

impl HeldRunqueues for Runqueues {
    fn held(&mut self, cpu: usize) -> &mut Runqueue {
        &mut self[cpu]
    }
}

impl HeldRunqueues for Focused {
    fn held(&mut self, cpu: usize) -> &mut Runqueue {
        &mut self[cpu]
    }
}

impl HeldRunqueues for Locked {
    fn held(&mut self, cpu: usize) -> &mut Runqueue {
        self.rq(cpu)
    }
}

/// Moves task `slot`, waiting or woken, from CPU `from`'s runqueue to CPU `to`'s, and
/// attaches it there with `wakeup` (see the module's docs). A move to a CPU its affinity
/// allows settles any move it was marked for — say a pull took it while its stopper was on
/// the way (the stopper then finds it gone): left marked, a running task would never be
/// pushed again (`push_to` skips a marked task).
pub(in crate::sched) fn move_task(
    rqs: &mut impl HeldRunqueues,
    slot: Slot,
    (from, to): (usize, usize),
    wakeup: Wakeup,
    now: u64,
) {
    // Every mover has checked, under the runqueues' locks, that `to` is online: a task
    // left on an offline CPU's runqueue would never run again.
    let online = super::state::ONLINE.load(core::sync::atomic::Ordering::Relaxed);
    debug_assert!(
        online & 1 << to != 0,
        "task {slot} moved to offline CPU {to}"
    );
    let moved = rqs.held(from).detach(slot, now);
    moved.1.cpu.set(to);
    if to != from {
        let (here, hardirq) = (this_cpu().index(), this_cpu().in_interrupt());
        let kind = Kind::Migrate {
            orig_cpu: from as u16,
        };
        let comm = moved.1.comm;
        rqs.held(here).record_event(now, hardirq, kind, comm, to);
    }
    let rq = rqs.held(to);
    let asked_before = rq.need_resched();
    rq.attach(slot, moved, wakeup, now);
    rq.kick_if_asked(asked_before);
    let context = rq.context_mut(slot);
    if context.affinity & 1 << to != 0 {
        context.move_to = None;
    }
}
