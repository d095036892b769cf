//! Process groups and sessions as the table of tasks sees them: who is in a group, whether
//! a group exists in a session, and a signal to a whole group (Linux's `kill_pgrp`), each in
//! one pass under the scheduler's lock. What a process's group and session are is its
//! `ThreadGroup`'s; the calls that change them are `user::syscall::job`'s.
//!
//! An orphaned process group (POSIX's term, Linux's `is_orphaned_pgrp` in kernel/exit.c,
//! 6.1) is one no member's parent could still continue: none has a parent in another group
//! of the same session — a shell's job whose shell is gone. Its stop signals from the
//! terminal or anyone else (SIGTSTP, SIGTTIN, SIGTTOU at their default action; not SIGSTOP)
//! are dropped, as nobody would continue it; and when a process's end orphans a group with
//! a stopped member, the group gets SIGHUP then SIGCONT, so that it does not stay stopped
//! for ever (Linux's `kill_orphaned_pgrp`).

use super::family::family;
use super::sighand::{SI_KERNEL, SIGCONT, SIGHUP, SigInfo};
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

    /// Task `id`'s process group and session (None for a kernel thread).
    fn group_and_session(&self, id: TaskId) -> Option<(u32, u32)> {
        let slot = *self.by_id.get(&id)?;
        let group = self.slots[slot].as_deref()?.group.as_ref()?;
        Some((group.pgid(), group.sid()))
    }

    /// Whether process group `pgid` is orphaned (see the module's docs), not counting
    /// `leaving`, a process that is ending, as a member or as a parent.
    pub(in crate::sched) fn orphaned_pgrp(&self, pgid: u32, leaving: Option<TaskId>) -> bool {
        let tree = family();
        !self
            .processes()
            .filter(|&(t, g, _)| g == pgid && Some(t.id) != leaving)
            .any(|(t, _, sid)| {
                tree.parent(t.id)
                    .filter(|&p| Some(p) != leaving)
                    .and_then(|p| self.group_and_session(p))
                    .is_some_and(|(g, s)| g != pgid && s == sid)
            })
    }

    /// Process `id` (its leader's id), of group `pgid` in session `sid`, is ending: each
    /// group its end orphans — its own, if its parent was what kept it, and its children's
    /// in its session — gets SIGHUP then SIGCONT if a member is stopped (see the module's
    /// docs).
    pub(in crate::sched) fn hang_up_orphaned_groups(&mut self, id: TaskId, pgid: u32, sid: u32) {
        let tree = family();
        // Its children's groups in its session (its live children: those the tree lists).
        let mut groups: Vec<u32> = (tree.live_children(id).iter())
            .filter_map(|&c| self.group_and_session(c))
            .filter(|&(g, si)| g != pgid && si == sid)
            .map(|(g, _)| g)
            .collect();
        // Its own, if its parent kept it.
        let kept = (tree.parent(id).and_then(|p| self.group_and_session(p)))
            .is_some_and(|(g, si)| si == sid && g != pgid);
        drop(tree);
        if kept {
            groups.push(pgid);
        }
        groups.sort_unstable();
        groups.dedup();
        let info = SigInfo {
            code: SI_KERNEL,
            ..SigInfo::default()
        };
        for g in groups {
            let members: Vec<(TaskId, bool)> = self
                .processes()
                .filter(|&(t, pg, _)| pg == g && t.id != id)
                .map(|(t, _, _)| {
                    (
                        t.id,
                        t.group.as_ref().is_some_and(|x| x.sighand.is_stopped()),
                    )
                })
                .collect();
            if !members.iter().any(|&(_, stopped)| stopped) || !self.orphaned_pgrp(g, Some(id)) {
                continue;
            }
            for signal in [SIGHUP, SIGCONT] {
                for &(member, _) in &members {
                    self.send_signal(member, signal, info);
                }
            }
        }
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

/// Whether process group `pgid` is orphaned (see the module's docs).
pub fn is_orphaned(pgid: u32) -> bool {
    with_sched(|s| s.orphaned_pgrp(pgid, None))
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
