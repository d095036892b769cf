//! The scheduler as text: `/proc/sched_debug` (Linux's kernel/sched/debug.c; 6.1 keeps it
//! in debugfs as `sched/debug`, the same text), and gdb's helper commands (`cfslab-ps`,
//! `cfslab-rq`, `cfslab-trace N`, defined in boot/gdb/cfslab.py), which `log=debug` also
//! prints at the end of each scenario: one formatter for all, as Linux's scripts/gdb `lx-ps`
//! reads what /proc shows.
//!
//! `/proc/sched_debug` holds the clocks and the policy's tunables, then each CPU in turn —
//! its counters, its policy's runqueues, and a table of every task on it. The kernel writes what
//! it owns (the clocks, the counters, each task's pid, name, state, switches and waits) and
//! the policy what it owns, each runqueue and each task's columns, in the layout of the
//! Linux it mirrors (`sched::debug_layout`). Every task has one number here, its pid, as in
//! `ps` and the traces.
//!
//! gdb runs the formatter *inside* the stopped kernel: the helper calls [`cfslab_gdb_dump`]
//! (an inferior function call, with interrupts masked), which writes text into
//! [`CFSLAB_GDB_TEXT`], and reads the text back from memory. The kernel is stopped, so
//! nothing else runs; the scheduler lock may be held by the very code gdb stopped in, so the
//! dump reads the state without taking it — and must not allocate, since the heap's lock may
//! be held too. A stop in the middle of an update (inside `pick`, say) shows it half done.
//! So nothing here allocates or takes a lock: the caller holds the scheduler, or gdb has
//! stopped the kernel. With several CPUs the helper runs the call on CPU 0 (an AP sits
//! halted, and would not run it) with gdb's scheduler-locking on: the other CPUs stay
//! stopped throughout.

use super::{SCHED, Scheduler};
use crate::task::{State, pid_of};
use core::fmt::{self, Write};
use sched::debug_layout::{SplitNs, TaskRow, field};

/// `cfslab_gdb_dump`'s first argument: what to write.
const PS: u64 = 0;
const RQ: u64 = 1;
const TRACE: u64 = 2;

/// Room for the dump; a longer one ends with a truncation mark.
const TEXT_BYTES: usize = 64 * 1024;

/// The text of the last dump, read by gdb (`CFSLAB_GDB_TEXT[..length]`).
#[unsafe(no_mangle)]
pub static mut CFSLAB_GDB_TEXT: [u8; TEXT_BYTES] = [0; TEXT_BYTES];

/// Writes every task, one per line, in pid order: what `cfslab-ps` shows (the pid as `ps`
/// and the traces show it, and as `/proc/sched_debug` does).
pub(super) fn write_ps(s: &Scheduler, out: &mut dyn Write) -> fmt::Result {
    writeln!(
        out,
        "  PID NAME             UID NICE STATE          VRUNTIME     SUM_EXEC  SWITCHES"
    )?;
    for &slot in s.by_id.values() {
        let Some(t) = s.slots[slot].as_deref() else {
            continue;
        };
        let rq = s.task_rq(t.slot);
        // gdb may have stopped the kernel in the middle of a move: the task is on no
        // runqueue for that moment (its context in the mover's hands), and is left out.
        let Some(on_rq) = rq.get(t.slot) else {
            continue;
        };
        let info = rq.policy().task_info(t.slot);
        let stats = &on_rq.stats;
        let state = match on_rq.state {
            _ if rq.idle() == t.slot => "idle",
            State::Running => "running",
            State::Runnable => "runnable",
            State::Sleeping => "sleeping",
            State::Exited => "exited",
        };
        // An idle task is pid 0, as Linux's swappers are.
        let pid = if rq.idle() == t.slot { 0 } else { pid_of(t.id) };
        write!(
            out,
            "{pid:>5} {:<15} {:>4} {:>4} {state:<8} ",
            t.name, t.uid, t.nice
        )?;
        match info {
            Some(i) if i.vruntime > 0 => write!(out, "{:>14} ", i.vruntime as i64)?,
            _ => write!(out, "{:>14} ", "-")?,
        }
        // The policy's own account of CPU time (Linux's se.sum_exec_runtime); the idle task
        // is not the policy's, so the kernel's count stands in.
        let sum_exec = info.map_or(stats.cpu_ns, |i| i.sum_exec_runtime);
        writeln!(out, "{sum_exec:>12} {:>9}", stats.switches)?;
    }
    writeln!(out, "(times in ns)")
}

/// Writes `/proc/sched_debug` with CPU `cpu`'s section alone: the policy and its tunables,
/// the CPU's counters, its policy's runqueues and its table of tasks. What `cfslab-rq CPU`
/// shows.
pub(super) fn write_rq(s: &Scheduler, cpu: usize, out: &mut dyn Write) -> fmt::Result {
    if !s.online.contains(&cpu) {
        return writeln!(
            out,
            "cfslab-rq: CPU {cpu} is not online (online: {:?})",
            s.online
        );
    }
    let now = crate::time::clock::now();
    write_header(s, now, out)?;
    write_cpu(s, cpu, now, out)
}

/// Writes the last `n` trace events (from the trace with `trace=on`, else from the
/// always-kept recent events): what `cfslab-trace N` shows.
fn write_trace(s: &Scheduler, n: usize, out: &mut dyn Write) -> fmt::Result {
    if let Some(written) = super::tracing::write_traced(n, out) {
        return written;
    }
    let mut rings = [None; bootopts::MAX_CPUS as usize];
    for &cpu in &s.online {
        rings[cpu] = Some(&s.rqs[cpu].recent);
    }
    super::tracing::write_recent(&rings, n, s.online.len(), out)
}

/// A writer into [`CFSLAB_GDB_TEXT`] that stops at its end.
struct Text {
    len: usize,
    truncated: bool,
    /// Bytes kept free at the end for the truncation mark.
    reserve: usize,
}

impl Write for Text {
    fn write_str(&mut self, piece: &str) -> fmt::Result {
        let room = TEXT_BYTES - self.reserve - self.len;
        let n = piece.len().min(room);
        // SAFETY: the kernel is stopped under gdb and this is the only code running, so no
        // one else touches the buffer; the copy stays within its bounds (n <= room).
        unsafe {
            let base = (&raw mut CFSLAB_GDB_TEXT).cast::<u8>();
            core::ptr::copy_nonoverlapping(piece.as_ptr(), base.add(self.len), n);
        }
        self.len += n;
        self.truncated |= n < piece.len();
        Ok(())
    }
}

/// gdb's entry point: writes dump `what` (0 ps, 1 rq of CPU `n`, 2 the last `n` trace events) into
/// [`CFSLAB_GDB_TEXT`] and returns its length. Called only by gdb, with every CPU stopped and
/// interrupts masked.
#[unsafe(no_mangle)]
pub extern "C" fn cfslab_gdb_dump(what: u64, n: u64) -> u64 {
    // SAFETY: gdb calls this with the kernel stopped and only the calling CPU resumed for
    // the call (scheduler-locking; see the module's docs): no other code runs concurrently, so reading the state behind the lock without taking it races
    // with nothing. Taking it could deadlock: gdb may have stopped the kernel while it held it.
    let Some(s) = (unsafe { &*SCHED.as_mut_ptr() }).as_ref() else {
        return 0;
    };
    let mut text = Text {
        len: 0,
        truncated: false,
        reserve: 32,
    };
    // The runqueues are read without their locks too, for the same reason.
    let inspecting = super::runqueue::Inspecting::start();
    let _ = match what {
        PS => write_ps(s, &mut text),
        RQ => write_rq(s, n as usize, &mut text),
        TRACE => write_trace(s, n as usize, &mut text),
        _ => writeln!(text, "cfslab_gdb_dump: unknown dump {what}"),
    };
    drop(inspecting);
    if text.truncated {
        text.reserve = 0;
        let _ = text.write_str("\n[... truncated]\n");
    }
    text.len as u64
}

// --- /proc/sched_debug -----------------------------------------------------------------

/// `/proc/sched_debug`, at time `now`: the head, then every CPU's section in CPU order.
pub(super) fn write_sched_debug(s: &Scheduler, now: u64, out: &mut dyn Write) -> fmt::Result {
    write_header(s, now, out)?;
    s.online
        .iter()
        .try_for_each(|&cpu| write_cpu(s, cpu, now, out))
}

/// The file's head: the version line (with the policy), the clocks (cfslab has one clock, which Linux's three
/// names all read here), the tick count and the policy's tunables (`sysctl_sched`).
fn write_header(s: &Scheduler, now: u64, out: &mut dyn Write) -> fmt::Result {
    // Linux names its release and build here; cfslab names its policy and era (every
    // CPU's policy instance has the same, and the same tunables).
    let policy = s.rqs[0].policy();
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

/// CPU `cpu`'s part: `cpu#N` with its counters, its policy's runqueues, then the table of
/// its tasks (Linux's `print_cpu` and `print_rq`).
fn write_cpu(s: &Scheduler, cpu: usize, now: u64, out: &mut dyn Write) -> fmt::Result {
    let rq = &s.rqs[cpu];
    let current = rq.current();
    let current_pid = if current == rq.idle() {
        0
    } else {
        s.slots[current].as_ref().map_or(0, |t| pid_of(t.id))
    };
    writeln!(out, "\ncpu#{cpu}")?;
    field(out, "nr_running", s.runnable_on(cpu))?;
    field(out, "nr_switches", rq.nr_switches())?;
    // With a balancer: when the CPU next balances (in jiffies, as 6.1), and its load
    // history as 2.6.24 printed it.
    if let Some(b) = s.cpu_balance(cpu) {
        field(out, "next_balance", b.next_balance)?;
        for (i, load) in b.cpu_load.history.iter().enumerate() {
            field(out, &alloc::format!("cpu_load[{i}]"), load)?;
        }
    }
    field(out, "curr->pid", current_pid)?;
    field(out, "clock", SplitNs::of(now))?;
    field(out, "clock_task", SplitNs::of(now))?;
    // The schedstats counters (every wake-up is local while tasks stay on their CPU).
    let stat = s.cpu_schedstat(cpu);
    field(out, "sched_count", stat.switches)?;
    field(out, "sched_goidle", stat.idle_switches)?;
    field(out, "ttwu_count", stat.wakeups)?;
    field(out, "ttwu_local", stat.wakeups)?;
    rq.policy().write_debug_runqueues(cpu, out)?;
    writeln!(out, "\nrunnable tasks:")?;
    write_tasks(s, cpu, out)
}

/// CPU `cpu`'s table: every task on its runqueue but the idle one (Linux's swapper is not
/// in its task list either), in pid order, asleep or not, as Linux 4.18+ lists them.
fn write_tasks(s: &Scheduler, cpu: usize, out: &mut dyn Write) -> fmt::Result {
    let rq = &s.rqs[cpu];
    let policy = rq.policy();
    policy.write_debug_task_header(out)?;
    for &slot in s.by_id.values() {
        let Some(t) = s.slots[slot].as_deref() else {
            continue;
        };
        if t.cpu.get() != cpu || slot == rq.idle() {
            continue;
        }
        let stats = rq.stats(slot);
        let row = TaskRow {
            running: slot == rq.current(),
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
