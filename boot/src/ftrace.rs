//! Reading the kernel's ftrace text (Linux 6.x layout, see kernel/src/sched/trace.rs) back
//! into events, for the lab's timelines and the Perfetto JSON conversion.

/// One event line: `TASK-PID [CPU] FLAGS SECS.USECS: EVENT: ARGS`.
#[derive(Debug, Clone, PartialEq)]
pub struct Line<'a> {
    /// The task on the CPU (`<idle>` for the idle task).
    pub task: &'a str,
    pub pid: u64,
    /// The CPU it happened on.
    pub cpu: usize,
    pub at_us: u64,
    pub event: &'a str,
    args: &'a str,
}

impl<'a> Line<'a> {
    /// Parses an event line; `None` for header lines and anything else.
    pub fn parse(line: &'a str) -> Option<Self> {
        if line.starts_with('#') {
            return None;
        }
        let (head, rest) = line.split_once(" [")?;
        let (task, pid) = head.trim().rsplit_once('-')?;
        let (cpu, rest) = rest.split_once("] ")?;
        let (prefix, rest) = rest.split_once(": ")?;
        let stamp = prefix.split_whitespace().last()?;
        let (secs, usecs) = stamp.split_once('.')?;
        let (event, args) = rest.split_once(": ")?;
        Some(Line {
            task,
            pid: pid.parse().ok()?,
            cpu: cpu.trim().parse().ok()?,
            at_us: secs.parse::<u64>().ok()? * 1_000_000 + usecs.parse::<u64>().ok()?,
            event,
            args,
        })
    }

    /// The value of field `key` (`key=value`) of the event.
    pub fn field(&self, key: &str) -> Option<&'a str> {
        self.args
            .split(' ')
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
    }
}

/// The event lines of a trace.
pub fn lines(trace: &str) -> impl Iterator<Item = Line<'_>> {
    trace.lines().filter_map(Line::parse)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linux_6_line_is_read_field_by_field() {
        let l = Line::parse("          <idle>-0       [000] d..2.     1.000010: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=hog next_pid=4 next_prio=120").unwrap();
        assert_eq!((l.task, l.pid, l.at_us), ("<idle>", 0, 1_000_010));
        assert_eq!(l.event, "sched_switch");
        assert_eq!(l.field("next_comm"), Some("hog"));
        assert_eq!(l.field("prev_state"), Some("R"));
        assert_eq!(l.field("comm"), None);
        assert_eq!(Line::parse("# tracer: nop"), None);
    }
}
