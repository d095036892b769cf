//! A process as a group of threads (Linux's `signal_struct` and thread-group id, in brief):
//! what the threads `clone` makes with CLONE_THREAD share besides memory and files — the
//! pid, how the process ends, its signal actions and pending signals, and the CPU time of
//! threads and children already gone (for `getrusage` and `wait4`).
//!
//! The leader (the task `fork` or the first `spawn` made) is the process to its parent: it
//! is the one `wait4` reaps, and it files the process's exit only after every other thread
//! has ended, as a Linux leader stays a zombie until its group is empty. A fatal signal in
//! any thread ends them all; `exit_group` too; `exit` ends one thread; `execve` in another
//! thread makes that thread the leader (`thread_ends`, which holds how they all end).
//!
//! Its signal actions and pending signals are its [`SigHand`]'s, under a lock of their own.

use super::exit_status::{CpuTimes, Exit};
use super::sighand::{SigAction, SigHand};
use crate::sync::{Rank, SpinLock};
use crate::task::TaskId;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// What the threads of one process share.
pub struct ThreadGroup {
    /// The leader's task: the process's pid is its pid.
    pub leader: TaskId,
    /// A thread other than the leader that is `execve`-ing, plus one (0: none): the leader
    /// hands the process over to it. Atomic, so that the leader can ask under the
    /// scheduler's lock, right before it sleeps (`thread_ends`).
    heir: AtomicUsize,
    /// Its threads that have not released it yet (counted at creation, uncounted in the
    /// thread's last steps, `sched::exit`): a process's end asks this first, and for a
    /// process of one thread, nearly every one, it has no other threads to look for.
    threads: AtomicUsize,
    /// Its process group and session, as pids (`job`'s calls change them).
    pgid: AtomicU32,
    sid: AtomicU32,
    /// Its signal actions and pending signals, under a lock of their own (see `sighand`).
    pub sighand: SigHand,
    state: SpinLock<GroupState>,
}

struct GroupState {
    /// How the process ends, once a thread has decided it (exit_group, a fatal signal).
    exit: Option<Exit>,
    /// An `execve` is ending the other threads: their deaths decide nothing.
    execing: bool,
    /// CPU time of the threads that have ended.
    ended_threads: CpuTimes,
    /// CPU time of the children `wait4` has reaped (and of theirs): RUSAGE_CHILDREN.
    reaped_children: CpuTimes,
}

/// What a forked child inherits of its parent's process: the signal actions (Linux's
/// `copy_sighand`), its process group and its session. Taken from the parent's group
/// before the scheduler's lock, under which the child is made.
pub struct InheritedActions {
    actions: Vec<(u8, SigAction)>,
    pgid: u32,
    sid: u32,
}

impl ThreadGroup {
    /// A new thread joins the process.
    pub fn thread_started(&self) {
        self.threads.fetch_add(1, Ordering::Relaxed);
    }

    /// Thread `thread` has released the process (its last steps, interrupts off); the
    /// signals sent to it alone go with it.
    pub fn thread_ended(&self, thread: TaskId) {
        self.sighand.thread_ended(thread);
        self.threads.fetch_sub(1, Ordering::Relaxed);
    }

    /// Whether the process has a thread besides the one asking.
    pub fn has_other_threads(&self) -> bool {
        self.threads.load(Ordering::Relaxed) > 1
    }

    /// A new process led by `leader`, with every signal at its default action, leading a
    /// process group and a session of its own (as the first program does, like a login).
    pub fn new(leader: TaskId) -> ThreadGroup {
        let pid = crate::task::pid_of(leader) as u32;
        ThreadGroup::with_actions(
            leader,
            InheritedActions {
                actions: Vec::new(),
                pgid: pid,
                sid: pid,
            },
        )
    }

    fn with_actions(leader: TaskId, inherited: InheritedActions) -> ThreadGroup {
        let InheritedActions { actions, pgid, sid } = inherited;
        ThreadGroup {
            leader,
            pgid: AtomicU32::new(pgid),
            sid: AtomicU32::new(sid),
            heir: AtomicUsize::new(0),
            threads: AtomicUsize::new(1),
            sighand: SigHand::new(actions),
            state: SpinLock::new(
                Rank::ThreadGroup,
                GroupState {
                    exit: None,
                    execing: false,
                    ended_threads: CpuTimes::default(),
                    reaped_children: CpuTimes::default(),
                },
            ),
        }
    }

    /// What a child forked now inherits: the signal actions, the process group and the
    /// session.
    pub fn actions_to_inherit(&self) -> InheritedActions {
        InheritedActions {
            actions: self.sighand.actions(),
            pgid: self.pgid(),
            sid: self.sid(),
        }
    }

    /// A forked child's group, led by `leader`, with what it inherits.
    pub fn forked(leader: TaskId, inherited: InheritedActions) -> ThreadGroup {
        ThreadGroup::with_actions(leader, inherited)
    }

    /// Its process group's id (a pid): `setpgid`, `getpgid`.
    pub fn pgid(&self) -> u32 {
        self.pgid.load(Ordering::Relaxed)
    }

    /// Its session's id (a pid): `setsid`, `getsid`.
    pub fn sid(&self) -> u32 {
        self.sid.load(Ordering::Relaxed)
    }

    /// Moves it to process group `pgid` (`setpgid`, which checked the rules).
    pub fn set_pgid(&self, pgid: u32) {
        self.pgid.store(pgid, Ordering::Relaxed);
    }

    /// Makes it lead a new session and process group, both `pid` (`setsid`).
    pub fn lead_session(&self, pid: u32) {
        self.sid.store(pid, Ordering::Relaxed);
        self.pgid.store(pid, Ordering::Relaxed);
    }

    fn with<R>(&self, f: impl FnOnce(&mut GroupState) -> R) -> R {
        f(&mut self.state.lock())
    }

    /// Records that the process ends with `exit` unless something decided first; true if
    /// this call decided it (its caller then ends the other threads).
    pub fn decide_exit(&self, exit: Exit) -> bool {
        self.with(|s| {
            let first = s.exit.is_none() && !s.execing;
            if first {
                s.exit = Some(exit);
            }
            first
        })
    }

    /// How the process ends, if a thread has decided it.
    pub fn exit(&self) -> Option<Exit> {
        self.with(|s| s.exit)
    }

    /// Starts an `execve` by thread `me` past its point of no return: from now on the
    /// other threads' deaths decide nothing, and if `me` is not the leader, the leader is to
    /// hand the process over to it. False if the process is already ending or exec'ing
    /// another program (the caller is about to be ended too).
    pub fn begin_exec(&self, me: TaskId) -> bool {
        self.with(|s| {
            if s.execing || s.exit.is_some() {
                return false;
            }
            s.execing = true;
            if me != self.leader {
                self.heir.store(me.number() + 1, Ordering::Relaxed);
            }
            true
        })
    }

    /// Ends an `execve`'s ending of the other threads.
    pub fn end_exec(&self) {
        self.with(|s| {
            s.execing = false;
            s.exit = None;
            self.heir.store(0, Ordering::Relaxed);
        });
    }

    /// The thread the process is being handed over to, if an `execve` in a thread other
    /// than the leader is under way.
    pub fn heir(&self) -> Option<TaskId> {
        let heir = self.heir.load(Ordering::Relaxed).checked_sub(1);
        heir.map(TaskId::from_number)
    }

    /// Adds an ended thread's CPU time.
    pub fn add_ended_thread(&self, times: CpuTimes) {
        self.with(|s| s.ended_threads.add(times));
    }

    /// Adds a reaped child's CPU time (its own and its reaped children's).
    pub fn add_reaped_child(&self, times: CpuTimes) {
        self.with(|s| s.reaped_children.add(times));
    }

    /// CPU time of the threads that have ended, and of the reaped children.
    pub fn ended_and_children(&self) -> (CpuTimes, CpuTimes) {
        self.with(|s| (s.ended_threads, s.reaped_children))
    }
}

#[cfg(test)]
mod tests {
    use super::CpuTimes;

    #[test_case]
    fn ticks_split_the_runtime_in_proportion() {
        let t = CpuTimes::from_ticks(1_000, 3, 1);
        assert_eq!((t.user_ns, t.system_ns), (750, 250));
        assert_eq!(CpuTimes::from_ticks(1_000, 0, 0).user_ns, 1_000);
        assert_eq!(CpuTimes::from_ticks(1_000, 0, 2).system_ns, 1_000);
    }
}
