//! A thread that is not its process's leader calls `execve` (Linux's `de_thread`): once the
//! other threads are gone, the exec'ing thread becomes the process. It takes the leader's
//! id — the pid its parent knows and waits for — and the leader, which has ended its part,
//! leaves as a plain thread under the exec'ing thread's old id.
//!
//! The scheduler's side is a rename, done by the old leader under the lock as it ends: the
//! two tasks swap ids; the process's own links (its parent, its children, a vfork parent
//! waiting for it) move to the heir's task; and whatever named the heir's old id — its
//! children, a `join` waiting on it — now names the process. `thread_ends` drives it.

use crate::sched::{Scheduler, change_then_reschedule};
use crate::task::{State, TaskId};
use crate::time::clock;

/// The heir's side: sleeps until the running task has become the process led by `leader`
/// (the old leader, ending, renames the two tasks and wakes it). Each time it goes to sleep
/// it wakes the leader, which waits for that (see [`hand_over_process`]).
pub fn wait_to_lead(leader: TaskId) {
    loop {
        let waiting = change_then_reschedule(|s| {
            let me = s.current_id();
            if me == leader {
                return false;
            }
            let now = clock::now();
            match s.live_task_by_id(leader) {
                Some(t) => {
                    // Registered under the heir's old id, which the rename turns into the
                    // leader's: the old leader's exit then wakes the heir.
                    t.waiters.push(me);
                    s.block_current(now);
                    s.wake(leader, ::sched::Wakeup::default(), now);
                    true
                }
                _ => unreachable!("a leader ended without handing its process over"),
            }
        });
        if !waiting {
            return;
        }
    }
}

/// The old leader's side: hands the process over to `heir` (the running task is its
/// leader). Interrupts must be off: the caller ends right after, as the heir's old id.
///
/// The rename waits until the heir sleeps in [`wait_to_lead`]: a task running on another
/// CPU reads its own id from that CPU's state (`PerCpu::current`, written as the CPU picks
/// it), which would still say the old one — and the old id names the leader after the
/// swap, so the heir, still ending the other threads, would take itself for one of them.
/// Asleep, it runs no code until it wakes, and its CPU reads its new id as it picks it.
pub fn hand_over_process(heir: TaskId) {
    debug_assert!(!crate::arch::irq::enabled());
    loop {
        let handed = change_then_reschedule(|s| {
            let (leader, me) = (s.current_id(), s.current_slot());
            let heir_slot = *s.by_id.get(&heir).expect("the heir has not ended");
            let asleep = s.state(heir_slot) == State::Sleeping;
            if !asleep || !s.task(me).waiters.contains(&heir) {
                // The heir wakes this task as it goes to sleep to wait.
                s.block_current(clock::now());
                return false;
            }
            s.swap_identities(leader, heir);
            crate::percpu::this_cpu().set_current(heir, leader);
            true
        });
        if handed {
            return;
        }
    }
}

impl Scheduler {
    fn swap_identities(&mut self, leader: TaskId, heir: TaskId) {
        let (old, new) = (self.by_id[&leader], self.by_id[&heir]);
        self.by_id.insert(leader, new);
        self.by_id.insert(heir, old);
        self.task(old).id = heir;
        self.task(new).id = leader;
        self.context_mut(old).id = heir;
        self.context_mut(new).id = leader;
        // The signals sent to one of them alone stay that task's (Linux's `de_thread`
        // keeps the exec'ing thread's own pending signals; the leader's go with it).
        if let Some(group) = self.task(new).group.clone() {
            group.sighand.swap_threads(leader, heir);
        }
        // The process's own links go with its id: its parent and children are the family
        // tree's, by id, and so already the heir's; the children the heir started as a
        // thread join them. (A thread is no one's child and has no vfork parent.)
        let vfork_parent = self.task(old).vfork_parent.take();
        self.task(new).vfork_parent = vfork_parent;
        super::family::family().heir_takes_over(heir, leader);
        // What named the heir's old id names the process now.
        let rename = |id: &mut TaskId| {
            if *id == heir {
                *id = leader;
            }
        };
        for t in self.slots.iter_mut().flatten() {
            t.vfork_parent.iter_mut().for_each(rename);
            t.waiters.iter_mut().for_each(rename);
        }
    }
}
