//! Credentials and priorities with Linux's permission rules (kernel/sys.c): `setuid`,
//! `getpriority` and `setpriority`. These are what make the uid concept real for the seeds:
//! seed 000's script forks as root and each child calls `setuid`, which moves it to its
//! uid's group (2.6.24's FAIR_USER_SCHED).
//!
//! The rules, as `set_one_prio` and `can_nice` apply them (cfslab has no capabilities and no
//! RLIMIT_NICE: root is uid 0, and everyone else has neither):
//! - a process whose uid is not the caller's may not be reniced (EPERM) unless by root;
//! - lowering a nice value (raising priority) needs root (EACCES);
//! - nice values are clamped to -20..=19.
//!
//! `which` names the targets: PRIO_PROCESS a process, PRIO_PGRP the processes of a process
//! group, PRIO_USER those of a uid; `who` 0 is the caller's own.

use super::errno;
use crate::sched;
use crate::sched::proc::groups;
use crate::task::{TaskId, id_of_pid};
use alloc::vec;
use alloc::vec::Vec;

const PRIO_PROCESS: u64 = 0;
const PRIO_PGRP: u64 = 1;
const PRIO_USER: u64 = 2;

/// `setuid(uid)`: root takes any uid (and moves to its group); anyone else only their own.
pub fn setuid(uid: u64) -> i64 {
    // Linux's uid_t is 32 bits; -1 ("no change") is not a uid setuid accepts.
    let Ok(uid) = u32::try_from(uid) else {
        return -errno::EINVAL;
    };
    if uid == u32::MAX {
        return -errno::EINVAL;
    }
    match sched::setuid(uid) {
        Ok(()) => 0,
        Err(sched::PermissionDenied) => -errno::EPERM,
    }
}

/// The processes `which`/`who` name (`who` 0: the caller, or the caller's uid).
fn targets(which: u64, who: u64) -> Result<Vec<TaskId>, i64> {
    let me = sched::current();
    let who = who as u32 as i64; // id_t is 32 bits
    match which {
        PRIO_PROCESS if who == 0 => Ok(vec![me]),
        PRIO_PROCESS => Ok(id_of_pid(who)
            .filter(|&id| sched::task_uid(id).is_some())
            .into_iter()
            .collect()),
        PRIO_PGRP if who == 0 => {
            let own = sched::group_of(sched::current_process()).map(|g| g.pgid());
            Ok(own.map(groups::members).unwrap_or_default())
        }
        PRIO_PGRP => Ok(u32::try_from(who).map(groups::members).unwrap_or_default()),
        PRIO_USER if who == 0 => Ok(sched::processes_of(Some(sched::current_uid()))),
        PRIO_USER => Ok(sched::processes_of(Some(who as u32))),
        _ => Err(-errno::EINVAL),
    }
}

/// `getpriority(which, who)`: 20 - nice of the highest-priority target (1..=40; the C
/// library turns it back into a nice value), ESRCH if there is none.
pub fn getpriority(which: u64, who: u64) -> i64 {
    let targets = match targets(which, who) {
        Ok(t) => t,
        Err(e) => return e,
    };
    targets
        .into_iter()
        .filter_map(sched::task_nice)
        .map(|nice| 20 - i64::from(nice))
        .max()
        .unwrap_or(-errno::ESRCH)
}

/// `setpriority(which, who, nice)`: every target the rules allow is reniced; the result is
/// the last refusal (EPERM or EACCES), ESRCH if there was no target, else 0.
pub fn setpriority(which: u64, who: u64, nice: u64) -> i64 {
    let nice = (nice as i32).clamp(-20, 19) as i8;
    let targets = match targets(which, who) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let caller = sched::current_uid();
    let mut result = -errno::ESRCH;
    for id in targets {
        let (Some(uid), Some(old)) = (sched::task_uid(id), sched::task_nice(id)) else {
            continue;
        };
        if caller != 0 && caller != uid {
            result = -errno::EPERM;
        } else if caller != 0 && nice < old {
            result = -errno::EACCES;
        } else if sched::set_task_nice(id, nice) && result == -errno::ESRCH {
            result = 0;
        }
    }
    result
}

/// `getgroups(size, list)`: cfslab's processes have no supplementary groups, so there are
/// none to list (0; EINVAL for a negative size, as Linux).
pub fn getgroups(size: i64) -> i64 {
    if size < 0 { -errno::EINVAL } else { 0 }
}

/// `sched_getaffinity(pid, len, mask)`: the CPUs `pid` may run on among those online, one
/// 8-byte word (cfslab has at most 64 CPUs); EINVAL if `len` cannot hold it or is not a
/// whole number of words.
pub fn sched_getaffinity(pid: i64, len: u64, mask: u64) -> i64 {
    if len < 8 || !len.is_multiple_of(8) {
        return -errno::EINVAL;
    }
    let Some(cpus) = target(pid).and_then(sched::affinity::affinity_of) else {
        return -errno::ESRCH;
    };
    match super::space().write(mask, &cpus.to_le_bytes()) {
        Ok(()) => 8,
        Err(_) => -errno::EFAULT,
    }
}

/// `sched_setaffinity(pid, len, mask)`: `pid` may run only on the CPUs of the mask (its
/// first 8 bytes: CPUs 0 to 63), and moves if it is on another (`sched::affinity`); EINVAL
/// for a mask of no online CPU, as Linux, and `setpriority`'s permission rule.
pub fn sched_setaffinity(pid: i64, len: u64, mask: u64) -> i64 {
    let Some(id) = target(pid) else {
        return -errno::ESRCH;
    };
    let mut word = [0u8; 8];
    let n = (len as usize).min(8);
    if super::space().read(mask, &mut word[..n]).is_err() {
        return -errno::EFAULT;
    }
    let caller = sched::current_uid();
    if caller != 0 && sched::task_uid(id) != Some(caller) {
        return -errno::EPERM;
    }
    match sched::affinity::set_affinity(id, u64::from_le_bytes(word)) {
        Ok(()) => 0,
        Err(sched::affinity::AffinityError::NoOnlineCpu) => -errno::EINVAL,
        Err(sched::affinity::AffinityError::PerCpuThread) => -errno::EINVAL,
        Err(sched::affinity::AffinityError::NoTask) => -errno::ESRCH,
    }
}

/// `getcpu(cpu, node, cache)`: the CPU the caller runs on and its NUMA node (0: QEMU's
/// machine has one), each written where its pointer is not NULL; the third argument is
/// unused since Linux 2.6.24. EFAULT for a pointer that cannot take the word.
pub fn getcpu(cpu: u64, node: u64) -> i64 {
    let here = crate::percpu::this_cpu().index() as u32;
    for (at, value) in [(cpu, here), (node, 0)] {
        if at != 0 && super::space().write(at, &value.to_le_bytes()).is_err() {
            return -errno::EFAULT;
        }
    }
    0
}

/// The task `pid` names (0: the caller), if it is a process's.
fn target(pid: i64) -> Option<TaskId> {
    let id = if pid == 0 {
        sched::current()
    } else {
        id_of_pid(pid)?
    };
    sched::task_uid(id).map(|_| id)
}
