//! The policy's name for a task ([`TaskId`]), and the tables indexed by it. Its own module,
//! beside the interface ([`crate::policy`], which re-exports it), to keep that one short.

use alloc::vec::Vec;
use core::fmt;

/// A task, as the kernel numbers it: the kernel's slot. Ids are small and dense (policies
/// index tables by them), and the kernel may reuse a task's id once the task has exited
/// ([`Policy::exit`](crate::policy::Policy::exit)). A type of its own, so that it is never
/// taken for a CPU's number or for the kernel's id of a task, which is unique for the boot.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct TaskId(usize);

impl TaskId {
    /// The task at `index` in the kernel's table.
    pub const fn new(index: usize) -> Self {
        TaskId(index)
    }

    /// Its index in the tables (the kernel's and the policy's).
    pub const fn index(self) -> usize {
        self.0
    }
}

/// The number, as the simulator, the traces and the debug layouts print it.
impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// The bare number too, as when the id was a `usize`: what prints a task with `{:?}` (a
/// policy's call log, `Some(3)` for a pick, a report's fields) reads as it did.
impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

/// Tables indexed by task (vectors, and slices of them) read `table[id]`, without an
/// `.index()` at every use.
impl<T> core::ops::Index<TaskId> for Vec<T> {
    type Output = T;

    fn index(&self, id: TaskId) -> &T {
        &self[id.0]
    }
}

impl<T> core::ops::IndexMut<TaskId> for Vec<T> {
    fn index_mut(&mut self, id: TaskId) -> &mut T {
        &mut self[id.0]
    }
}

impl<T> core::ops::Index<TaskId> for [T] {
    type Output = T;

    fn index(&self, id: TaskId) -> &T {
        &self[id.0]
    }
}

impl<T> core::ops::IndexMut<TaskId> for [T] {
    fn index_mut(&mut self, id: TaskId) -> &mut T {
        &mut self[id.0]
    }
}

/// The tests' short name for task `n`: they name many tasks by number.
#[cfg(test)]
pub(crate) const fn t(n: usize) -> TaskId {
    TaskId(n)
}
