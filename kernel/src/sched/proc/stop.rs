//! Job control's stop and continue (Linux's `do_signal_stop`, `prepare_signal`'s SIGCONT
//! and `do_notify_parent_cldstop`, kernel/signal.c): a stop signal at its default action
//! stops every thread of the process on its way back to ring 3 until SIGCONT, which
//! continues a stopped process whatever its action; the parent hears of both (SIGCHLD with
//! CLD_STOPPED or CLD_CONTINUED, unless it asked for SA_NOCLDSTOP, and `wait4`'s WUNTRACED
//! and WCONTINUED). An orphaned process group's job-control stops are dropped: no one
//! would continue it (see `groups`); SIGSTOP is not.
//!
//! Sending decides that a signal stops or continues (`signal`); this is what follows.

use super::sighand::{CLD_STOPPED, SA_NOCLDSTOP, SIGCHLD, SIGSTOP, SigInfo};
use super::thread_group::ThreadGroup;
use crate::sched::{Scheduler, change_then_reschedule};
use crate::task::TaskId;
use crate::time::clock;
use alloc::sync::Arc;
use alloc::vec::Vec;

impl Scheduler {
    /// Stops the process `group` by `signal` (its default action): each thread stops on
    /// its way back to ring 3 (woken from any sleep to get there), and the parent hears of
    /// it (SIGCHLD with CLD_STOPPED, and `wait4` with WUNTRACED).
    pub(super) fn stop_process(
        &mut self,
        group: &Arc<ThreadGroup>,
        signal: u8,
        threads: &[TaskId],
    ) {
        if group.sighand.stop(signal) {
            self.wake_all(threads);
            self.tell_parent_of_job(group, CLD_STOPPED, signal);
        }
    }

    /// Wakes each of `threads` that sleeps, but a vfork parent.
    pub(super) fn wake_all(&mut self, threads: &[TaskId]) {
        for &t in threads {
            if !self.is_vfork_parent(t) {
                self.wake(t, ::sched::Wakeup::default(), clock::now());
            }
        }
    }

    /// Tells the parent of `group`'s process that it stopped or continued (`code`): it wakes
    /// if it waits, and gets SIGCHLD unless its action says SA_NOCLDSTOP (Linux's
    /// `do_notify_parent_cldstop`).
    pub(super) fn tell_parent_of_job(&mut self, group: &Arc<ThreadGroup>, code: i32, signal: u8) {
        let Some(leader) = self.task_by_id(group.leader) else {
            return;
        };
        let uid = leader.uid;
        let Some(parent) = super::family::family().parent(group.leader) else {
            return;
        };
        super::family::wake_waiting_parent(self, parent, clock::now());
        let no_stop_signal = self
            .task_by_id(parent)
            .and_then(|p| p.group.clone())
            .is_some_and(|g| g.sighand.action(SIGCHLD).flags & SA_NOCLDSTOP != 0);
        if !no_stop_signal {
            let info = SigInfo {
                code,
                pid: crate::task::pid_of(group.leader) as u32,
                uid,
                status: i32::from(signal),
                ..SigInfo::default()
            };
            self.send_signal(parent, SIGCHLD, info);
        }
    }

    /// [`stop_process`](Self::stop_process) for the running thread's process, which took
    /// `signal`. An orphaned group's job control stops are dropped: no one would continue
    /// it (see `groups`); SIGSTOP is not.
    fn stop_current_process(&mut self, signal: u8) {
        let Some(group) = self.current_task().group.clone() else {
            return;
        };
        if signal != SIGSTOP && self.orphaned_pgrp(group.pgid(), None) {
            return;
        }
        let threads: Vec<TaskId> = self.threads_of(&group).map(|t| t.id).collect();
        self.stop_process(&group, signal, &threads);
    }
}

/// Stops the running thread's process by `signal`, a stop signal it had blocked and whose
/// default action it takes now.
pub fn stop_current_process(signal: u8) {
    change_then_reschedule(|s| s.stop_current_process(signal));
}

/// Sleeps while the running thread's process is stopped (on its way back to ring 3), until
/// SIGCONT or SIGKILL wakes it.
pub fn wait_while_stopped() {
    loop {
        let stopped = change_then_reschedule(|s| {
            let now = clock::now();
            let t = s.current_task();
            let stopped =
                t.killed.is_none() && t.group.as_ref().is_some_and(|g| g.sighand.is_stopped());
            if stopped {
                s.block_current(now);
            }
            stopped
        });
        if !stopped {
            return;
        }
    }
}
