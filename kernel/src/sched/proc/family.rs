//! Parents, children and zombies: the one place where a task's children are counted, where
//! an ended child waits to be reaped, and where orphans pass to the boot task (Linux's
//! `exit_notify`, `forget_original_parent` and `do_wait`).
//!
//! Every task but the boot and idle tasks and a process's extra threads has a parent, the
//! task that started it. When a child ends, it becomes a [`Zombie`] on its parent's list —
//! with its exit status, if it was a process (`exit` files it just before the
//! end) — and the parent is woken if it waits. A task that ends before its children hands
//! them, zombies included, to the boot task, as Linux's pass to init; the boot task reaps
//! them. The kernel counts children itself, so no child can be missed or counted twice
//! however parent and child are scheduled.

use super::children::{WaitTarget, Zombie};
use super::exit_status::ExitStatus;
use super::lifecycle::BOOT_TASK;
use crate::sched::{Scheduler, change_then_reschedule, with_sched};
use crate::task::{Slot, TaskId};
use crate::time::clock;
use sched::{SyncWake, Wakeup};

impl Scheduler {
    /// A new child of the running task.
    pub(in crate::sched) fn count_child(&mut self) {
        let me = self.current_slot();
        self.task(me).children.count += 1;
    }

    /// The running task's children — count and zombies — pass to the task in `to`: when it
    /// ends first (to the boot task), or when an exec'ing thread takes its process over.
    pub(in crate::sched) fn pass_children(&mut self, from: Slot, to: Slot) {
        let moved = core::mem::take(&mut self.task(from).children);
        let heir = &mut self.task(to).children;
        heir.count += moved.count;
        heir.zombies.extend(moved.zombies);
    }

    /// The ending task `id` becomes a zombie on its parent's list (which wakes the parent
    /// if it waits), and its own children pass to the boot task.
    pub(in crate::sched) fn notify_parent(&mut self, id: TaskId, parent: Option<TaskId>, now: u64) {
        let me = self.current_slot();
        let status = self.task(me).exit_status.take();
        if self.task(me).children.count > 0 {
            for t in self.slots.iter_mut().flatten() {
                if t.parent == Some(id) {
                    t.parent = Some(BOOT_TASK);
                }
            }
            if let Some(&boot) = self.by_id.get(&BOOT_TASK) {
                self.pass_children(me, boot);
            }
        }
        let Some(parent) = parent.and_then(|p| self.task_by_id(p)) else {
            return;
        };
        let exit = status.map(|s| s.exit);
        parent.children.zombies.push_back(Zombie { id, status });
        let parent_id = parent.id;
        if core::mem::take(&mut parent.children.waiting) {
            // Synchronous, as `__wake_up_parent`: the child is about to go.
            let wakeup = Wakeup {
                sync: SyncWake::WakerExits,
                ..Wakeup::default()
            };
            self.wake(parent_id, wakeup, now);
        }
        // The zombie is there to reap before SIGCHLD comes: a handler that calls `waitpid`
        // finds it.
        if let Some(exit) = exit {
            let uid = self.task(me).uid;
            let pid = crate::task::pid_of(id) as u32;
            super::signal::child_ended(self, parent_id, pid, uid, exit);
        }
    }

    /// Reaps the running task's oldest zombie `target` names, if there is one.
    pub(in crate::sched) fn reap(&mut self, target: WaitTarget) -> Option<Zombie> {
        let me = self.current_slot();
        self.task(me).children.reap(target)
    }

    /// The running task's live children that `target` names, with their processes.
    pub(in crate::sched) fn live_children(
        &self,
        target: WaitTarget,
    ) -> impl Iterator<Item = &alloc::sync::Arc<super::thread_group::ThreadGroup>> {
        let me = self.current_id();
        self.slots.iter().flatten().filter_map(move |t| {
            let group = t.group.as_ref()?;
            let mine = t.parent == Some(me) && self.alive(t.slot) && group.leader == t.id;
            (mine && target.matches(t.id, Some(group.pgid()))).then_some(group)
        })
    }
}

/// Files how the running process ended, for its parent's `wait4`: it goes with the zombie.
pub fn set_exit_status(status: ExitStatus) {
    with_sched(|s| s.current_task().exit_status = Some(status));
}

/// Sleeps until something happens to the running task's children that `target` names —
/// one ends, or (`jobs`) one stops or continues — unless a zombie or (`jobs`) a job report
/// is there already; false at once if it has no children left, or when a signal is to be
/// taken (its sender woke it). The caller looks again either way.
pub fn wait_for_child(target: WaitTarget, jobs: bool) -> bool {
    change_then_reschedule(|s| {
        let me = s.current_slot();
        let now = clock::now();
        let t = s.task(me);
        if t.children.has_zombie(target) {
            return true;
        }
        let childless = t.children.count == 0;
        if childless || s.current_signal_pending() {
            return false;
        }
        if jobs && s.live_children(target).any(|g| g.sighand.has_report()) {
            return true;
        }
        s.task(me).children.waiting = true;
        s.block_current(now);
        true
    })
}

/// A stopped or continued child's news for `wait4` (WUNTRACED, WCONTINUED): the child and
/// what happened, taken so that it is reported once.
pub fn take_job_report(
    target: WaitTarget,
    stopped: bool,
    continued: bool,
) -> Option<(TaskId, super::sighand::JobReport)> {
    with_sched(|s| {
        s.live_children(target)
            .find_map(|g| Some((g.leader, g.sighand.take_report(stopped, continued)?)))
    })
}

/// Wakes the running task's parent if it waits for a child (a child stopped or continued).
pub(in crate::sched) fn wake_waiting_parent(s: &mut Scheduler, parent: TaskId, now: u64) {
    if let Some(p) = s.task_by_id(parent)
        && core::mem::take(&mut p.children.waiting)
    {
        s.wake(parent, Wakeup::default(), now);
    }
}

/// Reaps one ended child of the running task, waiting for one to end if none has yet;
/// `None` once the task has no children left (Linux's `wait()` and ECHILD).
pub fn wait_child() -> Option<Zombie> {
    loop {
        if let Some(zombie) = reap_child(WaitTarget::Any) {
            return Some(zombie);
        }
        if !wait_for_child(WaitTarget::Any, false) {
            return None;
        }
    }
}

/// Reaps the running task's oldest ended child `target` names, if there is one, without
/// waiting (`wait4` with WNOHANG, or after [`wait_for_child`]).
pub fn reap_child(target: WaitTarget) -> Option<Zombie> {
    with_sched(|s| s.reap(target))
}

/// Whether the running task has a child `target` names not yet reaped.
pub fn has_child(target: WaitTarget) -> bool {
    with_sched(|s| {
        let me = s.current_id();
        let alive = s.slots.iter().flatten().any(|t| {
            let pgid = t.group.as_ref().map(|g| g.pgid());
            t.parent == Some(me) && target.matches(t.id, pgid)
        });
        alive
            || s.task_by_id(me)
                .is_some_and(|p| p.children.has_zombie(target))
    })
}

/// The parent of task `id`, if it has one.
pub fn parent_of(id: TaskId) -> Option<TaskId> {
    with_sched(|s| s.task_by_id(id)?.parent)
}
