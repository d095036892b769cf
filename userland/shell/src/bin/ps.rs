//! `ps`: every process, one line each, read from Linux's `/proc` files as Linux's `ps` reads
//! them — so it runs the same on the host's Linux and on cfslab, whose kernel writes those
//! files in Linux's formats:
//!
//! | column | from |
//! |---|---|
//! | PID, PPID, S (state), NI (nice) | `/proc/PID/stat` |
//! | UID | `/proc/PID/status`, its `Uid:` line |
//! | %CPU | `/proc/PID/stat`'s utime + stime (in USER_HZ = 100 ticks a second) over the time since its start (`/proc/uptime`) |
//! | VRUNTIME, SUM_EXEC (ms) | `/proc/PID/sched`: `se.vruntime`, `se.sum_exec_runtime` |
//! | SWITCHES | `/proc/PID/sched`: `nr_switches` |
//! | WAIT (ms) | `/proc/PID/sched`: `wait_sum` (Linux shows it with schedstats on; `-` otherwise) |
//! | CMD | `/proc/PID/stat`'s name |
//!
//! A process that ends while it is read is skipped.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;

rt::main!(run);

/// USER_HZ: the unit of utime and stime in `/proc/PID/stat` on every Linux.
const USER_HZ: f64 = 100.0;

fn text(path: &str) -> Option<String> {
    rt::fs::read_file(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// A `key : value` line of `/proc/PID/sched` (its key may carry a prefix: `stats.wait_sum`).
fn sched_value(sched: &str, key: &str) -> Option<f64> {
    sched.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        let k = k.trim();
        (k == key || k.ends_with(&alloc::format!(".{key}")))
            .then(|| v.trim().parse().ok())
            .flatten()
    })
}

fn ms(value: Option<f64>) -> String {
    value.map_or("-".into(), |v| alloc::format!("{v:.1}"))
}

/// One process's line, or `None` if it went away.
fn line(pid: &str, uptime: f64) -> Option<String> {
    let stat = text(&alloc::format!("/proc/{pid}/stat"))?;
    // The name is in parentheses and may hold blanks: the fields start after the last ')'.
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = &stat[open + 1..close];
    let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    // After the name: state (3), ppid (4), ..., utime (14), stime (15), ..., nice (19), ...,
    // starttime (22); fields[0] is field 3.
    let field = |n: usize| fields.get(n - 3).copied().unwrap_or("0");
    let ticks = |n: usize| field(n).parse::<f64>().unwrap_or(0.0);
    let cpu_s = (ticks(14) + ticks(15)) / USER_HZ;
    let alive_s = uptime - ticks(22) / USER_HZ;
    let cpu = if alive_s > 0.0 {
        100.0 * cpu_s / alive_s
    } else {
        0.0
    };
    let status = text(&alloc::format!("/proc/{pid}/status")).unwrap_or_default();
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or("?");
    let sched = text(&alloc::format!("/proc/{pid}/sched")).unwrap_or_default();
    Some(alloc::format!(
        "{pid:>6} {:>6} {uid:>5} {:>3} {} {cpu:>5.1} {:>12} {:>10} {:>8} {:>9} {name}",
        field(4),
        field(19),
        field(3),
        ms(sched_value(&sched, "vruntime")),
        ms(sched_value(&sched, "sum_exec_runtime")),
        sched_value(&sched, "nr_switches").map_or("-".into(), |n| alloc::format!("{n}")),
        ms(sched_value(&sched, "wait_sum")),
    ))
}

fn run(_args: &rt::Args) -> i32 {
    let uptime = text("/proc/uptime")
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    let mut pids: Vec<u32> = match rt::fs::list_dir("/proc") {
        Ok(names) => names.iter().filter_map(|n| n.parse().ok()).collect(),
        Err(e) => {
            rt::eprintln!("ps: /proc: {e}");
            return 1;
        }
    };
    pids.sort_unstable();
    let mut out = String::from(
        "   PID   PPID   UID  NI S  %CPU VRUNTIME(ms) SUM_EXEC(ms) SWITCHES  WAIT(ms) CMD\n",
    );
    for pid in pids {
        if let Some(l) = line(&alloc::format!("{pid}"), uptime) {
            out.push_str(&l);
            out.push('\n');
        }
    }
    let _ = rt::io::write_all(rt::io::STDOUT, out.as_bytes());
    0
}
