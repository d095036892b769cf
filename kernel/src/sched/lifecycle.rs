//! A task's life as the scheduler sees it: started (`spawn`, or as a child with `spawn_child`,
//! fork or vfork), yielding, ending (`exit`), and being waited for (`join`, or
//! by its parent with `wait_child`, Linux's `wait()`).
//!
//! Every task has a parent, the task that started it (the boot task for orphans), which
//! reaps it with [`wait_child`]: the kernel counts a parent's children itself, so no child
//! can be missed or counted twice however the two are scheduled (issue 8, defect 5).

use super::{
    ForkKind, Scheduler, change_then_reschedule, new_task, schedule, switch, trace, with_sched,
};
use crate::mm::stack::KernelStack;
use crate::task::TaskId;
use crate::time::clock;
use sched::Wakeup;
use x86_64::instructions::interrupts;

/// How a vfork parent is woken when its child execs or exits.
const VFORK_PARENT: Wakeup = Wakeup {
    vfork_parent: true,
    from_interrupt: false,
};

/// The boot task's id: it adopts the children of tasks that exit before them.
pub const BOOT_TASK: TaskId = 0;

/// How many user processes (and threads) may be alive at once: a fork bomb meets EAGAIN
/// here, as Linux's meets RLIMIT_NPROC and threads-max, long before memory runs out
/// (each costs at least a 64 KiB kernel stack and its page tables).
pub const MAX_PROCESSES: usize = 256;

/// Why a task could not be started.
#[derive(Debug)]
pub enum SpawnError {
    /// No memory for its stack.
    OutOfMemory,
    /// [`MAX_PROCESSES`] user processes are alive already (fork gives EAGAIN).
    TooManyProcesses,
}

/// Starts a kernel thread running `entry(argument)` as `uid` at `nice`, a child of the
/// running task. It may run at once if the policy says it should preempt the caller; it can
/// read its own id with [`super::current`] from its first instruction.
pub fn spawn(
    entry: fn(u64),
    argument: u64,
    name: &str,
    uid: u32,
    nice: i8,
) -> Result<TaskId, SpawnError> {
    let stack = KernelStack::new().map_err(|_| SpawnError::OutOfMemory)?;
    Ok(change_then_reschedule(|s| {
        let now = clock::now();
        let me = Some(s.current_id());
        let task = new_task(name, uid, nice, Some((entry, argument)), Some(stack), me);
        let (id, slot) = s.start(task, now);
        s.rq.spawn(slot, uid, nice, now);
        s.record_new(slot, now);
        id
    }))
}

impl Scheduler {
    /// Adds `task` (made by `new_task`), not yet known to the runqueue (the caller's
    /// `rq.spawn` or `rq.fork` makes it runnable): its id and slot. A task with a parent (always the running task) counts among its children,
    /// whom `wait` reaps; one without — a thread — ends by itself.
    pub(super) fn start(
        &mut self,
        task: crate::task::Task,
        now: u64,
    ) -> (TaskId, crate::task::Slot) {
        let child = task.parent.is_some();
        debug_assert!(task.parent.is_none_or(|p| p == self.current_id()));
        let (id, slot) = self.add(task);
        let started = self.task(slot);
        started.started_at = now;
        if child {
            let current = self.current_slot();
            self.task(current).children += 1;
        }
        (id, slot)
    }

    /// Traces a new child as Linux 6.1 does: `sched_process_fork` in the parent, then
    /// `sched_wakeup_new` once the policy has queued it.
    pub(super) fn record_new(&mut self, slot: crate::task::Slot, now: u64) {
        let parent = self.current_slot();
        self.record(now, parent, false, |s| trace::Kind::Fork {
            child: s.comm(slot),
        });
        self.record(now, parent, false, |s| trace::Kind::WakeupNew {
            task: s.comm(slot),
        });
    }
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
    Ok(change_then_reschedule(|s| {
        let now = clock::now();
        let (parent_slot, parent) = (s.current_slot(), s.current_id());
        let (uid, nice) = (s.task(parent_slot).uid, s.task(parent_slot).nice);
        let me = Some(s.current_id());
        let task = new_task(name, uid, nice, Some((entry, argument)), Some(stack), me);
        let (id, slot) = s.start(task, now);
        s.rq.fork(slot, kind, now);
        s.record_new(slot, now);
        if kind == ForkKind::Vfork {
            s.task(slot).vfork_parent = Some(parent);
            s.block_current(now);
        }
        id
    }))
}

/// The running task "execs": a vfork parent waiting for it wakes up.
pub fn exec_done() {
    change_then_reschedule(|s| {
        let me = s.current_slot();
        if let Some(parent) = s.task(me).vfork_parent.take() {
            s.wake(parent, VFORK_PARENT, clock::now());
        }
    });
}

/// Gives up the CPU if the policy has someone else to run.
pub fn yield_now() {
    change_then_reschedule(|s| {
        let now = clock::now();
        s.rq.yield_current(now);
    });
}

impl Scheduler {
    /// Tells the parent of the exiting task `id` that it exited, and hands the task's own
    /// children to the boot task.
    fn notify_parent(&mut self, id: TaskId, parent: Option<TaskId>, now: u64) {
        let orphans = {
            let me = self.current_slot();
            let t = self.task(me);
            (
                core::mem::take(&mut t.children),
                core::mem::take(&mut t.exited_children),
            )
        };
        if orphans.0 > 0 {
            for slot in 0..self.slots.len() {
                if let Some(t) = self.slots[slot].as_mut()
                    && t.parent == Some(id)
                {
                    t.parent = Some(BOOT_TASK);
                }
            }
            if let Some(boot) = self.task_by_id(BOOT_TASK) {
                boot.children += orphans.0;
                boot.exited_children.extend(orphans.1);
            }
        }
        let Some(parent) = parent.and_then(|p| self.task_by_id(p)) else {
            return;
        };
        parent.exited_children.push_back(id);
        if core::mem::take(&mut parent.waiting_for_child) {
            let parent_id = parent.id;
            self.wake(parent_id, Wakeup::default(), now);
        }
    }
}

/// Ends the running task: its parent and any `join` waiters wake, and the next task frees
/// its stack.
pub fn exit() -> ! {
    interrupts::disable();
    with_sched(|s| {
        let now = clock::now();
        let slot = s.current_slot();
        let id = s.current_id();
        s.record(now, slot, false, |_| trace::Kind::Exit);
        if s.task(slot).address_space.is_some() {
            super::process::process_ended();
        }
        if s.task(slot).killed.is_some() {
            super::current::killed_task_exited();
        }
        s.rq.exit_current(now);
        for waiter in core::mem::take(&mut s.task(slot).waiters) {
            s.wake(waiter, Wakeup::default(), now);
        }
        if let Some(parent) = s.task(slot).vfork_parent.take() {
            s.wake(parent, VFORK_PARENT, now);
        }
        let parent = s.task(slot).parent;
        s.notify_parent(id, parent, now);
        switch::leave_for_reaping(slot);
    });
    schedule();
    unreachable!("an exited task was scheduled again");
}

/// Waits until task `id` has exited (at once if it already has). Ids are never reused, so
/// an old id cannot make this wait for a newer task.
pub fn join(id: TaskId) {
    join_unless(id, || false);
}

/// [`join`], but gives up as soon as `stop()` holds — asked under the scheduler's lock right
/// before each sleep, so a task that makes it hold and then wakes this one cannot be missed.
/// True if task `id` exited.
pub fn join_unless(id: TaskId, stop: impl Fn() -> bool) -> bool {
    loop {
        let waiting = change_then_reschedule(|s| {
            let me = s.current_id();
            let now = clock::now();
            match s.live_task_by_id(id) {
                _ if stop() => None,
                Some(target) => {
                    target.waiters.push(me);
                    s.block_current(now);
                    Some(true)
                }
                None => Some(false),
            }
        });
        match waiting {
            None => return false,
            Some(true) => continue,
            Some(false) => break,
        }
    }
    // A parent joining its child has reaped it (as pthread_join does).
    with_sched(|s| {
        let me = s.current_slot();
        s.task(me).reap(Some(id));
    });
    true
}

impl crate::task::Task {
    /// Reaps an exited child — `id`, or the oldest if `None` — and returns its id; `None` if
    /// there is no such exited child yet.
    fn reap(&mut self, id: Option<TaskId>) -> Option<TaskId> {
        let at = match id {
            Some(id) => self.exited_children.iter().position(|&c| c == id)?,
            None => 0,
        };
        let child = self.exited_children.remove(at)?;
        self.children -= 1;
        Some(child)
    }
}

/// Reaps one exited child of the running task: its id, waiting for one to exit if none has
/// yet; `None` once the task has no children left (Linux's `wait()` and ECHILD).
pub fn wait_child() -> Option<TaskId> {
    loop {
        let reaped = change_then_reschedule(|s| {
            let me = s.current_slot();
            let now = clock::now();
            let t = s.task(me);
            if let Some(child) = t.reap(None) {
                return Some(Some(child));
            }
            // No child to wait for, or killed while waiting (the killer woke us): give up.
            if t.children == 0 || t.killed.is_some() {
                return Some(None);
            }
            t.waiting_for_child = true;
            s.block_current(now);
            None
        });
        if let Some(reaped) = reaped {
            return reaped;
        }
    }
}

/// Reaps the exited child `id` of the running task, if it has one by that id: `wait4` found
/// its exit status and the child is now forgotten here too. False if there was none.
pub fn reap_child(id: TaskId) -> bool {
    with_sched(|s| {
        let me = s.current_slot();
        s.task(me).reap(Some(id)).is_some()
    })
}

/// Reaps one exited child if there is one, without waiting (`waitpid` with WNOHANG).
pub fn try_wait_child() -> Option<TaskId> {
    with_sched(|s| {
        let me = s.current_slot();
        s.task(me).reap(None)
    })
}
