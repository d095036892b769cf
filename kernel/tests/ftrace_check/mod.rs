//! The checker the multitasking test kernel holds trace lines to: Linux 6.x's ftrace text,
//! field by field (a module of `tests/multitasking.rs`, not a test kernel of its own).

use alloc::vec::Vec;

/// Checks one event line against Linux 6.x's ftrace text, field by field: the task as
/// `%16s-%-7d`, the CPU as `[%03d]`, five latency flags, the time as `%5lu.%06lu`, then the
/// event with the fields of its `TP_printk` (include/trace/events/sched.h). Returns
/// (timestamp in µs, event name, prev_state for a switch).
pub fn parse_ftrace_line(line: &str) -> (u64, &str, Option<&str>) {
    let cpu_at = line
        .find(" [")
        .unwrap_or_else(|| panic!("no CPU field in {line:?}"));
    let (task, rest) = line.split_at(cpu_at);
    let (comm, pid) = task.trim_end().rsplit_once('-').expect("TASK-PID");
    assert!(pid.parse::<u64>().is_ok(), "pid in {line:?}");
    // A comm of up to 16 characters is right-aligned in 16 columns, the pid left-aligned in 7.
    if comm.trim_start().len() <= 16 && pid.len() <= 7 {
        assert_eq!(task.len(), 16 + 1 + 7, "task column of {line:?}");
        assert_eq!(comm.len(), 16, "comm column of {line:?}");
    }
    let cpu = &rest[2..5];
    assert!(
        cpu.bytes().all(|b| b.is_ascii_digit()) && &rest[5..7] == "] ",
        "{line:?}"
    );
    let flags = &rest[7..12];
    assert!(
        flags
            .chars()
            .zip(["d.", "Nn.", "hHs.", "0123456789.", "0123456789."])
            .all(|(c, allowed)| allowed.contains(c)),
        "flags {flags:?} in {line:?}"
    );
    let (stamp, event_and_args) = rest[12..].split_once(": ").expect("TIMESTAMP: ");
    assert!(stamp.len() >= 1 + 5 + 1 + 6, "timestamp column of {line:?}");
    let (secs, usecs) = stamp.trim_start().split_once('.').unwrap();
    assert_eq!(usecs.len(), 6, "{line:?}");
    let at = secs.parse::<u64>().unwrap() * 1_000_000 + usecs.parse::<u64>().unwrap();
    let (event, args) = event_and_args.split_once(": ").unwrap();
    let keys: Vec<&str> = args
        .split(' ')
        .filter(|token| *token != "==>")
        .filter_map(|kv| kv.split_once('=').map(|(k, _)| k))
        .collect();
    let mut prev_state = None;
    match event {
        "sched_switch" => {
            assert_eq!(
                keys,
                [
                    "prev_comm",
                    "prev_pid",
                    "prev_prio",
                    "prev_state",
                    "next_comm",
                    "next_pid",
                    "next_prio"
                ]
            );
            assert!(args.contains(" ==> "), "{line:?}");
            let state = args.split("prev_state=").nth(1).unwrap().split(' ').next();
            assert!(matches!(state, Some("R" | "R+" | "S" | "X")), "{line:?}");
            // The line's task is the task leaving the CPU (`<idle>` is `swapper/N`).
            let prev_pid = args.split("prev_pid=").nth(1).unwrap().split(' ').next();
            assert_eq!(prev_pid, Some(pid), "{line:?}");
            prev_state = state;
        }
        "sched_waking" | "sched_wakeup_new" => {
            assert_eq!(keys, ["comm", "pid", "prio", "target_cpu"])
        }
        "sched_process_fork" => assert_eq!(keys, ["comm", "pid", "child_comm", "child_pid"]),
        "sched_process_exit" => assert_eq!(keys, ["comm", "pid", "prio"]),
        other => panic!("unexpected event {other}"),
    }
    (at, event, prev_state)
}
