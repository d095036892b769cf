//! The trace in the Chrome/Perfetto JSON trace format (`{"traceEvents": [...]}`), for viewers
//! that do not read ftrace text. Converted on the host from the kernel's ftrace text, so the
//! two files always show the same events.
//!
//! Layout: process 0 holds one track per CPU (tid = the CPU's number), with one slice per
//! stretch a task ran there (named by the task); process 1 holds one thread per task (tid =
//! the trace's pid) with `running` and `runnable` slices — runnable from a wake-up, a fork
//! or a preemption until the task gets the CPU, so a `runnable` slice is that task's
//! wake-up latency — and instants for fork, exit and each move between CPUs
//! (`sched_migrate_task`, with its `orig_cpu` and `dest_cpu`).

use crate::ftrace::{self, Line};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Where a task is at the current point of the trace.
enum Since {
    Running(u64),
    Runnable(u64),
}

/// Converts ftrace text to a Perfetto-readable JSON document.
pub fn from_ftrace(trace: &str) -> String {
    let mut events = Vec::new();
    let mut names: BTreeMap<u64, String> = BTreeMap::new();
    let mut since: BTreeMap<u64, Since> = BTreeMap::new();
    // Each CPU's running task and since when.
    let mut on_cpu: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
    let mut last = 0;
    for l in ftrace::lines(trace) {
        last = l.at_us;
        names
            .entry(l.pid)
            .or_insert_with(|| task_name(l.task, l.pid));
        match l.event {
            "sched_switch" => switch(&l, &mut events, &mut names, &mut since, &mut on_cpu),
            "sched_waking" | "sched_wakeup_new" => {
                if let Some(pid) = l.field("pid").and_then(|p| p.parse().ok()) {
                    if let Some(comm) = l.field("comm") {
                        names.insert(pid, task_name(comm, pid));
                    }
                    since.entry(pid).or_insert(Since::Runnable(l.at_us));
                }
            }
            "sched_process_fork" | "sched_process_exit" => {
                events.push(format!(
                    r#"{{"name":"{}","ph":"i","s":"t","ts":{},"pid":1,"tid":{}}}"#,
                    l.event, l.at_us, l.pid
                ));
            }
            "sched_migrate_task" => {
                let field = |k| l.field(k).and_then(|v| v.parse::<u64>().ok());
                if let (Some(pid), Some(from), Some(to)) =
                    (field("pid"), field("orig_cpu"), field("dest_cpu"))
                {
                    events.push(format!(
                        r#"{{"name":"sched_migrate_task","ph":"i","s":"t","ts":{},"pid":1,"tid":{pid},"args":{{"orig_cpu":{from},"dest_cpu":{to}}}}}"#,
                        l.at_us
                    ));
                }
            }
            _ => {}
        }
    }
    // Close what is still open at the end of the trace.
    for (pid, s) in since {
        let (name, start) = match s {
            Since::Running(t) => ("running", t),
            Since::Runnable(t) => ("runnable", t),
        };
        events.push(slice(name, 1, pid, start, last));
    }
    for (&cpu, &(pid, start)) in &on_cpu {
        events.push(slice(
            &on_cpu_name(&names, pid, cpu),
            0,
            cpu as u64,
            start,
            last,
        ));
    }
    document(&events, &names, on_cpu.keys())
}

/// The JSON document: the processes' and tracks' names, then `events`.
fn document<'a>(
    events: &[String],
    names: &BTreeMap<u64, String>,
    cpus: impl Iterator<Item = &'a usize>,
) -> String {
    let mut out = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    out.push_str(r#"{"name":"process_name","ph":"M","pid":0,"args":{"name":"CPUs"}},"#);
    out.push_str(r#"{"name":"process_name","ph":"M","pid":1,"args":{"name":"cfslab tasks"}}"#);
    for cpu in cpus {
        let _ = write!(
            out,
            ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":{cpu},\"args\":{{\"name\":\"CPU {cpu}\"}}}}"
        );
    }
    for (pid, name) in names.iter().filter(|&(&pid, _)| pid != 0) {
        let _ = write!(
            out,
            ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":{pid},\"args\":{{\"name\":\"{}\"}}}}",
            escape(name)
        );
    }
    for event in events {
        out.push_str(",\n");
        out.push_str(event);
    }
    out.push_str("\n]}\n");
    out
}

fn switch(
    l: &Line,
    events: &mut Vec<String>,
    names: &mut BTreeMap<u64, String>,
    since: &mut BTreeMap<u64, Since>,
    on_cpu: &mut BTreeMap<usize, (u64, u64)>,
) {
    let (Some(next), Some(comm)) = (
        l.field("next_pid").and_then(|p| p.parse::<u64>().ok()),
        l.field("next_comm"),
    ) else {
        return;
    };
    names.insert(next, task_name(comm, next));
    let prev = l.pid;
    if let Some(Since::Running(start)) = since.remove(&prev) {
        events.push(slice("running", 1, prev, start, l.at_us));
    }
    // A task that leaves the CPU still runnable (R, R+) waits from now on. The idle tasks
    // (pid 0, one per CPU) have their CPUs' tracks only.
    if prev != 0 && matches!(l.field("prev_state"), Some("R" | "R+")) {
        since.insert(prev, Since::Runnable(l.at_us));
    }
    if let Some(Since::Runnable(start)) = since.remove(&next) {
        events.push(slice("runnable", 1, next, start, l.at_us));
    }
    if next != 0 {
        since.insert(next, Since::Running(l.at_us));
    }
    if let Some((pid, start)) = on_cpu.insert(l.cpu, (next, l.at_us)) {
        let name = on_cpu_name(names, pid, l.cpu);
        events.push(slice(&name, 0, l.cpu as u64, start, l.at_us));
    }
}

/// What a CPU's track calls the stretch task `pid` ran there: the task's name, or for the
/// idle task (pid 0 on every CPU) that CPU's own, `swapper/N`.
fn on_cpu_name(names: &BTreeMap<u64, String>, pid: u64, cpu: usize) -> String {
    match pid {
        0 => format!("swapper/{cpu}-0"),
        _ => names[&pid].clone(),
    }
}

/// How a task is named in the viewer: `comm-pid`, as ftrace's task column.
fn task_name(comm: &str, pid: u64) -> String {
    format!("{comm}-{pid}")
}

/// A complete ("X") event from `start` to `end` (µs).
fn slice(name: &str, pid: u64, tid: u64, start: u64, end: u64) -> String {
    format!(
        r#"{{"name":"{}","ph":"X","ts":{start},"dur":{},"pid":{pid},"tid":{tid}}}"#,
        escape(name),
        end.saturating_sub(start)
    )
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "# tracer: nop
            main-1       [000] d..2.     1.000000: sched_process_fork: comm=main pid=1 child_comm=hog child_pid=3
            main-1       [000] d..2.     1.000000: sched_wakeup_new: comm=hog pid=3 prio=120 target_cpu=000
            main-1       [000] d..2.     1.000010: sched_switch: prev_comm=main prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=hog next_pid=3 next_prio=120
          <idle>-0       [000] dNh2.     1.000500: sched_waking: comm=main pid=1 prio=120 target_cpu=000
             hog-3       [000] d..2.     1.000700: sched_switch: prev_comm=hog prev_pid=3 prev_prio=120 prev_state=R+ ==> next_comm=main next_pid=1 next_prio=120
";

    #[test]
    fn switches_become_cpu_and_task_slices_and_waits_become_runnable_slices() {
        let json = from_ftrace(TRACE);
        // hog ran from its first switch-in to its preemption: on the CPU track and its own.
        assert!(
            json.contains(r#"{"name":"hog-3","ph":"X","ts":1000010,"dur":690,"pid":0,"tid":0}"#),
            "{json}"
        );
        assert!(
            json.contains(r#"{"name":"running","ph":"X","ts":1000010,"dur":690,"pid":1,"tid":3}"#),
            "{json}"
        );
        // hog waited 10 µs after its fork; main waited 200 µs after its wake-up.
        assert!(
            json.contains(r#"{"name":"runnable","ph":"X","ts":1000000,"dur":10,"pid":1,"tid":3}"#),
            "{json}"
        );
        assert!(
            json.contains(r#"{"name":"runnable","ph":"X","ts":1000500,"dur":200,"pid":1,"tid":1}"#),
            "{json}"
        );
        assert!(
            json.contains(r#""tid":3,"args":{"name":"hog-3"}"#),
            "{json}"
        );
        assert!(json.contains(
            r#"{"name":"sched_process_fork","ph":"i","s":"t","ts":1000000,"pid":1,"tid":1}"#
        ));
        assert!(json.starts_with("{\"displayTimeUnit\":\"ns\",\"traceEvents\":["));
        assert!(json.trim_end().ends_with("]}"));
    }

    #[test]
    fn each_cpu_has_its_track_and_a_move_between_cpus_is_an_instant_of_the_task() {
        // CPU 1 idles until it pulls hog-3 from CPU 0 (the balancer's migration), then runs it.
        let trace = "# tracer: nop
            main-1       [000] d..2.     1.000000: sched_switch: prev_comm=main prev_pid=1 prev_prio=120 prev_state=R+ ==> next_comm=hog next_pid=3 next_prio=120
          <idle>-0       [001] d..2.     1.000100: sched_migrate_task: comm=main pid=1 prio=120 orig_cpu=0 dest_cpu=1
          <idle>-0       [001] d..2.     1.000100: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=main next_pid=1 next_prio=120
";
        let json = from_ftrace(trace);
        assert!(
            json.contains(r#""pid":0,"tid":1,"args":{"name":"CPU 1"}"#),
            "{json}"
        );
        assert!(
            json.contains(r#"{"name":"main-1","ph":"X","ts":1000100,"dur":0,"pid":0,"tid":1}"#),
            "{json}"
        );
        assert!(
            json.contains(r#"{"name":"sched_migrate_task","ph":"i","s":"t","ts":1000100,"pid":1,"tid":1,"args":{"orig_cpu":0,"dest_cpu":1}}"#),
            "{json}"
        );
        // The task waited 100 µs between its preemption on CPU 0 and its start on CPU 1.
        assert!(
            json.contains(r#"{"name":"runnable","ph":"X","ts":1000000,"dur":100,"pid":1,"tid":1}"#),
            "{json}"
        );
    }
}
