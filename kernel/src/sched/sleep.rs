//! Yielding, sleeping and waking: a yield, timed sleeps on hrtimers, parking (sleep until
//! someone names you), and the one wake-up path, which switches at once from task context
//! and at the interrupt's end from an interrupt (the CPU's interrupt depth tells which).
//!
//! A sleep may end early, as in Linux, and every caller checks its condition again: a
//! wake-up that finds the task still running (on several CPUs, another CPU can find it on
//! a wait queue before it has blocked) is kept, and the task's next sleep returns at once
//! (`Task::wake_pending`).

use super::{Scheduler, change_then_reschedule};
use crate::task::{TaskId, TaskRef};
use crate::time::{self, clock, hrtimer};
use sched::{SyncWake, Wakeup};

/// Sleeps until the clock reads `deadline` (rounded up to a tick with `hrtimer=off`), or
/// until a kill wakes the task early: then the timer is cancelled, so that a process killed
/// in a sleep of years leaves no timer behind.
pub fn sleep_until(deadline: u64) {
    loop {
        sleep_until_woken(Some(deadline), 0);
        if clock::now() >= time::sleep_expiry(deadline) || super::current_killed().is_some() {
            return;
        }
    }
}

/// Sleeps until a wake-up names the running task or the clock reads `deadline` (`None`: no
/// deadline), whichever comes first — up to `slack` ns after it if that lets the sleep end
/// with another timer's interrupt (see `time::hrtimer`). The timer is cancelled if the
/// wake-up came first, so it cannot wake a later sleep. The caller has put itself where its
/// wakers will find it (wait queues, for `poll`) with interrupts off, and keeps them off
/// until here.
pub fn sleep_until_woken(deadline: Option<u64>, slack: u64) {
    let timer = change_then_reschedule(|s| {
        if s.take_wake_pending() {
            return None;
        }
        s.block_current(clock::now());
        let me = s.current_id();
        let expiry = deadline.map(time::sleep_expiry);
        expiry.map(|e| hrtimer::start_range(e, slack, hrtimer::Action::Wake(me)))
    });
    if let Some(timer) = timer {
        hrtimer::cancel(timer);
    }
}

/// Puts the running task to sleep until someone wakes it (its waker must know it: a wait
/// queue, a timer).
pub(super) fn sleep_current() {
    change_then_reschedule(|s| {
        if !s.take_wake_pending() {
            s.block_current(clock::now());
        }
    });
}

/// Wakes `tasks` from task context, switching at once if the policy says a wakee should
/// preempt the caller; `sync` says whether the caller is about to sleep (WF_SYNC).
pub(super) fn wake_up_from(tasks: &[TaskRef], sync: SyncWake) {
    change_then_reschedule(|s| {
        let now = clock::now();
        let wakeup = Wakeup {
            sync,
            ..Wakeup::default()
        };
        for &task in tasks {
            s.wake_ref(task, wakeup, now);
        }
    });
}

/// Sleeps until the next tick boundary. What starts then (a lab window, the first program)
/// has the same phase against the tick whatever ran before it — the boot, reading the
/// initramfs, an earlier scenario — so that its figures move only when its own code paths do.
pub fn sleep_until_tick_boundary() {
    sleep_until(clock::now().next_multiple_of(time::tick_ns()));
}

/// Sleeps for `ns` nanoseconds.
pub fn sleep(ns: u64) {
    sleep_until(clock::now().saturating_add(ns));
}

/// Wakes `task` if it sleeps, as of `now` (a timer's expiry is read once for all the timers
/// of an interrupt). From task context the caller may be switched away at once; from an
/// interrupt the switch waits for the interrupt's end.
pub fn wake_up(task: TaskId, now: u64) {
    change_then_reschedule(|s| s.wake(task, Wakeup::default(), now));
}

/// Sleeps until [`unpark`] names the running task — at once if that
/// already happened since the last `park` (the wake-up is remembered, so it cannot be lost).
pub fn park() {
    change_then_reschedule(|s| {
        let me = s.current_slot();
        if core::mem::take(&mut s.task(me).unpark_token) {
            return;
        }
        s.task(me).parked = true;
        s.block_current(clock::now());
    });
}

/// Lets `task` return from [`park`] (now, or at its next `park`), switching if the policy
/// says so (at the interrupt's end, from an interrupt).
pub fn unpark(task: TaskId) {
    change_then_reschedule(|s| s.unpark(task, Wakeup::default(), clock::now()));
}

impl Scheduler {
    /// Whether a wake-up came while the running task ran, forgetting it.
    fn take_wake_pending(&mut self) -> bool {
        let me = self.current_slot();
        core::mem::take(&mut self.task(me).wake_pending)
    }

    fn unpark(&mut self, id: TaskId, wakeup: Wakeup, now: u64) {
        let Some(task) = self.task_by_id(id) else {
            return;
        };
        if core::mem::take(&mut task.parked) {
            self.wake(id, wakeup, now);
        } else {
            task.unpark_token = true;
        }
    }
}

/// Wakes `tasks` from task context, those that sleep (the sleepers a futex wake took off
/// its word, in their order); the caller may be switched away once all are woken, if the
/// policy says a wakee should preempt it (Linux's `wake_up_q` after the bucket's lock).
pub fn wake_tasks(tasks: &[TaskRef]) {
    wake_up_from(tasks, SyncWake::No);
}

/// Gives up the CPU if the policy has someone else to run.
pub fn yield_now() {
    change_then_reschedule(|s| {
        let now = clock::now();
        s.this_rq_mut().yield_current(now);
    });
}
