//! A task's children as its parent keeps them: those alive, and the zombies waiting to be
//! reaped (Linux's `children` list of `task_struct`), with what a wait asks for among them
//! (`do_wait`'s pid rules). Plain data, naming nothing of the scheduler: the family tree
//! (`family`) holds it under its own lock.

use super::exit_status::ExitStatus;
use crate::task::TaskId;
use alloc::collections::VecDeque;
use alloc::vec::Vec;

/// Which children a wait is for (`wait4`'s pid): any, one, or those of a process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitTarget {
    Any,
    Child(TaskId),
    Group(u32),
}

impl WaitTarget {
    /// Whether the child `id`, whose process group is `pgid`, is one the wait is for.
    pub(super) fn matches(self, id: TaskId, pgid: Option<u32>) -> bool {
        match self {
            WaitTarget::Any => true,
            WaitTarget::Child(c) => c == id,
            WaitTarget::Group(g) => pgid == Some(g),
        }
    }
}

/// A child that has ended and has not been reaped yet.
#[derive(Debug)]
pub struct Zombie {
    /// Its id.
    pub id: TaskId,
    /// How it ended, if it was a process (a kernel thread leaves none).
    pub status: Option<ExitStatus>,
}

/// A task's children: the live ones, in the order they started, and the ended ones, oldest
/// first. Listed, not just counted, so that what concerns one task's children (re-parenting
/// them, a wait for one of them) costs the number of its children, not of every task.
#[derive(Debug, Default)]
pub struct Children {
    /// Started and not ended.
    pub(super) live: Vec<TaskId>,
    /// Ended and not yet reaped.
    pub(super) zombies: VecDeque<Zombie>,
    /// The task sleeps until something happens to a child.
    pub(super) waiting: bool,
}

impl Children {
    /// Whether no child is left, alive or to reap (a wait would wait for nothing: ECHILD).
    pub(super) fn none(&self) -> bool {
        self.live.is_empty() && self.zombies.is_empty()
    }

    /// Takes the oldest zombie `target` names off the list: it is reaped.
    pub(super) fn reap(&mut self, target: WaitTarget) -> Option<Zombie> {
        let at = self.zombies.iter().position(|z| z.is(target))?;
        self.zombies.remove(at)
    }

    /// The live child `id` has ended as `zombie`.
    pub(super) fn ended(&mut self, zombie: Zombie) {
        self.live.retain(|&c| c != zombie.id);
        self.zombies.push_back(zombie);
    }

    /// `other`'s children become these (orphans adopted, or a process's taken over by the
    /// thread that execs).
    pub(super) fn adopt(&mut self, other: Children) {
        self.live.extend(other.live);
        self.zombies.extend(other.zombies);
    }

    /// Whether a zombie `target` names is there to reap.
    pub(super) fn has_zombie(&self, target: WaitTarget) -> bool {
        self.zombies.iter().any(|z| z.is(target))
    }
}

impl Zombie {
    pub(super) fn is(&self, target: WaitTarget) -> bool {
        target.matches(self.id, self.status.map(|s| s.pgid))
    }
}
