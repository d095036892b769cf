//! Each CPU's runqueue length over time, read back from the kernel's ftrace text: what the
//! Wasted Cores pictures of kernel runs show (`crate::heatmap`), as the simulator records
//! it directly.
//!
//! A task counts on one CPU from the event that makes it runnable there — its wake-up
//! (`sched_waking`'s `target_cpu`), its first queueing (`sched_wakeup_new`), a switch to it
//! — until a switch away leaves it sleeping (`prev_state` other than `R`/`R+`) or it exits;
//! `sched_migrate_task` moves it from `orig_cpu` to `dest_cpu` meanwhile. The running task
//! counts, as in the paper's figures; the idle tasks (pid 0) do not.

use crate::ftrace;
use std::collections::BTreeMap;

/// The runqueue lengths of CPUs `0..cpus`, sampled every `every_us` from the trace's first
/// event to its last.
pub fn from_ftrace(trace: &str, cpus: usize, every_us: u64) -> Vec<Vec<u8>> {
    let every_us = every_us.max(1);
    let mut runnable_on: BTreeMap<u64, usize> = BTreeMap::new();
    let mut samples = Vec::new();
    let mut next_sample = None;
    for l in ftrace::lines(trace) {
        let mut at = *next_sample.get_or_insert(l.at_us);
        while at < l.at_us {
            samples.push(lengths(&runnable_on, cpus));
            at += every_us;
        }
        next_sample = Some(at);
        let number = |key| l.field(key).and_then(|v| v.trim().parse::<u64>().ok());
        match l.event {
            "sched_waking" | "sched_wakeup_new" => {
                if let (Some(pid), Some(cpu)) = (number("pid"), number("target_cpu")) {
                    runnable_on.insert(pid, cpu as usize);
                }
            }
            "sched_migrate_task" => {
                if let (Some(pid), Some(to)) = (number("pid"), number("dest_cpu"))
                    && let Some(cpu) = runnable_on.get_mut(&pid)
                {
                    *cpu = to as usize;
                }
            }
            "sched_switch" => {
                if !matches!(l.field("prev_state"), Some("R" | "R+")) {
                    runnable_on.remove(&l.pid);
                }
                if let Some(next) = number("next_pid") {
                    runnable_on.insert(next, l.cpu);
                }
            }
            "sched_process_exit" => {
                if let Some(pid) = number("pid") {
                    runnable_on.remove(&pid);
                }
            }
            _ => {}
        }
        runnable_on.remove(&0);
    }
    samples
}

/// Each CPU's count of the runnable tasks on it.
fn lengths(runnable_on: &BTreeMap<u64, usize>, cpus: usize) -> Vec<u8> {
    let mut out = vec![0u8; cpus];
    for &cpu in runnable_on.values() {
        if let Some(n) = out.get_mut(cpu) {
            *n = n.saturating_add(1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn wake_ups_switches_and_migrations_make_each_cpus_length() {
        // At 1.000000 two tasks are queued on CPU 0 (main runs, hog waits); at 1.000100
        // hog moves to CPU 1 and runs there; at 1.000200 main sleeps.
        let trace = "# tracer: nop
            main-1       [000] d..2.     1.000000: sched_wakeup_new: comm=hog pid=3 prio=120 target_cpu=000
            main-1       [000] d..2.     1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=main next_pid=1 next_prio=120
          <idle>-0       [001] d..2.     1.000100: sched_migrate_task: comm=hog pid=3 prio=120 orig_cpu=0 dest_cpu=1
          <idle>-0       [001] d..2.     1.000100: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=hog next_pid=3 next_prio=120
            main-1       [000] d..2.     1.000200: sched_switch: prev_comm=main prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
             hog-3       [001] d..2.     1.000300: sched_process_exit: comm=hog pid=3 prio=120
";
        let samples = super::from_ftrace(trace, 2, 50);
        assert_eq!(
            samples,
            [
                vec![2, 0],
                vec![2, 0],
                vec![1, 1],
                vec![1, 1],
                vec![0, 1],
                vec![0, 1]
            ]
        );
    }
}
