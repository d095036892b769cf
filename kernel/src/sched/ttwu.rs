//! The wake-up of a task allowed several CPUs, under the runqueue locks it touches alone
//! (Linux's `try_to_wake_up`, from 2.6.24's to 6.6's, which takes the task's `pi_lock` and
//! the runqueue it wakes on, never every CPU's).
//!
//! The era's placement (`select_task_rq`) reads the machine in looks, each under one
//! runqueue lock: the wakee, with its CPU's load figures, under its CPU's; the waker, with
//! its own CPU's, under its own; then any other CPU's figures as the placement reaches them,
//! under that CPU's lock alone — and whether a CPU is idle, all a search for an idle CPU
//! asks of most, from what its switch last said, with no lock ([`Machine`]; Linux reads
//! all of these with no lock at all, and decides on figures that may have moved since). Then the
//! runqueues of the waker, the wakee's CPU and the chosen CPU are taken together, lowest
//! CPU first, and the wakee is looked at again: still asleep where it was, with nothing
//! about it changed — its affinity, a move marked for it, its CPUs online. It wakes there,
//! or it moves and wakes (Linux's `set_task_cpu` and `ttwu_do_activate`), with the events
//! a trace shows of it (`sched_waking`, `sched_migrate_task`) written on the waker's CPU.
//!
//! What does not fit is left to the scheduler's lock (`Scheduler::wake`), which reads the
//! machine whole: a task that moved since its waker took its reference, or has a move
//! marked, or is still leaving its CPU; a CPU gone offline; no balancer; and a wake-up
//! whose second look finds things changed — as Linux's `try_to_wake_up` goes back to its
//! start when `ttwu_runnable` or the task's state says so.

use super::runqueue::{self, Runqueue};
use super::state::ONLINE;
use super::trace::Kind;
use crate::percpu::this_cpu;
use crate::task::{State, TaskRef};
use crate::time::clock;
use ::sched::smp::cpuset::CpuSet;
use ::sched::smp::domains::Rules;
use ::sched::smp::runqueues::{
    CpuFigures, Machine, ReadCpu, SyncWaker, Wakee, Waker, choose_wake_cpu,
};
use ::sched::smp::shares::SharesSplit;
use ::sched::{Policy, Rq, SyncWake, Wakeup};
use core::sync::atomic::Ordering;

/// Wakes `task`, allowed several CPUs, as of `now`, where the era places it (see the
/// module's docs). True if done — woken, found awake, or left a pending wake-up as it was
/// about to sleep; false if the wake-up is the scheduler's lock's to make.
pub(super) fn wake_placed(task: TaskRef, wakeup: Wakeup, now: u64) -> bool {
    let (wakee, placing) = match look_at_wakee(task) {
        Look::Done => return true,
        Look::Elsewhere => return false,
        Look::Asleep { wakee, placing } => (wakee, placing),
    };
    // A task still leaving its CPU wakes there, as Linux's `try_to_wake_up` keeps a
    // `task_running` one, and so does one whose online CPUs are its own alone: no
    // placement, and no other CPU's lock.
    let target = match placing {
        None => wakee.prev,
        Some(_) if !wakee.has_choice() => wakee.prev,
        Some(Placing { rules, split, prev }) => {
            let Some((waker, here)) = look_at_waker(wakeup, &wakee, rules, split) else {
                return false;
            };
            // The other CPUs are read as the era's placement reaches them: any that has a
            // runqueue, online or not (the wakee's domains, read a moment ago, may name
            // one that has just gone).
            let mut machine = Machine::new(runqueue::made(), &EachUnderItsLock);
            machine.knows(wakee.prev, prev);
            machine.knows(waker.cpu, here);
            choose_wake_cpu(&wakee, &waker, &machine, rules)
        }
    };
    wake_on(task, wakee.prev, target, wakeup, now)
}

/// What the first look at the wakee found.
enum Look {
    /// Nothing more to do: it was awake (perhaps about to sleep: it keeps the wake-up).
    Done,
    /// It is not where its reference says, or not as this path takes it.
    Elsewhere,
    /// It sleeps: what its placement reads of it, and what it is placed by (`None`: still
    /// leaving its CPU, it wakes there).
    Asleep {
        wakee: Wakee,
        placing: Option<Placing>,
    },
}

/// What a wakee's placement starts from: the era's rules and shares split, and the figures
/// of its CPU, read with it.
struct Placing {
    rules: Rules,
    split: SharesSplit,
    prev: CpuFigures,
}

/// The first look, under the lock of the wakee's CPU alone.
fn look_at_wakee(task: TaskRef) -> Look {
    let mut guard = runqueue::lock(task.cpu);
    let Some(rq) = guard.as_mut() else {
        return Look::Elsewhere;
    };
    let Some(context) = rq.try_context(task.slot) else {
        return Look::Elsewhere;
    };
    let online = ONLINE.load(Ordering::Relaxed);
    if context.id != task.id || context.move_to.is_some() || online & 1 << task.cpu == 0 {
        return Look::Elsewhere;
    }
    let (uid, leaving) = (context.uid, context.on_cpu.load(Ordering::Acquire));
    let allowed = CpuSet::from_bits(context.affinity & online);
    match rq.state(task.slot) {
        State::Sleeping => {}
        // It runs on another CPU, perhaps about to sleep (`Runqueue::wake_while_running`);
        // on this one it is the task this wake-up interrupted, or its own waker.
        State::Running if task.cpu != this_cpu().index() => {
            rq.wake_while_running(task.slot);
            return Look::Done;
        }
        _ => return Look::Done,
    }
    let Some(b) = rq.balance.as_ref() else {
        return Look::Elsewhere;
    };
    let policy_rq: &Rq<dyn Policy + Send> = rq;
    // Its cache-hotness is judged at this moment, under its CPU's lock, as the
    // scheduler's lock's way reads the clock under that lock (`Runqueues::now`).
    let wakee = Wakee::read(policy_rq, &b.state, task.slot, (allowed, uid), clock::now());
    let placing = (!leaving).then(|| Placing {
        rules: b.rules,
        split: b.split,
        prev: CpuFigures::read(policy_rq, &b.state, b.split),
    });
    Look::Asleep { wakee, placing }
}

/// The waker's side, under this CPU's lock alone: a synchronous waker (one about to sleep
/// or exit) is the task running here, from task context; and this CPU's figures (`None`:
/// no balancer here).
fn look_at_waker(
    wakeup: Wakeup,
    wakee: &Wakee,
    rules: Rules,
    split: SharesSplit,
) -> Option<(Waker, CpuFigures)> {
    let guard = runqueue::lock(this_cpu().index());
    let rq = guard.as_ref()?;
    let b = rq.balance.as_ref()?;
    let waker = rq.current();
    let sync_waker = (wakeup.sync != SyncWake::No && !wakeup.from_interrupt && waker != rq.idle())
        .then(|| rq.policy().task_info(waker))
        .flatten()
        .map(|info| SyncWaker {
            weight: info.weight,
            uid: rq.context(waker).uid,
            exiting: wakeup.sync == SyncWake::WakerExits,
        });
    let policy_rq: &Rq<dyn Policy + Send> = rq;
    let figures = CpuFigures::read(policy_rq, &b.state, split);
    let waker = Waker::read(policy_rq, &b.state, (rules, split), sync_waker, wakee);
    Some((waker, figures))
}

/// The other CPUs as a wake-up's placement reads them: each one's figures under its lock
/// alone, and whether it is idle from what its switch last said, with no lock
/// (`runqueue::runs_idle`).
struct EachUnderItsLock;

impl ReadCpu for EachUnderItsLock {
    fn figures(&self, cpu: usize) -> CpuFigures {
        let guard = runqueue::lock(cpu);
        let Some((rq, b)) = guard
            .as_ref()
            .and_then(|rq| Some((rq, rq.balance.as_ref()?)))
        else {
            return CpuFigures::absent();
        };
        let policy_rq: &Rq<dyn Policy + Send> = rq;
        CpuFigures::read(policy_rq, &b.state, b.split)
    }

    fn idle(&self, cpu: usize) -> bool {
        runqueue::runs_idle(cpu)
    }
}

/// The second look and the wake-up itself, under the runqueue locks of this CPU, of the
/// task's (`prev`) and of the one it wakes on (`to`); false if the task changed meanwhile.
fn wake_on(task: TaskRef, prev: usize, to: usize, wakeup: Wakeup, now: u64) -> bool {
    let here = this_cpu().index();
    let mut locked = runqueue::lock_three([here, prev, to]);
    let online = ONLINE.load(Ordering::Relaxed);
    let still = |rq: &Runqueue| {
        rq.try_context(task.slot).is_some_and(|c| {
            c.id == task.id
                && c.move_to.is_none()
                && c.affinity & online & 1 << to != 0
                && (to == prev || !c.on_cpu.load(Ordering::Acquire))
        }) && rq.state(task.slot) == State::Sleeping
    };
    if online & 1 << prev == 0 || !still(locked.rq(prev)) {
        return false;
    }
    let comm = locked.rq(prev).context(task.slot).comm;
    let hardirq = this_cpu().in_interrupt();
    locked
        .rq(here)
        .record_event(now, hardirq, Kind::Waking, comm, prev);
    if to == prev {
        locked.rq(prev).wake_here(task.slot, wakeup, now);
        return true;
    }
    locked.rq(to).woken_onto();
    super::moving::move_task(&mut locked, task.slot, (prev, to), wakeup, now);
    true
}
