//! The `tasks=` option of `run=custom`: a comma list of task specs, each
//! `KIND[:ARG][@UID][*COUNT][%NICE]`, e.g. `sleeper:100ms@1,hog@2*2` or `waker:10ms,makej:10`.
//!
//! | kind | ARG | what it runs (seeds/README.md) |
//! |---|---|---|
//! | `sleeper` | sleep period, default `100ms` | seed 000's sched.py |
//! | `hog` | — | a CPU hog |
//! | `lat3` | spin length, default `1s` | seed 002's lat3 |
//! | `waker` | timer period, default `10ms` | seed 003's wakeup-latency |
//! | `makej` | number of jobs, default `10`; `N/io`: jobs sleep on I/O | seed 003's make -jN |
//!
//! UID defaults to 1 (an ordinary user), COUNT to 1, NICE to 0.

use crate::error::{OptionError, echo};
use crate::parse::{parse_duration_value, parse_u64};
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::{self, Write};

/// What a custom task runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    Sleeper,
    Hog,
    Lat3,
    Waker,
    Makej,
}

impl TaskKind {
    /// Every kind with its name.
    pub const ALL: [(&'static str, TaskKind); 5] = [
        ("sleeper", TaskKind::Sleeper),
        ("hog", TaskKind::Hog),
        ("lat3", TaskKind::Lat3),
        ("waker", TaskKind::Waker),
        ("makej", TaskKind::Makej),
    ];

    /// The kind's name.
    pub fn name(self) -> &'static str {
        TaskKind::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("?", |(n, _)| n)
    }
}

/// One `tasks=` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSpec {
    pub kind: TaskKind,
    /// A duration in ns (sleeper, lat3, waker) or a job count (makej); 0 for a hog.
    pub arg: u64,
    pub uid: u32,
    pub count: u32,
    pub nice: i8,
    /// makej only (`makej:N/io`): the jobs sleep on I/O between bursts of CPU, as a real
    /// compile does (pipes between cpp, cc1 and as; disk reads).
    pub io: bool,
}

const MAX_COUNT: u64 = 64;
const MAX_TASKS: u32 = 256;
const VALID: &str = "KIND[:ARG][@UID][*COUNT][%NICE] with KIND sleeper, hog, lat3, waker or makej";

impl TaskSpec {
    /// The default ARG of `kind`.
    fn default_arg(kind: TaskKind) -> u64 {
        match kind {
            TaskKind::Sleeper => 100_000_000,
            TaskKind::Hog => 0,
            TaskKind::Lat3 => 1_000_000_000,
            TaskKind::Waker => 10_000_000,
            TaskKind::Makej => 10,
        }
    }
}

/// Linux's nice range.
const NICE_RANGE: core::ops::RangeInclusive<i64> = -20..=19;

/// A nice value, `-20` to `19`: an optional sign, then digits. The magnitude is range-checked
/// before the sign is applied, so no number of digits can overflow or wrap into range.
fn parse_nice(value: &str) -> Option<i8> {
    let (negative, digits) = match value.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, value.strip_prefix('+').unwrap_or(value)),
    };
    let magnitude = i64::try_from(parse_u64(digits)?)
        .ok()
        .filter(|&n| n <= 20)?;
    let nice = if negative { -magnitude } else { magnitude };
    NICE_RANGE.contains(&nice).then_some(nice as i8)
}

/// Splits `text` at the first of `markers`: (head, rest starting at the marker).
fn split_at_marker<'a>(text: &'a str, markers: &[char]) -> (&'a str, &'a str) {
    let at = text.find(|c| markers.contains(&c)).unwrap_or(text.len());
    text.split_at(at)
}

/// Parses one spec.
fn parse_spec(spec: &str) -> Result<TaskSpec, OptionError> {
    let bad =
        |why: &str| OptionError::new("tasks", alloc::format!("'{}' {why}", echo(spec)), VALID);
    let (kind, mut rest) = split_at_marker(spec, &[':', '@', '*', '%']);
    let kind = TaskKind::ALL
        .iter()
        .find(|(n, _)| *n == kind)
        .map(|(_, k)| *k)
        .ok_or_else(|| bad("has an unknown kind"))?;
    let mut task = TaskSpec {
        kind,
        arg: TaskSpec::default_arg(kind),
        uid: 1,
        count: 1,
        nice: 0,
        io: false,
    };
    // Each part may appear once, in this order.
    for (marker, part) in [(':', "ARG"), ('@', "UID"), ('*', "COUNT"), ('%', "NICE")] {
        let Some(after) = rest.strip_prefix(marker) else {
            continue;
        };
        let (value, tail) = split_at_marker(after, &[':', '@', '*', '%']);
        rest = tail;
        let bad_part = || bad(&alloc::format!("has a bad {part} '{}'", echo(value)));
        match marker {
            ':' => {
                task.arg = match kind {
                    TaskKind::Hog => return Err(bad("gives an ARG to a hog, which takes none")),
                    TaskKind::Makej => {
                        let (jobs, io) = match value.split_once('/') {
                            Some((jobs, "io")) => (jobs, true),
                            Some(_) => return Err(bad_part()),
                            None => (value, false),
                        };
                        task.io = io;
                        parse_u64(jobs)
                            .filter(|n| (1..=MAX_COUNT).contains(n))
                            .ok_or_else(bad_part)?
                    }
                    _ => parse_duration_value(value)
                        .filter(|&ns| (100_000..=60_000_000_000).contains(&ns))
                        .ok_or_else(bad_part)?,
                }
            }
            '@' => {
                task.uid = parse_u64(value)
                    .filter(|&u| u <= 65_535)
                    .ok_or_else(bad_part)? as u32
            }
            '*' => {
                task.count = parse_u64(value)
                    .filter(|n| (1..=MAX_COUNT).contains(n))
                    .ok_or_else(bad_part)? as u32
            }
            _ => {
                task.nice = parse_nice(value).ok_or_else(bad_part)?;
            }
        }
    }
    if !rest.is_empty() {
        return Err(bad("has its parts out of order or repeated"));
    }
    Ok(task)
}

/// Parses the whole `tasks=` value.
pub fn parse(value: &str) -> Result<Vec<TaskSpec>, OptionError> {
    let mut tasks = Vec::new();
    for spec in value.split(',') {
        if spec.is_empty() {
            return Err(OptionError::new(
                "tasks",
                "empty item in the comma list",
                VALID,
            ));
        }
        tasks.push(parse_spec(spec)?);
    }
    let total: u32 = tasks.iter().map(|t| t.count).sum();
    if total > MAX_TASKS {
        return Err(OptionError::new(
            "tasks",
            alloc::format!("{total} tasks in all"),
            alloc::format!("at most {MAX_TASKS} tasks"),
        ));
    }
    Ok(tasks)
}

impl fmt::Display for TaskSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.name())?;
        match self.kind {
            TaskKind::Hog => {}
            TaskKind::Makej => {
                write!(f, ":{}", self.arg)?;
                if self.io {
                    f.write_str("/io")?;
                }
            }
            _ => {
                f.write_char(':')?;
                crate::write_duration(f, self.arg)?;
            }
        }
        write!(f, "@{}", self.uid)?;
        if self.count != 1 {
            write!(f, "*{}", self.count)?;
        }
        if self.nice != 0 {
            write!(f, "%{}", self.nice)?;
        }
        Ok(())
    }
}

/// The canonical `tasks=` value.
pub fn to_string(tasks: &[TaskSpec]) -> String {
    let mut out = String::new();
    for (i, t) in tasks.iter().enumerate() {
        let _ = write!(out, "{}{t}", if i == 0 { "" } else { "," });
    }
    out
}
