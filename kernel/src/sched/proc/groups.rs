//! Process groups and sessions as the table of tasks sees them: who is in a group, whether
//! a group exists in a session, and a signal to a whole group (Linux's `kill_pgrp`), each in
//! one pass under the scheduler's lock. What a process's group and session are is its
//! `ThreadGroup`'s; the calls that change them are `user::syscall::job`'s.

use super::sighand::SigInfo;
use crate::sched::{Scheduler, change_then_reschedule, with_sched};
use crate::task::{Task, TaskId};
use alloc::vec::Vec;

impl Scheduler {
    /// The live processes (their leaders) with their group and session.
    fn processes(&self) -> impl Iterator<Item = (&Task, u32, u32)> {
        self.slots.iter().flatten().filter_map(|t| {
            let group = t.group.as_ref()?;
            let leads = group.leader == t.id && self.alive(t.slot);
            leads.then(|| (&**t, group.pgid(), group.sid()))
        })
    }
}

/// The leaders of the processes in process group `pgid`.
pub fn members(pgid: u32) -> Vec<TaskId> {
    with_sched(|s| {
        s.processes()
            .filter(|&(_, g, _)| g == pgid)
            .map(|(t, _, _)| t.id)
            .collect()
    })
}

/// Whether process group `pgid` has a member in session `sid`.
pub fn group_in_session(pgid: u32, sid: u32) -> bool {
    with_sched(|s| s.processes().any(|(_, g, si)| g == pgid && si == sid))
}

/// Whether some process's group is `pgid` (the pid of a would-be session leader).
pub fn group_exists(pgid: u32) -> bool {
    with_sched(|s| s.processes().any(|(_, g, _)| g == pgid))
}

/// Sends `signal` to every process of group `pgid` whose uid is `uid` (any: `None`); how
/// many there were in the group, and how many were sent to.
pub fn signal_group(pgid: u32, uid: Option<u32>, signal: u8, info: SigInfo) -> (usize, usize) {
    change_then_reschedule(|s| {
        let targets: Vec<(TaskId, u32)> = s
            .processes()
            .filter(|&(_, g, _)| g == pgid)
            .map(|(t, _, _)| (t.id, t.uid))
            .collect();
        let mut sent = 0;
        for &(id, owner) in &targets {
            if uid.is_none_or(|u| u == owner) {
                s.send_signal(id, signal, info);
                sent += 1;
            }
        }
        (targets.len(), sent)
    })
}
