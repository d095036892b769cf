//! Looking at the scheduler: per-task statistics, the switch count, the policy's own view, and
//! the scheduling trace (started, stopped, printed).

use super::{Scheduler, debugger, trace, tracing, with_sched};
use crate::task::{TaskId, TaskStats};
use crate::time::clock;
use alloc::string::String;
use core::fmt;
use sched::Policy;

/// Events the ring keeps with `trace=on` (about 5 MB).
pub const TRACE_EVENTS: usize = 65_536;

/// Starts (or restarts, emptied) tracing into a ring of `capacity` events. Returns the
/// [`switch_count`] at that moment. A ring already there is let go first: two rings of
/// 5 MB at once would need room the heap may not have beside the initramfs.
pub fn trace_start(capacity: usize) -> u64 {
    drop(tracing::replace_trace(None));
    let cpus = with_sched(|s| s.online.len());
    let ring = trace::Trace::new(capacity, cpus);
    // Under the scheduler's lock, so that no switch comes between the count and the ring.
    with_sched(|s| {
        let none = tracing::replace_trace(Some(ring));
        debug_assert!(none.is_none(), "one trace at a time");
        s.switches()
    })
}

/// Stops tracing; returns the trace and the [`switch_count`] at that moment.
pub fn trace_stop() -> (Option<trace::Trace>, u64) {
    with_sched(|s| (tracing::replace_trace(None), s.switches()))
}

/// Prints a trace between the markers tools look for.
pub fn print_trace(trace: &trace::Trace) {
    crate::println!("--- TRACE BEGIN ---");
    crate::arch::serial::with_console(|out| trace.write_ftrace(out).ok());
    crate::println!("--- TRACE END ---");
}

/// Context switches so far, summed over every task's statistics (exited ones included).
pub fn switch_count() -> u64 {
    with_sched(|s| s.switches())
}

impl Scheduler {
    /// Context switches on every CPU.
    pub(super) fn switches(&self) -> u64 {
        self.rqs.iter().map(|rq| rq.nr_switches()).sum()
    }
}

/// Prints the tasks (as gdb's `cfslab-ps`) and `/proc/sched_debug` (as `cfslab-rq`), each
/// line tagged `[DEBUG]` as `log=debug` output is. The lab
/// prints it at the end of each scenario's window, while its tasks are still there.
pub fn print_sched_debug() {
    /// Puts `[DEBUG] ` at the start of every line written through it.
    struct Tagged<'a> {
        out: &'a mut dyn fmt::Write,
        at_line_start: bool,
    }
    impl fmt::Write for Tagged<'_> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            for piece in s.split_inclusive('\n') {
                if self.at_line_start {
                    self.out.write_str("[DEBUG] ")?;
                }
                self.out.write_str(piece)?;
                self.at_line_start = piece.ends_with('\n');
            }
            Ok(())
        }
    }
    with_sched(|s| {
        crate::arch::serial::with_console(|out| {
            let mut tagged = Tagged {
                out,
                at_line_start: true,
            };
            let _ = debugger::write_ps(s, &mut tagged);
            let _ = debugger::write_sched_debug(s, clock::now(), &mut tagged);
        })
    });
}

/// Looks into the policy (for reports, tests and debugging).
pub fn with_policy<R>(f: impl FnOnce(&dyn Policy) -> R) -> R {
    with_sched(|s| f(s.this_rq().policy()))
}

/// The running task's id, without waiting for the scheduler lock (for fault reports, which
/// may come while it is held).
pub fn current_if_unlocked() -> Option<TaskId> {
    let sched = super::SCHED.try_lock()?;
    let s = sched.as_ref()?;
    // An AP's idle task has no slot (`table::idle_slot_of`): no id to report.
    s.slots
        .get(crate::percpu::this_cpu().current_slot().index())?
        .as_ref()
        .map(|t| t.id)
}

/// CPU time of the running task so far (no allocation, and only this CPU's runqueue's lock:
/// cheap enough for a measuring loop, and the same cost whatever the number of CPUs).
pub fn current_cpu_ns() -> u64 {
    let rq = super::runqueue::lock_this_cpu();
    let rq = rq.as_ref().expect("a runqueue");
    rq.stats(rq.current()).cpu_ns_at(clock::now(), true)
}

/// CPU time CPU 0's idle task has had so far: CPU 0's idle time (what the lab and
/// `/proc/stat`'s `cpu0` line count).
pub fn idle_cpu_ns() -> u64 {
    idle_ns_by_cpu()[0].1
}

/// Each online CPU's idle time so far (its idle task's CPU time; an AP's idle task counts
/// from the boot, as it has idled since), by CPU number.
pub fn idle_ns_by_cpu() -> alloc::vec::Vec<(usize, u64)> {
    with_sched(|s| {
        let now = clock::now();
        let idle_of = |rq: &sched::Rq<dyn sched::Policy + Send>| {
            let running = rq.current() == rq.idle();
            rq.stats(rq.idle()).cpu_ns_at(now, running).min(now)
        };
        s.online
            .iter()
            .map(|&cpu| (cpu, idle_of(&s.rqs[cpu])))
            .collect()
    })
}

/// A copy of a task's statistics, name, uid and nice.
pub fn task_stats(id: TaskId) -> Option<(String, u32, i8, TaskStats)> {
    with_sched(|s| {
        let now = clock::now();
        let t = s.task_by_id(id)?;
        let (name, uid, nice, slot) = (t.name.clone(), t.uid, t.nice, t.slot);
        let rq = s.task_rq(slot);
        let running = rq.current() == slot;
        let mut stats = *rq.stats(slot);
        stats.cpu_ns = stats.cpu_ns_at(now, running);
        Some((name, uid, nice, stats))
    })
}
