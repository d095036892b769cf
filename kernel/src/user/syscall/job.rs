//! Process groups and sessions (Linux's kernel/sys.c): `setpgid`, `getpgid`, `getpgrp`,
//! `setsid`, `getsid`. A shell with job control puts each job in a process group of its
//! own, and the terminal's foreground group (`user::tty`) is the one its keys signal.
//!
//! Every process starts in its parent's group and session; the first program leads its
//! own of each, with the console as its controlling terminal.

use super::errno;
use crate::sched;
use crate::sched::proc::groups;
use crate::sched::proc::thread_group::ThreadGroup;
use crate::task::{TaskId, id_of_pid, pid_of};
use alloc::sync::Arc;

/// The process whose pid is `pid` (0: the caller's), as its leader and group.
fn process(pid: i64) -> Option<(TaskId, Arc<ThreadGroup>)> {
    let id = if pid == 0 {
        sched::current_process()
    } else {
        id_of_pid(pid)?
    };
    let group = sched::group_of(id)?;
    (group.leader == id).then_some((id, group))
}

/// `getpgid(pid)`: ESRCH if there is no such process.
pub fn getpgid(pid: i64) -> i64 {
    process(pid).map_or(-errno::ESRCH, |(_, g)| i64::from(g.pgid()))
}

/// `getsid(pid)`: ESRCH if there is no such process.
pub fn getsid(pid: i64) -> i64 {
    process(pid).map_or(-errno::ESRCH, |(_, g)| i64::from(g.sid()))
}

/// `setpgid(pid, pgid)`: moves the caller or one of its children (pid 0: the caller) into
/// process group `pgid` (0: a new one, numbered by its pid), as Linux's rules allow: ESRCH
/// for a process that is neither; EPERM for a session leader, a child in another session,
/// or a group that does not exist in the caller's session; EINVAL for a negative group.
pub fn setpgid(pid: i64, pgid: i64) -> i64 {
    if pgid < 0 {
        return -errno::EINVAL;
    }
    let me = sched::current_process();
    let Some((target, group)) = process(pid) else {
        return -errno::ESRCH;
    };
    if target != me && sched::parent_of(target) != Some(me) {
        return -errno::ESRCH;
    }
    let target_pid = pid_of(target) as u32;
    let my_sid = sched::current_group().map_or(0, |g| g.sid());
    if group.sid() == target_pid || group.sid() != my_sid {
        return -errno::EPERM;
    }
    let pgid = if pgid == 0 { target_pid } else { pgid as u32 };
    if pgid != target_pid && !groups::group_in_session(pgid, my_sid) {
        return -errno::EPERM;
    }
    group.set_pgid(pgid);
    0
}

/// `setsid()`: the caller leads a new session and a new process group, both numbered by its
/// pid, with no controlling terminal; EPERM if it already leads a process group.
pub fn setsid() -> i64 {
    let me = sched::current_process();
    let pid = pid_of(me) as u32;
    if groups::group_exists(pid) {
        return -errno::EPERM;
    }
    let group = sched::current_group().expect("a process");
    group.lead_session(pid);
    i64::from(pid)
}
