//! The read-only files of `/proc`, in Linux's formats so that Linux's tools and cfslab's
//! own `ps` and `top` (`userland/shell/src/procfs.rs`) read them the same on both kernels:
//! the names of them all, each process's `/proc/PID/{stat,status,sched,schedstat,cmdline}`
//! (fs/proc/array.c, base.c, kernel/sched/debug.c) and `/proc/sched_debug`; the machine's
//! files (`/proc/stat`, `meminfo`, `loadavg`, `uptime`, `cpuinfo`, `schedstat`, `lock_stat`)
//! are `proc_system`'s. Each is made whole when it is read (`sched::procview` takes the
//! snapshot).

use super::proc_system::{
    NS_PER_USER_TICK, cpuinfo, loadavg, lock_stat, meminfo, schedstat, system_stat, uptime,
};
use crate::sched::procview::{self, TaskView};
use crate::task::{State, TaskId, pid_of};
use crate::user::errno;
use alloc::format;
use alloc::string::String;
use core::fmt::Write;
use sched::debug_layout::SplitNs;

/// A file of `/proc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcFile {
    Cpuinfo,
    SchedDebug,
    Schedstat,
    Uptime,
    Loadavg,
    LockStat,
    Meminfo,
    SystemStat,
    /// `/proc/PID/...`.
    Stat(TaskId),
    Status(TaskId),
    Sched(TaskId),
    TaskSchedstat(TaskId),
    Cmdline(TaskId),
}

impl ProcFile {
    /// The files at the top of `/proc`.
    pub const SYSTEM: [(&'static str, ProcFile); 8] = [
        ("cpuinfo", ProcFile::Cpuinfo),
        ("loadavg", ProcFile::Loadavg),
        ("lock_stat", ProcFile::LockStat),
        ("meminfo", ProcFile::Meminfo),
        ("sched_debug", ProcFile::SchedDebug),
        ("schedstat", ProcFile::Schedstat),
        ("stat", ProcFile::SystemStat),
        ("uptime", ProcFile::Uptime),
    ];

    /// The files of `/proc/PID/` for task `id`.
    pub fn per_task(id: TaskId) -> [(&'static str, ProcFile); 5] {
        [
            ("cmdline", ProcFile::Cmdline(id)),
            ("sched", ProcFile::Sched(id)),
            ("schedstat", ProcFile::TaskSchedstat(id)),
            ("stat", ProcFile::Stat(id)),
            ("status", ProcFile::Status(id)),
        ]
    }

    /// The file's bytes now (`cmdline`'s arguments are NUL-separated, not text); ESRCH if
    /// its process has gone since it was opened (as Linux).
    pub fn bytes(self) -> Result<alloc::vec::Vec<u8>, i64> {
        match self {
            ProcFile::Cmdline(id) => {
                let v = procview::task_view(id).ok_or(-errno::ESRCH)?;
                Ok(v.program.cmdline().to_vec())
            }
            other => other.text().map(String::into_bytes),
        }
    }

    /// The file's text now; ESRCH if its process has gone since it was opened (as Linux).
    fn text(self) -> Result<String, i64> {
        let view = |id| procview::task_view(id).ok_or(-errno::ESRCH);
        Ok(match self {
            ProcFile::Cpuinfo => cpuinfo(),
            ProcFile::SchedDebug => procview::sched_debug_text(),
            ProcFile::Schedstat => schedstat(),
            ProcFile::Uptime => uptime(),
            ProcFile::Loadavg => loadavg(),
            ProcFile::LockStat => lock_stat(),
            ProcFile::Meminfo => meminfo(),
            ProcFile::SystemStat => system_stat(),
            ProcFile::Cmdline(_) => String::new(),
            ProcFile::Stat(id) => stat(&view(id)?),
            ProcFile::Status(id) => status(&view(id)?),
            ProcFile::Sched(id) => sched(&view(id)?),
            ProcFile::TaskSchedstat(id) => {
                let v = view(id)?;
                format!(
                    "{} {} {}\n",
                    v.stats.cpu_ns, v.stats.wait_ns, v.stats.switches
                )
            }
        })
    }
}

/// The one-letter state of `stat` and the words of `status`.
fn state(v: &TaskView) -> (char, &'static str) {
    if v.stopped {
        return ('T', "T (stopped)");
    }
    match v.state {
        State::Running | State::Runnable => ('R', "R (running)"),
        State::Sleeping => ('S', "S (sleeping)"),
        State::Exited => ('Z', "Z (zombie)"),
    }
}

fn ppid(v: &TaskView) -> i64 {
    v.parent.map_or(0, pid_of)
}

/// `/proc/PID/stat`: Linux's 52 fields. cfslab fills pid, comm, state, ppid, the process
/// group and session, flags (PF_KTHREAD), utime, stime, cutime, cstime, priority (20 +
/// nice, the fair class's `prio - 100`), nice, num_threads, starttime, vsize and rss (the
/// pages mapped: all of cfslab's memory is resident), and processor (field 39: the CPU
/// whose runqueue holds it); the other fields are 0.
fn stat(v: &TaskView) -> String {
    const PF_KTHREAD: u64 = 0x0020_0000;
    let pid = pid_of(v.id);
    let ticks = |ns: u64| ns / NS_PER_USER_TICK;
    let mut out = format!(
        "{pid} ({}) {} {} {} {} 0 -1 {} 0 0 0 0 {} {} {} {} {} {} {} 0 {} {} {}",
        v.name,
        state(v).0,
        ppid(v),
        v.pgid,
        v.sid,
        if v.kernel_thread { PF_KTHREAD } else { 0 },
        ticks(v.times.user_ns),
        ticks(v.times.system_ns),
        ticks(v.children_times.user_ns),
        ticks(v.children_times.system_ns),
        20 + i64::from(v.nice),
        v.nice,
        v.threads,
        ticks(v.started_at),
        v.rss_pages * 4096,
        v.rss_pages,
    );
    // Fields 25 to 52: the processor is the 39th.
    for field in 25..=52 {
        match field {
            39 => {
                let _ = write!(out, " {}", v.cpu);
            }
            _ => out.push_str(" 0"),
        }
    }
    out.push('\n');
    out
}

/// `/proc/PID/status`: the lines Linux's tools read. `Nice:` is cfslab's own line (Linux
/// shows nice in `stat` only), for a reader who looks here for it.
fn status(v: &TaskView) -> String {
    let pid = pid_of(v.id);
    let uid = v.uid;
    format!(
        "Name:\t{}\nState:\t{}\nTgid:\t{pid}\nPid:\t{pid}\nPPid:\t{}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n\
         Gid:\t0\t0\t0\t0\nThreads:\t{}\nNice:\t{}\nvoluntary_ctxt_switches:\t{}\n\
         nonvoluntary_ctxt_switches:\t{}\n",
        v.name,
        state(v).1,
        ppid(v),
        v.threads,
        v.nice,
        v.times.voluntary_switches,
        v.times.involuntary_switches,
    )
}

/// `/proc/PID/sched` (kernel/sched/debug.c's `proc_sched_show_task`, 6.1, as with
/// schedstats on): each key padded to 45 columns, times in ms with six decimals and counts
/// in 21 columns. The fields are Linux's, in its order, for the values cfslab keeps: no load
/// tracking, NUMA or migrations to speak of (no task migrates yet: `se.nr_migrations` is 0). The load
/// weight is on 64-bit Linux's scale (a nice-0 task weighs 1 048 576); under EEVDF cfslab
/// adds the task's virtual deadline and slice; O(1) has no entity, so no `se.` values
/// beyond its CPU time.
fn sched(v: &TaskView) -> String {
    let mut out = format!(
        "{} ({}, #threads: {})\n{}\n",
        v.name,
        pid_of(v.id),
        v.threads,
        "-".repeat(67)
    );
    let mut line = |key: &str, value: &dyn core::fmt::Display| {
        let _ = writeln!(out, "{key:<45}:{value:>21}");
    };
    let ms = |ns: u64| SplitNs::of(ns);
    let entity = v.policy.filter(|_| v.policy_name != "o1");
    let sum_exec = entity.map_or(v.stats.cpu_ns, |info| info.sum_exec_runtime);
    if let Some(info) = entity {
        line("se.exec_start", &ms(info.exec_start));
        line("se.vruntime", &ms(info.vruntime));
    }
    line("se.sum_exec_runtime", &ms(sum_exec));
    if let Some(deadline) = entity.and_then(|info| info.deadline) {
        line("se.deadline", &ms(deadline));
        line("se.slice", &ms(entity.map_or(0, |info| info.slice_ns)));
    }
    line("se.nr_migrations", &0);
    line("sum_sleep_runtime", &ms(v.stats.sleep_ns));
    line("wait_sum", &ms(v.stats.wait_ns));
    line("nr_wakeups", &v.stats.wakeups);
    // Linux's nr_switches is the sum of the two below (switches away from the task).
    let switches = v.stats.voluntary_switches + v.stats.involuntary_switches;
    // The average run between switches; −1 (printed 0.000001, as Linux prints it) for none.
    let avg_atom = sum_exec.checked_div(switches).unwrap_or(u64::MAX);
    line("avg_atom", &ms(avg_atom));
    line("nr_switches", &switches);
    line("nr_voluntary_switches", &v.stats.voluntary_switches);
    line("nr_involuntary_switches", &v.stats.involuntary_switches);
    if let Some(info) = entity {
        line("se.load.weight", &sched::weights::scale_load(info.weight));
    }
    line("policy", &0);
    line("prio", &(120 + i64::from(v.nice)));
    out
}
