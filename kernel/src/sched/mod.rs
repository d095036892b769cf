//! The scheduler glue: the tasks, each CPU's runqueue that schedules them (`sched::rq::Rq`,
//! from the policy crate), `schedule()`, the wake-up path and the tick. It never decides who
//! runs, and never calls the policy itself: it tells a runqueue what happened, and the
//! runqueue asks the policy, in Linux's order (docs/scheduler.md §13).
//!
//! Locking and interrupts (docs/architecture.md, "Locks and interrupts"). Each CPU's runqueue
//! has an IRQ-safe lock of its own (`runqueue`; interrupts off while it is held: a timer
//! interrupt arriving while a task held it would otherwise spin forever in the handler),
//! which the switch, the tick's charge, a sleep and a yield take alone; a wake-up takes its
//! task's and the waker's, and the chosen CPU's to move the task (`sleep`, `ttwu`). The
//! rest of the state — the task table, the balancer — is behind `SCHED`, and `with_sched`
//! takes it and then the runqueues' locks, lowest CPU first, as far as it needs
//! (`runqueue::Runqueues`);
//! `with_tasks` takes the table alone. Operations that may wake or start a task go
//! through `change_then_reschedule`, which switches after the change — at once in task
//! context, at the interrupt's end in a handler. `schedule()` asserts its rules in every
//! build and releases its runqueue's lock *before* switching stacks: the next task may be
//! anywhere, including in its own `schedule()` about to return, and must be able to take
//! it. Preemption from an interrupt happens after its `irq_exit` (`trap.rs`): the handler
//! calls `schedule()` on the interrupted task's stack; the task resumes there later and
//! returns from the interrupt as if nothing happened.
//!
//! This file only says what the scheduler offers (its modules and what they export): the
//! state and its lock are `state`'s, the tick's entry `tick`'s, the switch and the
//! reschedule `switch`'s — so that no part of the scheduler depends on the whole of it.

pub mod affinity;
pub mod balance;
mod credentials;
mod current;
mod debugger;
pub mod futex;
pub mod hotplug;
pub mod knobs;
pub mod loadavg;
mod moving;
mod observe;
pub mod proc;
pub mod procview;
mod resched;
mod runqueue;
pub mod setup;
mod sleep;
mod state;
mod stopper;
mod switch;
mod table;
mod tick;
pub mod trace;
mod tracing;
mod ttwu;
pub use tracing::RECENT_EVENTS;
mod wait;
pub mod waitqueue;
mod wakelist;
mod wakeup;

pub use credentials::{PermissionDenied, processes_of, set_task_nice, setuid, task_nice};
pub use current::{
    current, current_address_space, current_files, current_killed, current_process, current_ref,
    kills_pending, with_current_address_space,
};
pub use observe::{
    TRACE_EVENTS, current_cpu_ns, current_if_unlocked, idle_cpu_ns, idle_ns_by_cpu,
    print_sched_debug, print_trace, switch_count, task_stats, trace_start, trace_stop, with_policy,
};
pub use proc::children::{WaitTarget, Zombie};
pub(in crate::sched) use proc::create::new_task;
pub use proc::create::{MAX_PROCESSES, SpawnError};
pub use proc::family::{
    BOOT_TASK, has_child, parent_of, reap_child, set_exit_status, take_job_report, wait_child,
    wait_for_child,
};
pub use proc::lifecycle::{exec_done, exit, join, join_unless, release_files, spawn, spawn_child};
pub use proc::process::{
    Clone, current_name, current_uid, fork_process, kill_task, rename_current, replace_program,
    robust_list_of, set_robust_list, spawn_process, task_uid, unshare_files,
};
pub use proc::signal::signal_pending;
pub use proc::takeover::{hand_over_process, wait_to_lead};
pub use proc::threads::{
    blocked_signals, blocks, current_group, current_thread_times, group_of, live_threads_times,
    set_blocked_signals, set_clear_child_tid, set_waiting_for, suspend_mask, take_exit_addresses,
    threads_in, threads_of_task, with_thread_signals,
};
pub use setup::{TasksAlive, init, set_policy};
pub use sleep::{
    finish_queued_wakeups, park, sleep, sleep_until, sleep_until_tick_boundary, sleep_until_woken,
    unpark, wake_tasks, wake_up, yield_now,
};
pub(in crate::sched) use sleep::{sleep_current, wake_up_from};
pub use switch::preempt_from_interrupt;
pub use switch::wait_for_exited_stacks;
pub(in crate::sched) use switch::{change_then_reschedule, schedule};
pub use tick::tick;
pub use waitqueue::WaitQueue;

pub(in crate::sched) use crate::task::Slot;
pub use sched::ForkKind;
pub(in crate::sched) use state::{SCHED, Scheduler, with_current_context, with_sched, with_tasks};
