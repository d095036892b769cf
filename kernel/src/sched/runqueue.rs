//! One CPU's runqueue as the kernel keeps it (Linux's `struct rq`): the policy crate's
//! [`Rq`] — which task runs, which wait and in which order, their scheduling state — and
//! the [`Context`]s of the tasks on it, which the switch loads and saves.
//!
//! A task's context is where the task is: it comes onto a runqueue with the task (spawn,
//! fork, a move's attach) and leaves with it (a move's detach, the reaping of an exited
//! task), so a switch needs its own CPU's runqueue and nothing else — the step that lets
//! each runqueue have a lock of its own. The methods that move a task in or out of the
//! policy crate's `Rq` are redefined here to take or give its context with it, so the two
//! cannot get out of step; everything else is the `Rq`'s, reached through `Deref`.

use super::trace::Trace;
use super::tracing::RECENT_EVENTS;
use crate::task::{Context, Slot};
use alloc::vec::Vec;
use core::ops::{Deref, DerefMut};
use sched::weights::Nice;
use sched::{ForkKind, Moving, Policy, Rq, SchedTask, Uid, Wakeup};

/// The kernel's runqueue of one CPU (see the module's docs).
pub(in crate::sched) struct Runqueue {
    rq: Rq<dyn Policy + Send>,
    /// The contexts of the tasks on this runqueue, by slot.
    contexts: Vec<Option<Context>>,
    /// Its idle task's (whose slot may be one no other task has: `setup::idle_slot_of`).
    idle: Context,
    /// This CPU's last few events, always kept: its flight recorder (`tracing`), what gdb's
    /// `cfslab-trace` shows without `trace=on`.
    pub(in crate::sched) recent: Trace,
}

impl Deref for Runqueue {
    type Target = Rq<dyn Policy + Send>;

    fn deref(&self) -> &Self::Target {
        &self.rq
    }
}

impl DerefMut for Runqueue {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.rq
    }
}

impl Runqueue {
    /// A runqueue around `rq`, its idle task's context `idle`.
    pub(in crate::sched) fn new(rq: Rq<dyn Policy + Send>, idle: Context) -> Runqueue {
        Runqueue {
            rq,
            contexts: Vec::new(),
            idle,
            recent: Trace::new(RECENT_EVENTS, 1),
        }
    }

    /// The context of task `slot`, which is on this runqueue.
    #[inline(always)]
    pub(in crate::sched) fn context(&self, slot: Slot) -> &Context {
        if slot == self.rq.idle() {
            return &self.idle;
        }
        let context = self.contexts.get(slot.index()).and_then(Option::as_ref);
        context.expect("the task's context is on its runqueue")
    }

    /// The context of task `slot`, which is on this runqueue, to change.
    #[inline(always)]
    pub(in crate::sched) fn context_mut(&mut self, slot: Slot) -> &mut Context {
        if slot == self.rq.idle() {
            return &mut self.idle;
        }
        let context = self.contexts.get_mut(slot.index()).and_then(Option::as_mut);
        context.expect("the task's context is on its runqueue")
    }

    /// What a switch from task `prev` to task `next` (two tasks on this runqueue) writes
    /// at once: this CPU's recorder, where the switch's event goes, and both contexts.
    #[inline(always)]
    pub(in crate::sched) fn switch_parts(
        &mut self,
        prev: Slot,
        next: Slot,
    ) -> (&mut Trace, &mut Context, &mut Context) {
        fn on_queue(c: Option<&mut Option<Context>>) -> &mut Context {
            let context = c.and_then(Option::as_mut);
            context.expect("the task's context is on its runqueue")
        }
        let idle = self.rq.idle();
        let (prev, next) = if prev == idle {
            (
                &mut self.idle,
                on_queue(self.contexts.get_mut(next.index())),
            )
        } else if next == idle {
            (
                on_queue(self.contexts.get_mut(prev.index())),
                &mut self.idle,
            )
        } else {
            let [p, n] = self
                .contexts
                .get_disjoint_mut([prev.index(), next.index()])
                .expect("a switch is between two tasks on the runqueue");
            (on_queue(Some(p)), on_queue(Some(n)))
        };
        (&mut self.recent, prev, next)
    }

    /// Task `slot`'s context comes onto this runqueue.
    fn put(&mut self, slot: Slot, context: Context) {
        if self.contexts.len() <= slot.index() {
            self.contexts.resize_with(slot.index() + 1, || None);
        }
        let before = self.contexts[slot].replace(context);
        assert!(before.is_none(), "task {slot} put on a runqueue twice");
    }

    /// Task `slot`'s context leaves this runqueue.
    fn take(&mut self, slot: Slot) -> Context {
        let context = self.contexts.get_mut(slot.index()).and_then(Option::take);
        context.expect("the task's context is on its runqueue")
    }

    /// The boot flow becomes task `slot` ([`Rq::run_boot_task`]).
    pub(in crate::sched) fn run_boot_task(
        &mut self,
        slot: Slot,
        context: Context,
        (uid, nice): (Uid, Nice),
        now: u64,
    ) {
        self.put(slot, context);
        self.rq.run_boot_task(slot, uid, nice, now);
    }

    /// A kernel-started task becomes runnable here ([`Rq::spawn`]).
    pub(in crate::sched) fn spawn(
        &mut self,
        slot: Slot,
        context: Context,
        (uid, nice): (Uid, Nice),
        now: u64,
    ) {
        self.put(slot, context);
        self.rq.spawn(slot, uid, nice, now);
    }

    /// The running task's child starts here ([`Rq::fork`]).
    pub(in crate::sched) fn fork(
        &mut self,
        slot: Slot,
        context: Context,
        kind: ForkKind,
        now: u64,
    ) {
        self.put(slot, context);
        self.rq.fork(slot, kind, now);
    }

    /// Task `slot` leaves this runqueue for another ([`Rq::detach`]), its context with it.
    pub(in crate::sched) fn detach(&mut self, slot: Slot, now: u64) -> (Moving, Context) {
        let moving = self.rq.detach(slot, now);
        (moving, self.take(slot))
    }

    /// Task `slot` joins this runqueue ([`Rq::attach`]), its context with it.
    pub(in crate::sched) fn attach(
        &mut self,
        slot: Slot,
        (moving, context): (Moving, Context),
        wakeup: Wakeup,
        now: u64,
    ) {
        self.put(slot, context);
        self.rq.attach(slot, moving, wakeup, now);
    }

    /// Forgets exited task `slot` ([`Rq::remove`]); returns its last scheduling part and
    /// its context.
    pub(in crate::sched) fn remove(&mut self, slot: Slot) -> (SchedTask, Context) {
        let last = self.rq.remove(slot);
        (last, self.take(slot))
    }
}
