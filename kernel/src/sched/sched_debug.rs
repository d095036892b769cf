//! `/proc/sched_debug` (Linux's kernel/sched/debug.c; 6.1 moved it to debugfs as
//! `sched/debug`, same text): the clocks and the policy's tunables, then the CPU — its
//! counters, the policy's runqueues, and a table of every task on it. The same CPU part is
//! what gdb's `cfslab-rq` shows and what `log=debug` prints at the end of each scenario.
//!
//! The kernel writes what it owns (the clocks, the counters, each task's pid, name, state,
//! switches and waits) and the policy what it owns, each runqueue and each task's columns, in
//! the layout of the Linux it mirrors (`sched::debug_layout`). Every task has one number
//! here, its pid, as in `ps` and the traces. Nothing here allocates or takes a lock: the
//! caller holds the scheduler, or gdb has stopped the kernel.

use super::Scheduler;
use crate::task::{State, pid_of};
use core::fmt::{self, Write};
use sched::debug_layout::{SplitNs, TaskRow, field};

/// The CPU this is (cfslab runs on one).
const CPU: usize = 0;

/// The whole file, at time `now`.
pub(super) fn write(s: &Scheduler, now: u64, out: &mut dyn Write) -> fmt::Result {
    write_header(s, now, out)?;
    write_cpu(s, now, out)
}

/// The file's head: the version line (with the policy), the clocks (cfslab has one clock, which Linux's three
/// names all read here), the tick count and the policy's tunables (`sysctl_sched`).
fn write_header(s: &Scheduler, now: u64, out: &mut dyn Write) -> fmt::Result {
    // Linux names its release and build here; cfslab names its policy and era.
    let policy = s.rq.policy();
    write!(out, "Sched Debug Version: v0.11, cfslab {}", policy.name())?;
    match policy.fair_params() {
        Some(p) => writeln!(out, " {}", p.era)?,
        None => writeln!(out)?,
    }
    for clock in ["ktime", "sched_clk", "cpu_clk"] {
        writeln!(out, "{clock:<40}: {}", SplitNs::of(now))?;
    }
    writeln!(out, "{:<40}: {}", "jiffies", crate::time::ticks())?;
    if let Some(p) = policy.fair_params() {
        writeln!(out, "\nsysctl_sched")?;
        for tunable in sched::Tunable::ALL {
            if tunable.applies_to(p.era.is_eevdf()) {
                let name = tunable.sysctl_name().trim_end_matches("_ns");
                let value = SplitNs::of(tunable.get(&p.tunables));
                writeln!(out, "  .sysctl_{name:<33}: {value}")?;
            }
        }
    }
    Ok(())
}

/// The CPU's part: `cpu#0` with its counters, the policy's runqueues, then the table of
/// tasks (Linux's `print_cpu` and `print_rq`).
fn write_cpu(s: &Scheduler, now: u64, out: &mut dyn Write) -> fmt::Result {
    let current = s.current_slot();
    let current_pid = if current == s.idle_slot() {
        0
    } else {
        s.slots[current].as_ref().map_or(0, |t| pid_of(t.id))
    };
    writeln!(out, "\ncpu#{CPU}")?;
    field(out, "nr_running", s.runnable_tasks())?;
    field(out, "nr_switches", s.switches())?;
    field(out, "curr->pid", current_pid)?;
    field(out, "clock", SplitNs::of(now))?;
    field(out, "clock_task", SplitNs::of(now))?;
    // The schedstats counters (every wake-up is local on one CPU).
    let stat = s.cpu_schedstat();
    field(out, "sched_count", stat.switches)?;
    field(out, "sched_goidle", stat.idle_switches)?;
    field(out, "ttwu_count", stat.wakeups)?;
    field(out, "ttwu_local", stat.wakeups)?;
    s.rq.policy().write_debug_runqueues(CPU, out)?;
    writeln!(out, "\nrunnable tasks:")?;
    write_tasks(s, out)
}

/// The table: every task but the idle one (Linux's swapper is not in its task list either),
/// in pid order, asleep or not, as Linux 4.18+ lists them.
fn write_tasks(s: &Scheduler, out: &mut dyn Write) -> fmt::Result {
    let policy = s.rq.policy();
    policy.write_debug_task_header(out)?;
    for &slot in s.by_id.values() {
        let Some(t) = s.slots[slot].as_deref() else {
            continue;
        };
        if slot == s.idle_slot() {
            continue;
        }
        let stats = s.rq.stats(slot);
        let row = TaskRow {
            running: slot == s.current_slot(),
            state: match s.state(slot) {
                State::Running | State::Runnable => 'R',
                State::Sleeping => 'S',
                State::Exited => 'Z',
            },
            comm: &t.name,
            pid: pid_of(t.id),
            switches: stats.voluntary_switches + stats.involuntary_switches,
            prio: 120 + i64::from(t.nice),
            wait_ns: stats.wait_ns,
            sleep_ns: stats.sleep_ns,
        };
        policy.write_debug_task(slot, &row, out)?;
    }
    Ok(())
}
