//! The shell's builtins. Those that start a program — `nice -n N`, `su UID`, `time`, which
//! may be combined (`time nice -n 5 hog`) — set it up in the child before `execve`
//! (`launch`); the others act in the shell itself. Each bad argument is one error line.

use crate::launch::Setup;
use crate::parse::Command;
use crate::session::Session;
use alloc::format;
use alloc::string::String;
use rt::process::{self, Usage, Which};

/// The help text: every builtin and the syntax.
const HELP: &str = "\
commands: any program in $PATH (default /bin), e.g. hog, sleeper 100ms, lat3 1000000
  CMD &              run in the background;  CMD ; CMD   one after another
  CMD > FILE         its output to FILE
  jobs               the background jobs;  wait [PID|%N];  fg [PID|%N]
  kill [-9|-N] PID|%N...   send a signal (default 15, SIGTERM)
  nice [-n N] CMD    run CMD at nice N (default 10);  renice N PID   change a nice value
  su UID CMD         run CMD as uid UID (root only)
  time CMD           run CMD, then its real, user and sys times
  echo WORDS;  sleep SECONDS;  help;  exit [STATUS]
the scheduler live: cat /proc/sched_debug, /proc/PID/sched, /proc/sys/kernel/sched_*;
  per-uid groups (/sys/kernel/uids/UID/cpu_share) need the boot option group=uid
";

/// Runs `command` if it is a builtin: its status, or why it failed (the caller prints one
/// line). `None` if it is not a builtin.
pub fn run(session: &mut Session, command: &Command) -> Option<Result<i32, String>> {
    let words = &command.words;
    let args = &words[1..];
    let result = match words[0].as_str() {
        "help" => emit(command, HELP),
        "echo" => emit(command, &format!("{}\n", args.join(" "))),
        "sleep" => sleep(args),
        "jobs" => {
            let list = session.jobs.list();
            emit(command, &list)
        }
        "wait" => match args {
            [] => session.jobs.wait(None).map(|()| 0),
            [spec] => session
                .jobs
                .pid_of(spec)
                .and_then(|pid| session.jobs.wait(Some(pid)))
                .map(|()| 0),
            _ => Err("wait: one job at most".into()),
        },
        "fg" => fg(session, args),
        "kill" => kill(session, args),
        "renice" => renice(args),
        "exit" => match args {
            [] => {
                session.exiting = Some(session.status);
                Ok(session.status)
            }
            [n] => number(n, "exit", 0..=255).map(|status| {
                session.exiting = Some(status as i32);
                status as i32
            }),
            _ => Err("exit: one status at most".into()),
        },
        "nice" | "su" | "time" => wrapped(session, command),
        _ => return None,
    };
    Some(result)
}

/// `nice`, `su` and `time` in front of a command, in any combination.
fn wrapped(session: &mut Session, command: &Command) -> Result<i32, String> {
    let mut setup = Setup::default();
    let mut timed = false;
    let mut rest: &[String] = &command.words;
    loop {
        match rest.first().map(String::as_str) {
            Some("time") => {
                timed = true;
                rest = &rest[1..];
            }
            Some("nice") => match rest.get(1).map(String::as_str) {
                Some("-n") => {
                    let n = rest.get(2).ok_or("nice: -n needs a number")?;
                    setup.nice = Some(number(n, "nice", -20..=19)? as i32);
                    rest = &rest[3..];
                }
                _ => {
                    // coreutils' nice adds 10 without -n.
                    setup.nice = Some(10);
                    rest = &rest[1..];
                }
            },
            Some("su") => {
                let uid = rest.get(1).ok_or("su: usage: su UID CMD")?;
                let uid = number(uid, "su", 0..=65_535)? as u32;
                if process::getuid() != 0 {
                    return Err("su: only root may run a command as another uid".into());
                }
                setup.uid = Some(uid);
                rest = &rest[2..];
            }
            _ => break,
        }
    }
    if rest.is_empty() {
        return Err(format!("{}: which command?", command.words[0]));
    }
    let inner = Command {
        words: rest.to_vec(),
        output: command.output.clone(),
        background: command.background,
    };
    if setup.nice.is_none() && setup.uid.is_none() && !command.background {
        let started = rt::time::now_ns();
        if let Some(result) = run(session, &inner) {
            // A builtin, timed in the shell itself.
            print_times(rt::time::now_ns() - started, Usage::default());
            return result;
        }
    }
    Ok(session.start(rest, &inner, setup, timed))
}

/// `time`'s three lines, on standard error as bash prints them.
pub fn print_times(real_ns: u64, usage: Usage) {
    let line = |name: &str, ns: u64| {
        let ms = ns / 1_000_000;
        format!(
            "{name}\t{}m{}.{:03}s",
            ms / 60_000,
            ms / 1_000 % 60,
            ms % 1_000
        )
    };
    rt::eprintln!(
        "\n{}\n{}\n{}",
        line("real", real_ns),
        line("user", usage.user_ns),
        line("sys", usage.system_ns)
    );
}

/// `fg [PID|%N]`: waits for a background job as if it had been started in the foreground.
fn fg(session: &mut Session, args: &[String]) -> Result<i32, String> {
    let pid = match args {
        [] => session.jobs.latest().ok_or("fg: no background job")?,
        [spec] => session.jobs.pid_of(spec)?,
        _ => return Err("fg: one job at most".into()),
    };
    let job = session
        .jobs
        .take(pid)
        .ok_or_else(|| format!("fg: {pid}: not a job of this shell"))?;
    rt::println!("{}", job.command);
    Ok(session.wait_foreground(pid, None))
}

/// `kill [-SIGNAL] PID|%N...`
fn kill(session: &mut Session, args: &[String]) -> Result<i32, String> {
    let (signal, targets) = match args.first().and_then(|a| a.strip_prefix('-')) {
        Some(signal) => (number(signal, "kill", 1..=64)? as i32, &args[1..]),
        None => (15, args),
    };
    if targets.is_empty() {
        return Err("kill: usage: kill [-9] PID|%N...".into());
    }
    let mut status = 0;
    for spec in targets {
        let pid = session
            .jobs
            .pid_of(spec)
            .map_err(|e| format!("kill: {e}"))?;
        if let Err(e) = process::kill(pid, signal) {
            rt::eprintln!("sh: kill: {pid}: {e}");
            status = 1;
        }
    }
    Ok(status)
}

/// `renice N PID`: sets a process's nice value (Linux's rules: only root may lower one, or
/// change another uid's process).
fn renice(args: &[String]) -> Result<i32, String> {
    let [nice, pid] = args else {
        return Err("renice: usage: renice N PID".into());
    };
    let nice = number(nice, "renice", -20..=19)? as i32;
    let pid = number(pid, "renice", 1..=i32::MAX as i64)? as i32;
    process::setpriority(Which::Process, pid, nice)
        .map(|()| 0)
        .map_err(|e| format!("renice: {pid}: {e}"))
}

/// `sleep SECONDS` (a decimal: `0.5`).
fn sleep(args: &[String]) -> Result<i32, String> {
    let [seconds] = args else {
        return Err("sleep: usage: sleep SECONDS".into());
    };
    let (whole, fraction) = seconds.split_once('.').unwrap_or((seconds, ""));
    let bad = || format!("sleep: '{seconds}' is not a number of seconds");
    if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let whole = number(whole, "sleep", 0..=86_400).map_err(|_| bad())? as u64;
    let nanos: u64 = format!("{fraction:0<9}").parse().map_err(|_| bad())?;
    let _ = rt::time::sleep_ns(whole * 1_000_000_000 + nanos);
    Ok(0)
}

/// `text` on standard output, or in the command's `> FILE`.
fn emit(command: &Command, text: &str) -> Result<i32, String> {
    let fd = match &command.output {
        Some(file) => rt::fs::create(file).map_err(|e| format!("{file}: {e}"))?,
        None => rt::io::STDOUT,
    };
    let written = rt::io::write_all(fd, text.as_bytes());
    if command.output.is_some() {
        let _ = rt::io::close(fd);
    }
    written.map(|()| 0).map_err(|e| format!("write: {e}"))
}

/// `text` as a whole number in `range`, or the error line naming `what`.
fn number(text: &str, what: &str, range: core::ops::RangeInclusive<i64>) -> Result<i64, String> {
    text.parse::<i64>()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| {
            format!(
                "{what}: '{text}' is not a number from {} to {}",
                range.start(),
                range.end()
            )
        })
}
