//! A task's life as the scheduler sees it: started (`spawn`, or as a child with `spawn_child`,
//! fork or vfork), changing uid, yielding, ending (`exit`), and being waited for (`join`).

use super::{ForkKind, SCHED, State, new_task, schedule, with_sched};
use crate::mm::stack::KernelStack;
use crate::task::TaskId;
use crate::time::clock;
use sched::Wakeup;
use x86_64::instructions::interrupts;

/// Why a task could not be started.
#[derive(Debug)]
pub enum SpawnError {
    /// No memory for its stack.
    OutOfMemory,
}

/// Starts a kernel thread running `entry(argument)` as `uid` at `nice`. It may run at once if
/// the policy says it should preempt the caller.
pub fn spawn(
    entry: fn(u64),
    argument: u64,
    name: &str,
    uid: u32,
    nice: i8,
) -> Result<TaskId, SpawnError> {
    let stack = KernelStack::new().map_err(|_| SpawnError::OutOfMemory)?;
    let task = new_task(name, uid, nice, Some((entry, argument)), Some(stack));
    let (id, preempt) = with_sched(|s| {
        let now = clock::now();
        let id = s.add(task);
        s.task(id).stats.runnable_since = Some(now);
        let preempt = s.policy.spawn(id, uid, nice, now);
        s.need_resched |= preempt;
        (id, s.need_resched)
    });
    if preempt {
        interrupts::without_interrupts(schedule);
    }
    Ok(id)
}

/// Starts a child of the running task, with its uid and nice, running `entry(argument)`
/// (Linux's fork, placed by the policy as a fork). With [`ForkKind::Vfork`] the caller sleeps
/// until the child calls [`exec_done`] or exits, as a vfork parent does.
pub fn spawn_child(
    entry: fn(u64),
    argument: u64,
    name: &str,
    kind: ForkKind,
) -> Result<TaskId, SpawnError> {
    let stack = KernelStack::new().map_err(|_| SpawnError::OutOfMemory)?;
    interrupts::without_interrupts(|| {
        let switch = with_sched(|s| {
            let now = clock::now();
            let parent = s.current;
            let (uid, nice) = (s.task(parent).uid, s.task(parent).nice);
            let id = s.add(new_task(
                name,
                uid,
                nice,
                Some((entry, argument)),
                Some(stack),
            ));
            s.task(id).stats.runnable_since = Some(now);
            s.need_resched |= s.policy.fork(parent, id, kind, now);
            if kind == ForkKind::Vfork {
                s.task(id).vfork_parent = Some(parent);
                s.block_current(now);
                s.need_resched = true;
            }
            (id, s.need_resched)
        });
        if switch.1 {
            schedule();
        }
        Ok(switch.0)
    })
}

/// The running task "execs": a vfork parent waiting for it wakes up.
pub fn exec_done() {
    interrupts::without_interrupts(|| {
        let preempt = with_sched(|s| {
            let me = s.current;
            if let Some(parent) = s.task(me).vfork_parent.take() {
                s.wake(parent, Wakeup { vfork_parent: true }, clock::now());
            }
            s.need_resched
        });
        if preempt {
            schedule();
        }
    });
}

/// Only root may change uids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PermissionDenied;

/// Changes the running task's uid (Linux's setuid, with the scheduler told as
/// `sched_move_task` was: with per-uid groups the task moves to the new uid's group).
pub fn setuid(uid: u32) -> Result<(), PermissionDenied> {
    with_sched(|s| {
        let me = s.current;
        if s.task(me).uid != 0 {
            return Err(PermissionDenied);
        }
        s.task(me).uid = uid;
        s.policy.set_uid(me, uid, clock::now());
        Ok(())
    })
}

/// Gives up the CPU if the policy has someone else to run.
pub fn yield_now() {
    interrupts::without_interrupts(|| {
        let others = SCHED
            .lock()
            .as_mut()
            .expect("scheduler not started")
            .policy
            .yield_now(clock::now());
        if others {
            schedule();
        }
    });
}

/// Ends the running task: waiters wake, and the next task frees its stack.
pub fn exit() -> ! {
    interrupts::disable();
    {
        let mut guard = SCHED.lock();
        let s = guard.as_mut().expect("scheduler not started");
        let now = clock::now();
        let id = s.current;
        s.task(id).state = State::Exited;
        s.policy.exit(id, now);
        for waiter in core::mem::take(&mut s.task(id).waiters) {
            s.wake(waiter, Wakeup::default(), now);
        }
        if let Some(parent) = s.task(id).vfork_parent.take() {
            s.wake(parent, Wakeup { vfork_parent: true }, now);
        }
        s.dead = Some(id);
    }
    schedule();
    unreachable!("an exited task was scheduled again");
}

/// Waits until task `id` has exited (at once if it already has).
pub fn join(id: TaskId) {
    interrupts::without_interrupts(|| {
        let must_wait = with_sched(|s| {
            let me = s.current;
            match s.tasks.get_mut(id).and_then(|t| t.as_mut()) {
                Some(target) if target.state != State::Exited => {
                    target.waiters.push(me);
                    s.block_current(clock::now());
                    true
                }
                _ => false,
            }
        });
        if must_wait {
            schedule();
        }
    });
}
