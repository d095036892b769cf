//! How the threads of a process end together: `exit_group` and a fatal signal end them all;
//! the leader files the process's exit only once the others are gone, as a Linux leader
//! stays a zombie until its group is empty; and `execve` ends the others first (Linux's
//! `de_thread`) — in a thread other than the leader, it then takes the process over.
//!
//! The takeover: the exec'ing thread (the heir) marks itself in the group, kills every
//! other thread, the leader too, and waits to lead. The leader, ending, waits as always
//! until it has no other thread left but the heir, then hands the process over to it
//! (`sched::hand_over_process`: the two swap ids, so that the heir runs on with the pid the
//! parent knows) and leaves as a plain thread. Were the two to wait for each other's end,
//! neither would end.

use super::sighand::SIGKILL;
use super::thread_group::ThreadGroup;
use crate::sched;
use crate::task::TaskId;
use alloc::sync::Arc;
use alloc::vec::Vec;

/// Ends every thread of `group` but the running one, and waits until they have gone — all
/// but the leader, which waits for the others in its turn (see [`wait_for_threads`]).
pub fn end_other_threads(group: &Arc<ThreadGroup>) {
    while group.has_other_threads() {
        // Asked again each round: a takeover changes the running task's id.
        let me = sched::current();
        let others: Vec<TaskId> = sched::threads_in(group)
            .into_iter()
            .filter(|&t| t != me)
            .collect();
        for &t in &others {
            sched::kill_task(t, SIGKILL);
        }
        let to_wait: Vec<TaskId> = others.into_iter().filter(|&t| t != group.leader).collect();
        if to_wait.is_empty() {
            return;
        }
        for t in to_wait {
            sched::join(t);
        }
    }
}

/// The leader, ending: waits until every other thread of `group` has ended — or until the
/// only one left is an heir exec'ing a new program, which it returns: the caller hands the
/// process over to it ([`hand_over`]).
pub fn wait_for_threads(group: &Arc<ThreadGroup>) -> Option<TaskId> {
    let me = sched::current();
    while group.has_other_threads() {
        let others: Vec<TaskId> = sched::threads_in(group)
            .into_iter()
            .filter(|&t| t != me)
            .collect();
        let heir = group.heir();
        let Some(&other) = others.iter().find(|&&t| Some(t) != heir) else {
            // No one left, or no one but the heir.
            return heir.filter(|_| !others.is_empty());
        };
        // Until it ends — or until a thread starts exec'ing, which changes what to wait for
        // (the exec'ing thread kills this one, which wakes it).
        sched::join_unless(other, || group.heir() != heir);
    }
    None
}

/// The leader's last step when a thread execs: the process becomes `heir`'s, and the
/// running task ends as a plain thread, its CPU time left to the process.
pub fn hand_over(group: Arc<ThreadGroup>, heir: TaskId) -> ! {
    // Nothing may run between the rename and this task's end.
    crate::arch::irq::disable();
    sched::hand_over_process(heir);
    group.add_ended_thread(sched::current_thread_times());
    // `exit` never returns: what this frame holds must go first.
    drop(group);
    sched::exit()
}

/// The heir's side of an `execve` in a thread other than the leader: ends the other threads
/// (the leader too) and returns once the running task leads the process.
pub fn take_over(group: &Arc<ThreadGroup>) {
    end_other_threads(group);
    sched::wait_to_lead(group.leader);
}
