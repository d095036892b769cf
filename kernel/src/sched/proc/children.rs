//! A task's children as its parent keeps them: how many are alive or unreaped, and the
//! zombies waiting to be reaped (Linux's `children` list of `task_struct`), with what a
//! wait asks for among them (`do_wait`'s pid rules). Plain data, naming nothing of the
//! scheduler, so that a task can hold its children without standing on the code that counts
//! and reaps them (`family`).

use super::exit_status::ExitStatus;
use crate::task::TaskId;
use alloc::collections::VecDeque;

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

/// A task's children: how many are alive or unreaped, and the ended ones, oldest first.
#[derive(Debug, Default)]
pub struct Children {
    /// Started and not yet reaped (alive or zombies).
    pub(super) count: u32,
    /// Ended and not yet reaped.
    pub(super) zombies: VecDeque<Zombie>,
    /// The task sleeps until a child ends.
    pub(super) waiting: bool,
}

impl Children {
    /// Takes the oldest zombie `target` names off the list: it is reaped.
    pub(super) fn reap(&mut self, target: WaitTarget) -> Option<Zombie> {
        let at = self.zombies.iter().position(|z| z.is(target))?;
        let zombie = self.zombies.remove(at)?;
        self.count -= 1;
        Some(zombie)
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
