//! Tasks: what the kernel keeps of each thread of execution — a kernel thread, or a thread
//! of a user process in ring 3: an id, a name, a uid and a nice level, a kernel stack with
//! a guard page, a saved stack pointer while it is not running, and for a process its
//! address space, files and thread group. Its parent and children are the family tree's
//! (`sched::proc::family`). Its scheduling part (state and
//! statistics) is the runqueue's (`sched::rq`); which task runs when is the scheduler's
//! business ([`crate::sched`]).
//!
//! Two numbers name a task. Its [`TaskId`] is unique for the whole boot, as a Linux pid is
//! until the counter wraps: a `join` or a wake-up aimed at a task that has exited can never
//! reach a newer one, and a trace never shows two threads under one id. Its *slot* is small
//! and dense and is reused after exit: the scheduling policies index their tables by it.

mod context;
mod cpu;
mod id;

pub use context::Context;
pub use cpu::TaskCpu;
pub use id::{Slot, TaskId, TaskRef, id_of_pid, pid_of};

use crate::mm::stack::KernelStack;
use alloc::string::String;
use alloc::vec::Vec;

impl Task {
    /// Whether the task holds nothing but its kernel stack (and plain data): what an exited
    /// task must be when the next task frees it (its context is checked apart:
    /// [`Context::holds_nothing`]).
    pub fn holds_only_its_stack(&self) -> bool {
        self.group.is_none() && self.fork_frame.is_none()
    }

    /// How trace events show the task, made from its id, name and nice (`idle`: as an idle
    /// task, `swapper/N`). Kept in its context, and made again when one of the three changes
    /// (`sched`'s `Scheduler::refresh_comm`).
    pub(crate) fn comm(&self, idle: bool) -> crate::sched::trace::Comm {
        crate::sched::trace::Comm::new(self.id, &self.name, self.nice, idle)
    }
}

/// Where a task is in its life, and what happened to it: the scheduling part of a task,
/// kept by the runqueue (`sched::rq`), which alone changes it.
pub use sched::{State, TaskStats};

/// A task: a kernel thread, or a thread of a user process.
pub struct Task {
    pub id: TaskId,
    pub(crate) slot: Slot,
    /// The CPU whose runqueue holds the task (Linux's `task_cpu()`): `/proc/PID/stat`'s
    /// processor field. Shared with its context ([`TaskCpu`]).
    pub cpu: TaskCpu,
    /// Changed only by the scheduler, which keeps the context's `comm` in step.
    pub name: String,
    pub uid: u32,
    /// Changed only by the scheduler, which keeps the context's `comm` in step.
    pub nice: i8,
    /// When it was created (ns of the monotonic clock): `/proc/PID/stat`'s starttime.
    pub started_at: u64,
    /// The task's code and its argument.
    pub(crate) entry: Option<(fn(u64), u64)>,
    /// Owned so that it is freed with the task; `None` for the boot task, which runs on the
    /// bootloader's stack.
    pub(crate) _stack: Option<KernelStack>,
    /// Where a new process enters ring 3: (entry, stack pointer).
    pub(crate) user_start: Option<(u64, u64)>,
    /// A forked process's first return to ring 3: its parent's registers, rax = 0.
    pub(crate) fork_frame: Option<alloc::boxed::Box<crate::arch::user_mode::TrapFrame>>,
    /// The process a user task is a thread of (`None` for a kernel thread).
    pub(crate) group: Option<alloc::sync::Arc<crate::sched::proc::thread_group::ThreadGroup>>,
    /// The head of this thread's robust futex list (`set_robust_list`; 0: none): the
    /// locks it holds are marked FUTEX_OWNER_DIED when it ends.
    pub(crate) robust_list: u64,
    /// Where this thread's tid is cleared, and a futex waiter woken, when it ends
    /// (CLONE_CHILD_CLEARTID, `set_tid_address`): how `pthread_join` learns of it. 0: nowhere.
    pub(crate) clear_child_tid: u64,
    /// Where a new thread's tid is written before its first instruction in ring 3
    /// (CLONE_PARENT_SETTID, CLONE_CHILD_SETTID); 0: nowhere.
    pub(crate) set_tid: [u64; 2],
    /// Signals this thread blocks (`rt_sigprocmask`).
    pub(crate) blocked_signals: u64,
    /// Blocked signals this thread waits for all the same (`rt_sigtimedwait`): their
    /// arrival wakes it.
    pub(crate) waiting_for: u64,
    /// The mask to restore once a handler has run, while `rt_sigsuspend` has replaced it
    /// (Linux's `saved_sigmask`).
    pub(crate) saved_mask: Option<u64>,
    /// Where this thread's handlers run with `SA_ONSTACK` (`sigaltstack`).
    pub(crate) altstack: crate::user::signal::altstack::AltStack,
    /// A signal that kills the process at its next step in the kernel (SIGKILL, ...).
    pub(crate) killed: Option<u8>,
    /// Tasks waiting for this one to exit.
    pub(crate) waiters: Vec<TaskId>,
    /// The vfork parent sleeping until this task execs or exits.
    pub(crate) vfork_parent: Option<TaskId>,
    /// How it ended, once a process has filed it (`sched::proc::exit`): its zombie carries it.
    pub(crate) exit_status: Option<crate::sched::proc::exit_status::ExitStatus>,
    /// Sleeping in `sched::park`.
    pub(crate) parked: bool,
    /// An `unpark` came while the task was not parked: its next `park` returns at once.
    pub(crate) unpark_token: bool,
}
