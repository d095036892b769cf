//! The read-only files of `/proc`, in Linux's formats so that Linux's tools and cfslab's
//! own `ps` and `top` (`userland/shell/src/procfs.rs`) read them the same on both kernels:
//! `/proc/PID/{stat,status,sched,schedstat,cmdline}` (fs/proc/array.c, base.c,
//! kernel/sched/debug.c), `/proc/sched_debug`, `/proc/schedstat` (version 15), and the
//! system's `/proc/stat`, `/proc/meminfo`, `/proc/loadavg`, `/proc/uptime` and
//! `/proc/cpuinfo` that `top`, `free`, `uptime` and `nproc --all`'s kin read. Each is made whole when it is read (`sched::procview` takes the
//! snapshot).

use crate::sched::procview::{self, TaskView};
use crate::task::{State, TaskId, pid_of};
use crate::time::clock;
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

/// USER_HZ: the unit of `/proc/PID/stat`'s times, 100 a second on every Linux.
const NS_PER_USER_TICK: u64 = 10_000_000;

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
            ProcFile::Uptime => {
                let centis =
                    |ns: u64| format!("{}.{:02}", ns / 1_000_000_000, ns / 10_000_000 % 100);
                // The second figure is the idle time of every CPU, summed (as Linux's).
                let idle = crate::sched::idle_ns_by_cpu()
                    .iter()
                    .map(|&(_, ns)| ns)
                    .sum();
                format!("{} {}\n", centis(clock::now()), centis(idle))
            }
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
        State::Running | State::Runnable | State::Migrating => ('R', "R (running)"),
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

/// `/proc/loadavg`: the three load averages (`sched::loadavg`), runnable tasks / all
/// tasks, and the last pid given out.
fn loadavg() -> String {
    let tasks = procview::listed_tasks();
    let last = tasks.iter().map(|&id| pid_of(id)).max().unwrap_or(0);
    format!(
        "{} {}/{} {last}\n",
        crate::sched::loadavg::text(),
        procview::nr_running(),
        tasks.len()
    )
}

/// `/proc/meminfo`: the lines `free` and `top` read, in kB. Free memory is the frames not
/// handed out; the page cache's frames are Cached (and count as available, as Linux's
/// reclaimable cache does); there is no swap.
fn meminfo() -> String {
    let (total, free, cached) = crate::mm::frame_counts();
    let kb = |frames: u64| frames * 4;
    format!(
        "MemTotal:       {:8} kB\nMemFree:        {:8} kB\nMemAvailable:   {:8} kB\n\
         Buffers:        {:8} kB\nCached:         {:8} kB\nSwapCached:     {:8} kB\n\
         SwapTotal:      {:8} kB\nSwapFree:       {:8} kB\n",
        kb(total),
        kb(free),
        kb(free + cached),
        0,
        kb(cached),
        0,
        0,
        0
    )
}

/// `/proc/lock_stat`: per rank of lock (`sync::lock_order`) ever taken, how many
/// acquisitions had to wait for another CPU, the spins they took and the TSC cycles they
/// spent in all (`sync::lock_stat`; Linux's `waittime-total`), and the acquisitions in all.
/// Linux's file (with CONFIG_LOCK_STAT) has a line per lock class with hold and wait times;
/// cfslab times only the slow path, so that a lock taken at once costs one increment more.
fn lock_stat() -> String {
    let mut text = String::from(
        "lock_stat version 0.4 (cfslab: contentions, spins, wait cycles and acquisitions per \
         lock rank)\n\
         class name                    contentions          spins  waittime-total    acquisitions\n",
    );
    for counts in crate::sync::lock_stat::by_rank() {
        let name = format!("{:?}:", counts.rank);
        let _ = writeln!(
            text,
            "{name:<24} {:>16} {:>14} {:>15} {:>15}",
            counts.contentions, counts.spins, counts.cycles, counts.acquisitions
        );
    }
    text
}

/// `/proc/stat`: each CPU's time in USER_HZ ticks — user (the ticks that found it in ring
/// 3), nice (not told apart: 0), system (the rest of its busy time), idle (its idle task's
/// exact time), then iowait, irq, softirq, steal, guest, guest_nice (0) — for the machine
/// (the sums) and for each CPU, then context switches, the boot time (0: cfslab has no wall
/// clock), processes started, and the runnable and blocked counts.
fn system_stat() -> String {
    let now = clock::now();
    let t = |ns: u64| ns / NS_PER_USER_TICK;
    let line = |[user, system, idle]: [u64; 3]| {
        format!("{} 0 {} {} 0 0 0 0 0 0", t(user), t(system), t(idle))
    };
    let per_cpu: alloc::vec::Vec<(usize, [u64; 3])> = crate::sched::idle_ns_by_cpu()
        .into_iter()
        .map(|(n, idle)| {
            let ticks = crate::percpu::cpu(n).map_or(0, |c| c.user_ticks());
            let user = (ticks * crate::time::tick_ns()).min(now - idle);
            (n, [user, now - idle - user, idle])
        })
        .collect();
    let sum = |i: usize| per_cpu.iter().map(|(_, times)| times[i]).sum::<u64>();
    let mut text = format!("cpu  {}\n", line([sum(0), sum(1), sum(2)]));
    for (n, times) in per_cpu {
        let _ = writeln!(text, "cpu{n} {}", line(times));
    }
    let tasks = procview::listed_tasks();
    let _ = write!(
        text,
        "ctxt {}\nbtime 0\nprocesses {}\nprocs_running {}\nprocs_blocked 0\n",
        crate::sched::switch_count(),
        tasks.iter().map(|&id| pid_of(id)).max().unwrap_or(0),
        procview::nr_running(),
    );
    text
}

/// `/proc/cpuinfo`: a block per online CPU with the first fields of Linux's x86
/// `show_cpuinfo` (arch/x86/kernel/cpu/proc.c), in its order and spacing: what CPUID says,
/// the TSC's rate as the clock, and the topology QEMU's `-smp N` gives (one package of N
/// cores, one thread each). Linux's `flags`, `bugs`, `bogomips` and cache lines are left out.
fn cpuinfo() -> String {
    let id = crate::arch::cpuid::identity();
    let online = crate::cpus::ipi::online();
    let khz = crate::time::clock::tsc_hz() / 1000;
    let mut text = String::new();
    // A CPU taken offline (`sched::hotplug`) has no block, as in Linux.
    let (_, online_now) = crate::sched::hotplug::cpu_masks();
    for &(n, apic) in online.iter().filter(|&&(n, _)| online_now & 1 << n != 0) {
        let _ = write!(
            text,
            "processor\t: {n}\nvendor_id\t: {}\ncpu family\t: {}\nmodel\t\t: {}\n\
             model name\t: {}\nstepping\t: {}\ncpu MHz\t\t: {}.{:03}\nphysical id\t: 0\n\
             siblings\t: {}\ncore id\t\t: {n}\ncpu cores\t: {}\napicid\t\t: {apic}\n\
             initial apicid\t: {apic}\nfpu\t\t: yes\nfpu_exception\t: yes\n\
             cpuid level\t: {}\nwp\t\t: yes\n\n",
            id.vendor,
            id.family,
            id.model,
            id.brand,
            id.stepping,
            khz / 1000,
            khz % 1000,
            online.len(),
            online.len(),
            id.max_leaf,
        );
    }
    text
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

/// `/proc/schedstat`, version 15: the timestamp in ticks, then a line per CPU — yield count
/// (not counted: 0), a legacy 0, switches, switches to idle, wake-ups, local wake-ups (all
/// counted local), run time and wait time in ns, and time slices run — each followed, with
/// a balancer, by a line per scheduling domain, bottom up: its CPUs as a hexadecimal mask
/// (Linux's `%*pb`) and its 36 counters (`sched::smp::schedstat`).
fn schedstat() -> String {
    let mut text = format!(
        "version 15\ntimestamp {}\n",
        clock::now() / crate::time::tick_ns()
    );
    for (cpu, c) in procview::cpu_schedstats() {
        let _ = writeln!(
            text,
            "cpu{cpu} 0 0 {} {} {} {} {} {} {}",
            c.switches, c.idle_switches, c.wakeups, c.wakeups, c.run_ns, c.wait_ns, c.switches
        );
        for (level, (span, stats)) in procview::domain_schedstats(cpu).iter().enumerate() {
            let mask = cpu_mask(*span, crate::cpus::ipi::online_count());
            let _ = write!(text, "domain{level} {mask}");
            for field in stats.v15_fields() {
                let _ = write!(text, " {field}");
            }
            text.push('\n');
        }
    }
    text
}

/// A CPU mask as Linux prints one (`%*pb` over `cpus` CPUs): hexadecimal, 32 CPUs a group,
/// groups apart by commas, the highest first with as many digits as its CPUs need.
fn cpu_mask(bits: u64, cpus: usize) -> String {
    let groups = cpus.div_ceil(32).max(1);
    let mut out = String::new();
    for g in (0..groups).rev() {
        let word = (bits >> (32 * g)) & 0xffff_ffff;
        let width = (cpus - 32 * g).min(32).div_ceil(4);
        let sep = if out.is_empty() { "" } else { "," };
        let _ = write!(out, "{sep}{word:0width$x}");
    }
    out
}
