//! The pieces `/proc/sched_debug` is written with (Linux's kernel/sched/debug.c), shared by
//! every policy and by the kernel, which writes the file's header and its CPU section: the
//! way a time is printed, a section's `  .name : value` line, and what the kernel knows of a
//! task that the table of tasks shows beside the policy's own values.
//!
//! Each policy writes its runqueues and its columns of the table in the layout of the Linux
//! it mirrors: the CFS eras in 6.1's (the last CFS), EEVDF in 6.12's (whose table names the
//! eligibility, deadline and slice), O(1) in a layout of its own, since 2.6.11 had no such
//! file. Nothing here allocates: gdb's `cfslab-rq` writes the same text from a stopped
//! kernel whose heap lock may be held.

use core::fmt;

/// Nanoseconds as Linux's debug files print them (`SPLIT_NS`): milliseconds, a point and six
/// decimals. Linux splits a negative value into a negative millisecond part and a positive
/// remainder, so a value between −1 ms and 0 loses its sign (−0.5 ms prints as `0.500000`);
/// this prints what Linux prints, quirk included, so that tools reading both agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitNs(pub i64);

impl SplitNs {
    /// A u64 time or virtual time (vruntimes wrap: read as signed, as Linux's `%Ld` does).
    pub fn of(ns: u64) -> SplitNs {
        SplitNs(ns as i64)
    }
}

impl fmt::Display for SplitNs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let abs = self.0.unsigned_abs();
        let high = (abs / 1_000_000) as i64 * self.0.signum();
        let mut text = Small::default();
        fmt::write(&mut text, format_args!("{high}.{:06}", abs % 1_000_000))?;
        f.pad(text.as_str())
    }
}

/// A short text on the stack, so that [`SplitNs`] can honour widths without allocating.
#[derive(Default)]
struct Small {
    bytes: [u8; 32],
    len: usize,
}

impl Small {
    fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("?")
    }
}

impl fmt::Write for Small {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        self.bytes
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// One line of a section: `  .name` padded to 30 columns, then the value (debug.c's
/// `SEQ_printf(m, "  .%-30s: ...")`).
pub fn field(out: &mut dyn fmt::Write, name: &str, value: impl fmt::Display) -> fmt::Result {
    writeln!(out, "  .{name:<30}: {value}")
}

/// What the kernel knows of a task, for its row of the table: Linux's `print_task` reads
/// these from the `task_struct`, the rest from the task's scheduling entity.
#[derive(Debug, Clone, Copy)]
pub struct TaskRow<'a> {
    /// Is it the task on the CPU (marked `>R`)?
    pub running: bool,
    /// Its state letter otherwise, as `ps` shows it: R, S, T, Z.
    pub state: char,
    /// Its name (at most 15 characters are shown, Linux's `TASK_COMM_LEN`).
    pub comm: &'a str,
    /// Its pid, as programs see it.
    pub pid: i64,
    /// Switches away from it, voluntary and not (`nvcsw + nivcsw`).
    pub switches: u64,
    /// Its priority as Linux numbers it: 120 + nice for a normal task.
    pub prio: i64,
    /// Time spent runnable but not running (schedstats' `wait_sum`).
    pub wait_ns: u64,
    /// Time spent asleep (schedstats' `sum_sleep_runtime`).
    pub sleep_ns: u64,
}

impl TaskRow<'_> {
    /// The row's start, the same in every layout: the mark, the name and the pid.
    pub fn write_start(&self, out: &mut dyn fmt::Write) -> fmt::Result {
        if self.running {
            out.write_str(">R")?;
        } else {
            write!(out, " {}", self.state)?;
        }
        let comm = self.comm.get(..15).unwrap_or(self.comm);
        write!(out, " {comm:>15} {:>5}", self.pid)
    }
}

/// The rule under a table's header: as long as the header.
pub fn write_rule(out: &mut dyn fmt::Write, header: &str) -> fmt::Result {
    for _ in 0..header.len() {
        out.write_char('-')?;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    #[test]
    fn times_print_as_linux_splits_them() {
        assert_eq!(format!("{}", SplitNs(1_380_198_999)), "1380.198999");
        assert_eq!(format!("{}", SplitNs(-1_048_576)), "-1.048576");
        // Linux's quirk: the sign lives in the millisecond part, lost when that is zero.
        assert_eq!(format!("{}", SplitNs(-500_000)), "0.500000");
        assert_eq!(format!("{:>16}", SplitNs(6_000_000)), "        6.000000");
        assert_eq!(format!("{}", SplitNs::of(u64::MAX)), "0.000001");
    }

    #[test]
    fn a_row_starts_with_the_mark_the_name_and_the_pid() {
        let mut row = TaskRow {
            running: false,
            state: 'S',
            comm: "a-name-longer-than-fifteen",
            pid: 7,
            switches: 0,
            prio: 120,
            wait_ns: 0,
            sleep_ns: 0,
        };
        let mut out = alloc::string::String::new();
        row.write_start(&mut out).unwrap();
        assert_eq!(out, " S a-name-longer-t     7");
        row.running = true;
        row.comm = "init";
        out.clear();
        row.write_start(&mut out).unwrap();
        assert_eq!(out, ">R            init     7");
    }
}
