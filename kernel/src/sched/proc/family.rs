//! Parents, children and zombies: the family tree, under a lock of its own — the one place
//! where a task's children are listed, where an ended child waits to be reaped, and where
//! orphans pass to the boot task (Linux's `exit_notify`, `forget_original_parent` and
//! `do_wait`, with the parent links `tasklist_lock` keeps).
//!
//! Every task but the boot and idle tasks and a process's extra threads has a parent, the
//! task that started it. When a child ends, it becomes a [`Zombie`] on its parent's list —
//! with its exit status, if it was a process (`exit` files it just before the
//! end) — and the parent is woken if it waits. A task that ends before its children hands
//! them, zombies included, to the boot task, as Linux's pass to init; the boot task reaps
//! them. The kernel lists children itself, so no child can be missed or counted twice
//! however parent and child are scheduled.
//!
//! The tree has its own lock, `FAMILY`, taken inside the scheduler's (a child's end wakes
//! its parent, and a stop tells it, under the scheduler's lock) and alone by what needs the
//! tree only: `getppid`, a reap. It is released before anyone is woken: a wake-up takes a
//! runqueue's lock, which ranks outside it. Each task's children are listed, so an end re-parents its
//! own children, not a walk over every task.

use super::children::{Children, WaitTarget, Zombie};
use super::exit_status::ExitStatus;
use super::thread_group::ThreadGroup;
use crate::sched::{Scheduler, change_then_reschedule, with_sched};
use crate::sync::{Rank, SpinLock, SpinLockGuard};
use crate::task::TaskId;
use crate::time::clock;
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use sched::{SyncWake, Wakeup};

/// The boot task's id: it adopts the children of tasks that exit before them (Linux's
/// init).
pub const BOOT_TASK: TaskId = TaskId::from_number(0);

/// What the tree keeps of one task: its parent and its children. A task has an entry
/// from its start (if it has a parent) or its first child, to its end.
#[derive(Default)]
struct Links {
    parent: Option<TaskId>,
    children: Children,
}

/// Every task's parent and children, by task id.
pub(in crate::sched) struct FamilyTree {
    links: BTreeMap<TaskId, Links>,
}

static FAMILY: SpinLock<FamilyTree> = SpinLock::new(
    Rank::Family,
    FamilyTree {
        links: BTreeMap::new(),
    },
);

/// The family tree, locked.
pub(in crate::sched) fn family() -> SpinLockGuard<'static, FamilyTree> {
    FAMILY.lock()
}

/// A child's end, as its parent is to hear of it: who the parent is, and whether it waits.
pub(in crate::sched) struct ParentToTell {
    pub parent: TaskId,
    pub parent_waits: bool,
}

impl FamilyTree {
    /// Task `child` has started, a child of `parent`.
    pub(in crate::sched) fn born(&mut self, child: TaskId, parent: TaskId) {
        self.links.entry(child).or_default().parent = Some(parent);
        self.links
            .entry(parent)
            .or_default()
            .children
            .live
            .push(child);
    }

    /// Task `id`'s parent, if it has one.
    pub(in crate::sched) fn parent(&self, id: TaskId) -> Option<TaskId> {
        self.links.get(&id)?.parent
    }

    /// Task `id`'s live children.
    pub(in crate::sched) fn live_children(&self, id: TaskId) -> &[TaskId] {
        self.links.get(&id).map_or(&[], |l| &l.children.live)
    }

    fn children(&mut self, id: TaskId) -> &mut Children {
        &mut self.links.entry(id).or_default().children
    }

    /// Task `id` has ended as `status` (none for a kernel thread): it leaves the tree, a
    /// zombie on its parent's list, and its children pass to the boot task. Its parent, if
    /// it has one, to tell.
    pub(in crate::sched) fn ended(
        &mut self,
        id: TaskId,
        status: Option<ExitStatus>,
    ) -> Option<ParentToTell> {
        let links = self.links.remove(&id)?;
        if !links.children.none() {
            for child in &links.children.live {
                if let Some(l) = self.links.get_mut(child) {
                    l.parent = Some(BOOT_TASK);
                }
            }
            self.children(BOOT_TASK).adopt(links.children);
        }
        let parent = links.parent?;
        let children = self.children(parent);
        children.ended(Zombie { id, status });
        let parent_waits = core::mem::take(&mut children.waiting);
        Some(ParentToTell {
            parent,
            parent_waits,
        })
    }

    /// A thread that execs takes its process over (`takeover`), under the leader's id:
    /// the children it started under its own id `heir` become the process's.
    pub(in crate::sched) fn heir_takes_over(&mut self, heir: TaskId, leader: TaskId) {
        let Some(links) = self.links.remove(&heir) else {
            return;
        };
        debug_assert!(links.parent.is_none(), "a thread is no one's child");
        for child in &links.children.live {
            if let Some(l) = self.links.get_mut(child) {
                l.parent = Some(leader);
            }
        }
        self.children(leader).adopt(links.children);
    }

    /// Whether task `id` waited for a child, forgetting that it did (it is woken).
    pub(in crate::sched) fn take_waiting(&mut self, id: TaskId) -> bool {
        self.links
            .get_mut(&id)
            .is_some_and(|l| core::mem::take(&mut l.children.waiting))
    }

    /// Reaps task `id`'s oldest zombie `target` names, if there is one.
    pub(in crate::sched) fn reap(&mut self, id: TaskId, target: WaitTarget) -> Option<Zombie> {
        self.links.get_mut(&id)?.children.reap(target)
    }

    /// Whether task `id` has a zombie `target` names.
    fn has_zombie(&self, id: TaskId, target: WaitTarget) -> bool {
        self.links
            .get(&id)
            .is_some_and(|l| l.children.has_zombie(target))
    }

    /// Whether task `id` has no child left, alive or to reap.
    fn childless(&self, id: TaskId) -> bool {
        self.links.get(&id).is_none_or(|l| l.children.none())
    }
}

impl Scheduler {
    /// The ending task `id`, whose parent hears of it (woken if it waits, SIGCHLD for a
    /// process), becomes a zombie, and its own children pass to the boot task.
    pub(in crate::sched) fn notify_parent(&mut self, id: TaskId, now: u64) {
        let me = self.current_slot();
        let status = self.task(me).exit_status.take();
        let exit = status.map(|s| s.exit);
        let Some(told) = family().ended(id, status) else {
            return;
        };
        if told.parent_waits {
            // Synchronous, as `__wake_up_parent`: the child is about to go.
            let wakeup = Wakeup {
                sync: SyncWake::WakerExits,
                ..Wakeup::default()
            };
            self.wake(told.parent, wakeup, now);
        }
        // The zombie is there to reap before SIGCHLD comes: a handler that calls `waitpid`
        // finds it.
        if let Some(exit) = exit {
            let uid = self.task(me).uid;
            let pid = crate::task::pid_of(id) as u32;
            super::signal::child_ended(self, told.parent, pid, uid, exit);
        }
    }

    /// The running task's live children that `target` names, with their processes (the
    /// tree, `family`, locked by the caller).
    pub(in crate::sched) fn live_children<'a>(
        &'a self,
        family: &'a FamilyTree,
        target: WaitTarget,
    ) -> impl Iterator<Item = &'a Arc<ThreadGroup>> {
        let me = self.current_id();
        family.live_children(me).iter().filter_map(move |&id| {
            let group = self.group_of_task(id)?;
            (group.leader == id && target.matches(id, Some(group.pgid()))).then_some(group)
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
        let me = s.current_id();
        let now = clock::now();
        let mut tree = family();
        if tree.has_zombie(me, target) {
            return true;
        }
        if tree.childless(me) || s.current_signal_pending() {
            return false;
        }
        if jobs
            && s.live_children(&tree, target)
                .any(|g| g.sighand.has_report())
        {
            return true;
        }
        tree.children(me).waiting = true;
        drop(tree);
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
        s.live_children(&family(), target)
            .find_map(|g| Some((g.leader, g.sighand.take_report(stopped, continued)?)))
    })
}

/// Wakes `parent` if it waits for a child (a child stopped or continued).
pub(in crate::sched) fn wake_waiting_parent(s: &mut Scheduler, parent: TaskId, now: u64) {
    if family().take_waiting(parent) {
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
/// waiting (`wait4` with WNOHANG, or after [`wait_for_child`]): the tree alone.
pub fn reap_child(target: WaitTarget) -> Option<Zombie> {
    family().reap(crate::sched::current(), target)
}

/// Whether the running task has a child `target` names not yet reaped.
pub fn has_child(target: WaitTarget) -> bool {
    let me = crate::sched::current();
    if let WaitTarget::Group(pgid) = target {
        // A child's process group is its process's: the scheduler's to say.
        return with_sched(|s| {
            let tree = family();
            let in_group = |&id: &TaskId| s.group_of_task(id).is_some_and(|g| g.pgid() == pgid);
            tree.live_children(me).iter().any(in_group) || tree.has_zombie(me, target)
        });
    }
    let tree = family();
    let live = tree.live_children(me);
    live.iter().any(|&id| target.matches(id, None)) || tree.has_zombie(me, target)
}

/// The parent of task `id`, if it has one: the tree alone.
pub fn parent_of(id: TaskId) -> Option<TaskId> {
    family().parent(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: usize) -> TaskId {
        TaskId::from_number(n)
    }

    fn tree() -> FamilyTree {
        FamilyTree {
            links: BTreeMap::new(),
        }
    }

    /// A child that ends is its parent's zombie, reaped once; its own children, alive or
    /// ended, pass to the boot task, whose they are from then on; and the tree forgets
    /// every task that ended.
    #[test_case]
    fn an_end_leaves_a_zombie_and_hands_the_children_to_the_boot_task() {
        let (parent, child, grandchild, ended) = (id(1), id(2), id(3), id(4));
        let mut t = tree();
        t.born(parent, BOOT_TASK);
        t.born(child, parent);
        t.born(grandchild, child);
        t.born(ended, child);
        t.ended(ended, None);
        t.children(parent).waiting = true;

        let told = t.ended(child, None).expect("a child has a parent");
        assert!(told.parent == parent && told.parent_waits);
        assert!(!t.take_waiting(parent), "woken once");
        assert_eq!(t.parent(grandchild), Some(BOOT_TASK));
        assert_eq!(t.live_children(BOOT_TASK), &[parent, grandchild]);
        assert!(t.reap(BOOT_TASK, WaitTarget::Child(ended)).is_some());
        assert!(
            t.reap(parent, WaitTarget::Any)
                .is_some_and(|z| z.id == child)
        );
        assert!(t.reap(parent, WaitTarget::Any).is_none());
        assert!(t.childless(parent));

        t.ended(grandchild, None);
        t.ended(parent, None);
        assert!(t.reap(BOOT_TASK, WaitTarget::Any).is_some());
        assert!(t.reap(BOOT_TASK, WaitTarget::Any).is_some());
        assert!(t.childless(BOOT_TASK));
        assert!(
            t.links.keys().eq([BOOT_TASK].iter()),
            "only the boot task is left"
        );
    }

    /// A thread that execs takes its process over: the children it started as a thread
    /// are the process's, under the leader's id.
    #[test_case]
    fn an_heir_brings_its_children_to_the_process() {
        let (leader, heir, its_child, leaders_child) = (id(1), id(2), id(3), id(4));
        let mut t = tree();
        t.born(leader, BOOT_TASK);
        t.born(leaders_child, leader);
        t.born(its_child, heir);
        t.heir_takes_over(heir, leader);
        assert_eq!(t.parent(its_child), Some(leader));
        assert_eq!(t.live_children(leader), &[leaders_child, its_child]);
        assert!(
            t.ended(heir, None).is_none(),
            "the old id has no links left"
        );
    }
}
