//! Processes as Linux's `/proc` describes them, for `ps` and `top`: the files and fields
//! Linux's own `ps` reads, so that both programs run the same on the host's Linux and on
//! cfslab, whose kernel writes those files in Linux's formats (`kernel/src/user/fs/proc.rs`):
//!
//! | field | from |
//! |---|---|
//! | pid, ppid, state, nice, name, CPU ticks, start, CPU | `/proc/PID/stat` (utime + stime and starttime in USER_HZ = 100 ticks a second; the CPU it is on, field 39, Linux top's `P`) |
//! | uid | `/proc/PID/status`, its `Uid:` line |
//! | vruntime, sum_exec (ms), switches | `/proc/PID/sched`: `se.vruntime`, `se.sum_exec_runtime`, `nr_switches` |
//! | wait (ms) | `/proc/PID/sched`: `wait_sum` (Linux shows it with schedstats on) |
//!
//! A process that ends while it is read is left out.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// USER_HZ: the unit of the CPU and start times in `/proc/PID/stat` on every Linux.
pub const USER_HZ: f64 = 100.0;

/// One process, as read.
pub struct Process {
    pub pid: u32,
    pub ppid: String,
    pub uid: String,
    pub nice: String,
    pub state: String,
    /// The CPU whose runqueue holds it (Linux's `top` calls the column `P`).
    pub cpu: String,
    pub name: String,
    /// CPU time so far (user and system), in seconds.
    pub cpu_s: f64,
    /// When it started, in seconds since boot.
    pub start_s: f64,
    pub vruntime_ms: Option<f64>,
    pub sum_exec_ms: Option<f64>,
    pub switches: Option<f64>,
    pub wait_ms: Option<f64>,
}

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
        (k == key || k.ends_with(&format!(".{key}")))
            .then(|| v.trim().parse().ok())
            .flatten()
    })
}

/// Seconds since boot (`/proc/uptime`).
pub fn uptime_s() -> f64 {
    text("/proc/uptime")
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// Process `pid`, or `None` if it went away.
pub fn read(pid: u32) -> Option<Process> {
    let stat = text(&format!("/proc/{pid}/stat"))?;
    // The name is in parentheses and may hold blanks: the fields start after the last ')'.
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    // After the name: state (field 3), ppid (4), utime (14), stime (15), nice (19),
    // starttime (22), processor (39); fields[0] is field 3.
    let field = |n: usize| fields.get(n - 3).copied().unwrap_or("0");
    let ticks = |n: usize| field(n).parse::<f64>().unwrap_or(0.0);
    let status = text(&format!("/proc/{pid}/status")).unwrap_or_default();
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or("?");
    let sched = text(&format!("/proc/{pid}/sched")).unwrap_or_default();
    Some(Process {
        pid,
        ppid: field(4).into(),
        uid: uid.into(),
        nice: field(19).into(),
        state: field(3).into(),
        cpu: field(39).into(),
        name: stat[open + 1..close].into(),
        cpu_s: (ticks(14) + ticks(15)) / USER_HZ,
        start_s: ticks(22) / USER_HZ,
        vruntime_ms: sched_value(&sched, "vruntime"),
        sum_exec_ms: sched_value(&sched, "sum_exec_runtime"),
        switches: sched_value(&sched, "nr_switches"),
        wait_ms: sched_value(&sched, "wait_sum"),
    })
}

/// Every process, by pid.
pub fn all() -> Result<Vec<Process>, rt::Errno> {
    let mut pids: Vec<u32> = rt::fs::list_dir("/proc")?
        .iter()
        .filter_map(|n| n.parse().ok())
        .collect();
    pids.sort_unstable();
    Ok(pids.into_iter().filter_map(read).collect())
}

/// The table's header, then a line per process with `cpu_percent` (of the CPU, over
/// whatever span the caller chose) for its %CPU column.
pub fn table(processes: &[Process], cpu_percent: impl Fn(&Process) -> f64) -> String {
    let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    let mut out = String::from(
        "   PID   PPID   UID  NI S  P  %CPU VRUNTIME(ms) SUM_EXEC(ms) SWITCHES  WAIT(ms) CMD\n",
    );
    for p in processes {
        out += &format!(
            "{:>6} {:>6} {:>5} {:>3} {} {:>2} {:>5.1} {:>12} {:>12} {:>8} {:>9} {}\n",
            p.pid,
            p.ppid,
            p.uid,
            p.nice,
            p.state,
            p.cpu,
            cpu_percent(p),
            ms(p.vruntime_ms),
            ms(p.sum_exec_ms),
            p.switches.map_or("-".into(), |n| format!("{n}")),
            ms(p.wait_ms),
            p.name
        );
    }
    out
}
