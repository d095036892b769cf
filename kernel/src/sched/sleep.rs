//! Yielding, sleeping and waking: a yield, timed sleeps on hrtimers, parking (sleep until
//! someone names you), and the one wake-up path, which switches at once from task context
//! and at the interrupt's end from an interrupt (the CPU's interrupt depth tells which).
//!
//! A sleep may end early, as in Linux, and every caller checks its condition again: a
//! wake-up that finds the task still running (on several CPUs, another CPU can find it on
//! a wait queue before it has blocked) is kept, and the task's next sleep returns at once
//! (`Task::wake_pending`).

use super::runqueue::Runqueue;
use super::trace::Kind;
use super::{Scheduler, change_then_reschedule, runqueue, wakelist};
use crate::percpu::this_cpu;
use crate::task::{State, TaskId, TaskRef};
use crate::time::{self, clock, hrtimer};
use core::sync::atomic::Ordering;
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
    let timer = sleep_on_this_rq(|rq| {
        if rq.take_wake_pending() {
            return None;
        }
        rq.block_current(clock::now());
        let me = super::current_ref();
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
    sleep_on_this_rq(|rq| {
        if !rq.take_wake_pending() {
            rq.block_current(clock::now());
        }
    });
}

/// Runs `f` on this CPU's runqueue, which holds the running task, then switches if it asked
/// (under the same lock): a task going to sleep, or yielding, touches its own runqueue and
/// nothing else. A waker, which holds this runqueue's lock too, finds the task either still
/// running (and leaves it a pending wake-up, which `f` takes) or asleep: never half-way.
fn sleep_on_this_rq<R>(f: impl FnOnce(&mut Runqueue) -> R) -> R {
    let mut rq = runqueue::lock_this_cpu();
    let runqueue = rq.as_mut().expect("a runqueue");
    let result = f(runqueue);
    if runqueue.need_resched() {
        let irq_were_on = super::switch::schedule_locked(rq);
        crate::arch::irq::restore(irq_were_on);
    }
    result
}

/// Wakes `tasks` from task context, switching at once if the policy says a wakee should
/// preempt the caller; `sync` says whether the caller is about to sleep (WF_SYNC).
pub(super) fn wake_up_from(tasks: &[TaskRef], sync: SyncWake) {
    let wakeup = Wakeup {
        sync,
        ..Wakeup::default()
    };
    wake_refs(tasks, wakeup, clock::now());
}

/// Wakes `tasks` with `wakeup` as of `now`: each left on its CPU's wake list where the
/// feature `TTWU_QUEUE` says so (`wakelist::queue`), else under its runqueue's lock where
/// it can be ([`wake_on_its_cpu`]: a task allowed one CPU), else where the era places it,
/// under the runqueue locks that touches (`ttwu`), else under the scheduler's lock; then
/// switches at once if the policy says a wakee should preempt the caller and the caller is
/// a task (an interrupt handler's switch waits for the interrupt's end).
fn wake_refs(tasks: &[TaskRef], wakeup: Wakeup, now: u64) {
    let irq_were_on = crate::arch::irq::save_and_disable();
    // A wake-up from an interrupt handler (a timer, the console) has no waker: the running
    // task was only interrupted (ADAPTIVE_GRAN learns from task wake-ups only).
    let wakeup = Wakeup {
        from_interrupt: this_cpu().in_interrupt(),
        ..wakeup
    };
    for &task in tasks {
        if wakelist::queue(task, wakeup)
            || wake_on_its_cpu(task, wakeup, now)
            || super::ttwu::wake_placed(task, wakeup, now)
        {
            continue;
        }
        wake_under_sched(task, wakeup, now);
    }
    if super::resched::asked_here() && !this_cpu().in_interrupt() {
        super::schedule();
    }
    crate::arch::irq::restore(irq_were_on);
}

/// A wake-up under the scheduler's lock and the runqueues' (`with_sched`): the way of a
/// task that moved, or that the ways without it left (`ttwu`'s module docs say which).
/// Kept out of line, so that the wake-up of a task allowed one CPU ([`wake_on_its_cpu`],
/// every wake-up on one CPU) is not laid out around it.
#[inline(never)]
fn wake_under_sched(task: TaskRef, wakeup: Wakeup, now: u64) {
    super::state::with_sched(|s| s.wake_ref(task, wakeup, now));
}

/// A wake-up under the runqueue locks it needs alone (Linux's `try_to_wake_up`, which takes
/// the task's `rq->lock`, not every CPU's): for a task allowed one CPU, found on that CPU's
/// runqueue, where its reference says it was, and not moving. It takes that runqueue's lock
/// and, for another CPU's, this CPU's too (lowest CPU first, `lock_two`), for the waking
/// event goes to this CPU's flight recorder, as Linux's trace event is written on the
/// waker's CPU. True if done (a task not asleep is left as the slow path leaves it). Else
/// the task is allowed several CPUs, and the era's placement chooses (`ttwu`), or it moved.
fn wake_on_its_cpu(task: TaskRef, wakeup: Wakeup, now: u64) -> bool {
    let here = this_cpu().index();
    if task.cpu == here {
        let mut rq = runqueue::lock(here);
        return wake_locked(rq.as_mut().expect("a runqueue"), None, task, wakeup, now);
    }
    // A task allowed several CPUs is placed by the era's rules (`ttwu`): not worth the two
    // locks to find that out.
    if wakelist::allowed_several(task) {
        return false;
    }
    let [mut here_rq, mut rq] = runqueue::lock_two(here, task.cpu);
    match (rq.as_mut(), here_rq.as_mut()) {
        (Some(rq), Some(here_rq)) => wake_locked(rq, Some(here_rq), task, wakeup, now),
        _ => false,
    }
}

/// Finishes the wake-ups other CPUs left this one on its wake list (`TTWU_QUEUE`,
/// `wakelist`; Linux's `sched_ttwu_pending`), from the reschedule IPI's handler: each under
/// this CPU's runqueue lock, taken once for them all, as [`wake_locked`] makes a wake-up
/// whose waker holds that lock; one that no longer fits (the task moved, its affinity
/// changed) under the scheduler's. A wake-up that should preempt asks for a switch, which
/// the interrupt's end makes.
pub fn finish_queued_wakeups() {
    let Some(queued) = wakelist::take_queued() else {
        return;
    };
    let now = clock::now();
    let mut misfits = [None; wakelist::CAPACITY];
    {
        let mut rq = runqueue::lock(this_cpu().index());
        for (q, misfit) in queued.iter().flatten().zip(misfits.iter_mut()) {
            let woken = rq
                .as_mut()
                .is_some_and(|rq| wake_locked(rq, None, q.task, q.wakeup, now));
            if !woken {
                *misfit = Some(*q);
            }
        }
    }
    wake_elsewhere(&misfits, now);
}

/// Wakes `queued` under the scheduler's lock, which finds each task its CPU: wake-ups
/// that no longer fit the list they were left on, or that a dying CPU left (`hotplug`).
pub(super) fn wake_elsewhere(queued: &[Option<wakelist::Queued>], now: u64) {
    for q in queued.iter().flatten() {
        wake_under_sched(q.task, q.wakeup, now);
    }
}

/// [`wake_on_its_cpu`] under its locks: `rq` the runqueue the task was on, `here_rq` this
/// CPU's if it is another. Also the end of a wake-up left on `rq`'s wake list, by its own
/// CPU ([`finish_queued_wakeups`]), which finds out here whether it still fits. That CPU
/// leaves a task it finds running alone, without `wake_pending`: a sleeper goes from
/// joining its wait queue to sleeping with interrupts off (`wait`, `futex`, `poll`), so
/// the IPI that brought the wake-up cannot fall in between — a task running here when it
/// is taken has slept and been woken already, or never slept.
fn wake_locked(
    rq: &mut Runqueue,
    here_rq: Option<&mut Runqueue>,
    task: TaskRef,
    wakeup: Wakeup,
    now: u64,
) -> bool {
    let (here, there) = (this_cpu().index(), rq.cpu());
    let Some(context) = rq.try_context(task.slot) else {
        return false;
    };
    let online = super::state::ONLINE.load(Ordering::Relaxed);
    let allowed_there_only = context.affinity & online == 1 << there;
    if context.id != task.id || !allowed_there_only || context.move_to.is_some() {
        return false;
    }
    match rq.state(task.slot) {
        State::Sleeping => {}
        State::Running if there != here => {
            rq.wake_while_running(task.slot);
            return true;
        }
        _ => return true,
    }
    // The event's flags are those of the CPU writing it: a queued wake-up's are the IPI's.
    let (kind, comm, hardirq) = (
        Kind::Waking,
        rq.context(task.slot).comm,
        this_cpu().in_interrupt(),
    );
    match here_rq {
        Some(here_rq) => here_rq.record_event(now, hardirq, kind, comm, there),
        None => rq.record_event(now, hardirq, kind, comm, there),
    }
    rq.wake_here(task.slot, wakeup, now);
    true
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
pub fn wake_up(task: TaskRef, now: u64) {
    wake_refs(&[task], Wakeup::default(), now);
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
    // This CPU's runqueue alone, and the pick under the same lock: a yield touches nothing
    // else.
    sleep_on_this_rq(|rq| rq.yield_current(clock::now()));
}
