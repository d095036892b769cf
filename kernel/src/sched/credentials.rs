//! Who a task is and how nice it is, as the scheduler must hear of every change: a new uid
//! moves the task to that uid's group (2.6.24's `sched_move_task` under FAIR_USER_SCHED),
//! a new nice level changes its weight (`set_user_nice`). The permission rules of the system
//! calls that change them live with the calls (`user::syscall::priority`); here is only the
//! mechanism, and the one rule the lab's kernel threads need too: only root changes uid.

use super::with_sched;
use crate::task::TaskId;
use crate::time::clock;
use alloc::vec::Vec;

/// Only root may take another uid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PermissionDenied;

/// Changes the running task's uid (Linux's `setuid`: root may take any uid; anyone may
/// "change" to the uid they have). With per-uid groups the task moves to the new uid's group.
pub fn setuid(uid: u32) -> Result<(), PermissionDenied> {
    with_sched(|s| {
        let me = s.current_slot();
        match s.task(me).uid {
            0 => {
                s.task(me).uid = uid;
                s.context_mut(me).uid = uid;
                s.this_rq_mut().set_uid(me, uid, clock::now());
                Ok(())
            }
            same if same == uid => Ok(()),
            _ => Err(PermissionDenied),
        }
    })
}

/// The nice level of task `id`, if it is alive.
pub fn task_nice(id: TaskId) -> Option<i8> {
    with_sched(|s| Some(s.live_task_by_id(id)?.nice))
}

/// Gives task `id` nice level `nice` (already within -20..=19) and tells the policy, which
/// reweighs it; false if the task has exited.
pub fn set_task_nice(id: TaskId, nice: i8) -> bool {
    with_sched(|s| {
        let Some(t) = s.live_task_by_id(id) else {
            return false;
        };
        let slot = t.slot;
        s.set_nice_level(slot, nice);
        s.task_rq_mut(slot).set_nice(slot, nice, clock::now());
        true
    })
}

/// The live user processes (not kernel threads) whose uid is `uid` (any uid: `None`).
pub fn processes_of(uid: Option<u32>) -> Vec<TaskId> {
    with_sched(|s| {
        s.slots
            .iter()
            .flatten()
            .filter(|t| s.is_live_process(t) && uid.is_none_or(|u| t.uid == u))
            .map(|t| t.id)
            .collect()
    })
}
