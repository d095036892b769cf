//! The scheduler as `/proc` shows it (`user::fs::proc` writes the files): a snapshot of
//! one task, the tasks `/proc` lists, the `/proc/sched_debug` text and the CPU's
//! `/proc/schedstat` counters — each taken in one go under the scheduler lock, so that a
//! file read is consistent with itself, as Linux's are per read.

use super::{Scheduler, debugger, with_sched};
use crate::sched::proc::exit_status::CpuTimes;
use crate::task::{State, Task, TaskId, TaskStats};
use crate::time::clock;
use alloc::string::String;
use alloc::vec::Vec;
use sched::TaskInfo;

/// One task, as its `/proc/PID/` files describe it.
pub struct TaskView {
    pub id: TaskId,
    /// The parent's id (`None`: the boot task, or a parent that has gone).
    pub parent: Option<TaskId>,
    pub name: String,
    pub uid: u32,
    pub nice: i8,
    pub state: State,
    /// A kernel thread (no address space): Linux's PF_KTHREAD.
    pub kernel_thread: bool,
    /// Threads in its process (1 for a kernel thread).
    pub threads: usize,
    pub started_at: u64,
    /// CPU time of the whole process: live threads, and those that have ended.
    pub times: CpuTimes,
    /// CPU time of its children that `wait4` has reaped (`cutime`, `cstime`).
    pub children_times: CpuTimes,
    /// The task's own counters (this thread's: switches, waits, wake-ups).
    pub stats: TaskStats,
    /// What the policy knows of it, and the policy's name ("cfs", "eevdf", "o1").
    pub policy: Option<TaskInfo>,
    pub policy_name: &'static str,
    /// Its process group and session (0 for a kernel thread), and whether it is stopped.
    pub pgid: u32,
    pub sid: u32,
    pub stopped: bool,
    /// Pages its address space maps (rss).
    pub rss_pages: u64,
    /// The program a process runs (its path and argv; empty for a kernel thread).
    pub program: crate::user::layout::Program,
    /// The CPU whose runqueue holds it (its leader's, for a process).
    pub cpu: usize,
}

impl Scheduler {
    /// Is `t` what `/proc` lists: a process (its thread-group leader) or a kernel thread, but
    /// not the idle task (Linux's swapper, pid 0, is not in /proc either) nor one that has
    /// ended?
    fn listed(&self, t: &Task) -> bool {
        !self.is_idle(t.slot)
            && self.alive(t.slot)
            && t.group.as_ref().is_none_or(|g| g.leader == t.id)
    }
}

/// The ids `/proc` lists, in order.
pub fn listed_tasks() -> Vec<TaskId> {
    with_sched(|s| {
        let mut ids: Vec<TaskId> = s
            .slots
            .iter()
            .flatten()
            .filter(|t| s.listed(t))
            .map(|t| t.id)
            .collect();
        ids.sort_unstable();
        ids
    })
}

/// A snapshot of task `id`, if `/proc` lists it.
pub fn task_view(id: TaskId) -> Option<TaskView> {
    let (mut view, group, space) = with_sched(|s| {
        let now = clock::now();
        let slot = *s.by_id.get(&id)?;
        let t = s.slots[slot].as_deref()?;
        if !s.listed(t) {
            return None;
        }
        let threads: Vec<&Task> = match &t.group {
            Some(g) => s.threads_of(g).collect(),
            None => alloc::vec![t],
        };
        let mut times = CpuTimes::default();
        for thread in &threads {
            times.add(s.cpu_times(thread.slot, now));
        }
        let state = s.state(slot);
        let rq = s.task_rq(slot);
        let space = rq.context(slot).address_space.clone();
        let mut stats = *rq.stats(slot);
        stats.cpu_ns = stats.cpu_ns_at(now, state == State::Running);
        let (policy, policy_name) = (rq.policy().task_info(slot), rq.policy().name());
        let view = TaskView {
            id,
            parent: crate::sched::proc::family::family().parent(id),
            name: t.name.clone(),
            uid: t.uid,
            nice: t.nice,
            state,
            kernel_thread: space.is_none(),
            threads: threads.len(),
            started_at: t.started_at,
            times,
            children_times: CpuTimes::default(),
            stats,
            policy,
            policy_name,
            cpu: t.cpu.get(),
            pgid: 0,
            sid: 0,
            stopped: false,
            rss_pages: 0,
            program: Default::default(),
        };
        Some((view, t.group.clone(), space))
    })?;
    // The group's and the space's own locks are taken after the scheduler's is released.
    if let Some(group) = group {
        let (ended, children) = group.ended_and_children();
        view.times.add(ended);
        view.children_times = children;
        (view.pgid, view.sid) = (group.pgid(), group.sid());
        view.stopped = group.sighand.is_stopped();
    }
    if let Some(space) = space {
        view.program = space.layout.lock().program.clone();
        view.rss_pages = space.mapped_pages();
    }
    Some(view)
}

/// `/proc/sched_debug` (see [`super::debugger`]).
pub fn sched_debug_text() -> String {
    with_sched(|s| {
        let mut out = String::new();
        let _ = debugger::write_sched_debug(s, clock::now(), &mut out);
        out
    })
}

/// Tasks running or waiting for the CPU, threads included, the idle task aside (Linux's
/// `nr_running()`: `/proc/loadavg`'s and `/proc/stat`'s count).
pub fn nr_running() -> u64 {
    with_sched(|s| s.runnable_tasks())
}

/// A CPU's line of `/proc/schedstat` (version 15): the counters cfslab keeps, summed over
/// the tasks of its runqueue, exited ones included where the kernel keeps them.
pub struct CpuSchedstat {
    /// Switches in (Linux's sched_count), and those into the idle task (sched_goidle).
    pub switches: u64,
    pub idle_switches: u64,
    /// Wake-ups (ttwu_count; all local while each task stays on its CPU).
    pub wakeups: u64,
    /// CPU time of the tasks and their time waiting on the runqueue, in ns (live tasks).
    pub run_ns: u64,
    pub wait_ns: u64,
}

/// Every online CPU's number and [`CpuSchedstat`], now, in CPU order.
pub fn cpu_schedstats() -> Vec<(usize, CpuSchedstat)> {
    with_sched(|s| s.online.iter().map(|&n| (n, s.cpu_schedstat(n))).collect())
}

/// CPU `cpu`'s scheduling domains, bottom up: each one's CPUs and its passes' counters
/// (none without a balancer).
pub fn domain_schedstats(cpu: usize) -> Vec<(u64, ::sched::smp::schedstat::DomainStats)> {
    with_sched(|s| s.domain_schedstats(cpu))
}

impl Scheduler {
    /// CPU `cpu`'s counters of [`CpuSchedstat`] (also in `/proc/sched_debug`'s CPU
    /// sections).
    pub(super) fn cpu_schedstat(&self, cpu: usize) -> CpuSchedstat {
        let rq = &self.rqs[cpu];
        let idle = rq.idle();
        let mut stat = CpuSchedstat {
            switches: rq.nr_switches(),
            idle_switches: rq.stats(idle).switches,
            wakeups: 0,
            run_ns: 0,
            wait_ns: 0,
        };
        let on_cpu = self.slots.iter().flatten().filter(|t| t.cpu.get() == cpu);
        for t in on_cpu.filter(|t| t.slot != idle) {
            let stats = rq.stats(t.slot);
            stat.wakeups += stats.wakeups;
            stat.run_ns += stats.cpu_ns;
            stat.wait_ns += stats.wait_ns;
        }
        stat
    }
}
