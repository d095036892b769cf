//! The machine's files of `/proc`, in Linux's formats: `/proc/loadavg`, `/proc/meminfo`,
//! `/proc/lock_stat`, `/proc/stat`, `/proc/cpuinfo`, `/proc/schedstat` (version 15) and
//! `/proc/uptime` (fs/proc/*.c, kernel/sched/stats.c). `proc` names them and holds the
//! files of each process. Each is made whole when it is read.

use crate::sched::procview;
use crate::task::pid_of;
use crate::time::clock;
use alloc::format;
use alloc::string::String;
use core::fmt::Write;

/// USER_HZ: the unit of `/proc/stat`'s and `/proc/PID/stat`'s times, 100 a second on every
/// Linux.
pub(super) const NS_PER_USER_TICK: u64 = 10_000_000;

/// `/proc/uptime`: the seconds since boot, then the idle time of every CPU, summed (as
/// Linux's), each to a hundredth.
pub(super) fn uptime() -> String {
    let centis = |ns: u64| format!("{}.{:02}", ns / 1_000_000_000, ns / 10_000_000 % 100);
    let idle = crate::sched::idle_ns_by_cpu()
        .iter()
        .map(|&(_, ns)| ns)
        .sum();
    format!("{} {}\n", centis(clock::now()), centis(idle))
}

/// `/proc/loadavg`: the three load averages (`sched::loadavg`), runnable tasks / all
/// tasks, and the last pid given out.
pub(super) fn loadavg() -> String {
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
pub(super) fn meminfo() -> String {
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
pub(super) fn lock_stat() -> String {
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
pub(super) fn system_stat() -> String {
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
pub(super) fn cpuinfo() -> String {
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

/// `/proc/schedstat`, version 15: the timestamp in ticks, then a line per CPU — yield count
/// (not counted: 0), a legacy 0, switches, switches to idle, wake-ups, local wake-ups (all
/// counted local), run time and wait time in ns, and time slices run — each followed, with
/// a balancer, by a line per scheduling domain, bottom up: its CPUs as a hexadecimal mask
/// (Linux's `%*pb`) and its 36 counters (`sched::smp::schedstat`).
pub(super) fn schedstat() -> String {
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
