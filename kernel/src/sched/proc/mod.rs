//! The process model, in one place: how a task is made, what a user task shares with its
//! process, how threads and processes end, and who reaps them (Linux's `kernel/fork.c`,
//! `kernel/exit.c` and the thread-group parts of `kernel/signal.c`).
//!
//! A task is its scheduling part (state and statistics, the runqueue's: `sched::rq`) plus
//! what it runs with: for a user task, its address space and open files (shared with the
//! tasks `clone` made to share them) and its [`ThreadGroup`](thread_group::ThreadGroup) —
//! the process, to everyone else. These are `Arc`s in the task (`task::Task`), as Linux's
//! `task_struct` points at its `mm`, `files` and `signal`.
//!
//! - [`create`]: the one path every new task takes (kernel thread, user process, fork,
//!   vfork, thread), and the process limit;
//! - [`process`]: a user task's start, `execve`'s change of program, kills;
//! - [`lifecycle`]: the kernel-thread wrappers, a task's own end (`exit`, which releases
//!   its files and address space in its own context) and `join`;
//! - [`exit`]: how a process ends (`exit`, `exit_group`, a fatal signal); [`exit_status`],
//!   what the end reports (how, and the CPU time used);
//! - [`family`]: parents, children, the one zombie list and the one re-parenting;
//!   [`children`], what a parent holds of its children;
//! - [`groups`]: process groups and sessions across the table (a signal to a group);
//! - [`sighand`], [`sigpending`], [`signal`], [`deliver`]: a process's signal actions and
//!   the signals pending for it and for each of its threads, sending one (its default
//!   action, ignored, pending for a handler), and taking one on the way back to ring 3 (a
//!   fault's at once); [`stop`], job control's stop and continue; [`alarm`], ITIMER_REAL;
//! - [`thread_group`], [`threads`], [`thread_ends`], [`takeover`]: threads — what they
//!   share, which tasks they are, how they end together, and `execve` from a thread.
//!
//! It is a part of `sched` because it works on the scheduler's table of tasks, under its
//! lock; it never touches the runqueue but through `Rq`'s protocol. The family tree
//! (parents, children, zombies) has a lock of its own (`family`).

pub mod alarm;
pub mod children;
pub mod create;
pub mod deliver;
pub mod exit;
pub mod exit_status;
pub mod family;
pub mod groups;
pub mod lifecycle;
pub mod process;
pub mod sighand;
pub mod signal;
pub mod sigpending;
pub mod stop;
pub mod takeover;
pub mod thread_ends;
pub mod thread_group;
pub mod threads;
