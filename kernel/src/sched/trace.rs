//! The scheduling trace: a fixed-size ring of `sched_switch` and `sched_waking` events,
//! recorded in memory while a run goes on (`trace=on`) and printed afterwards as Linux ftrace
//! text, which ui.perfetto.dev opens as CPU and thread tracks.
//!
//! The text follows ftrace's `nop` tracer output with the four-character flags field of
//! kernels before 4.x (`d..2`): irqs off, no need-resched, no hard/soft irq, preempt depth.
//! Task ids are shifted by one in `pid` fields because ftrace reserves pid 0 for the idle
//! task (`swapper/0`).

use alloc::vec::Vec;
use core::fmt;

const NAME_LEN: usize = 15;

/// A task as an event shows it: pid, name (up to 15 bytes, as Linux's `comm`), priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comm {
    pub pid: u64,
    name: [u8; NAME_LEN],
    len: u8,
    /// ftrace's prio: 120 + nice.
    pub prio: i32,
}

impl Comm {
    /// `task` (its id, name, nice); the idle task becomes pid 0 `swapper/0`.
    pub fn new(id: usize, name: &str, nice: i8, idle: bool) -> Self {
        let (pid, name) = if idle {
            (0, "swapper/0")
        } else {
            (id as u64 + 1, name)
        };
        let bytes = name.as_bytes();
        let len = bytes.len().min(NAME_LEN);
        let mut buf = [0; NAME_LEN];
        buf[..len].copy_from_slice(&bytes[..len]);
        Comm {
            pid,
            name: buf,
            len: len as u8,
            prio: 120 + i32::from(nice),
        }
    }

    /// The name, with spaces (which would break ftrace's fields) shown as underscores.
    pub fn name(&self) -> impl fmt::Display + '_ {
        struct Name<'a>(&'a [u8]);
        impl fmt::Display for Name<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                for &b in self.0 {
                    let c = if b.is_ascii_graphic() { b as char } else { '_' };
                    write!(f, "{c}")?;
                }
                Ok(())
            }
        }
        Name(&self.name[..usize::from(self.len)])
    }
}

/// One traced event.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// `prev` (left in `prev_state`: 'R' preempted, 'S' sleeping, 'X' dead) → `next`.
    Switch {
        at: u64,
        prev: Comm,
        prev_state: char,
        next: Comm,
    },
    /// `current` woke `task`.
    Waking { at: u64, current: Comm, task: Comm },
}

/// The ring: the most recent `capacity` events.
pub struct Trace {
    events: Vec<Event>,
    capacity: usize,
    /// Events ever recorded (more than `capacity` means the oldest were overwritten).
    written: u64,
    /// Switches ever recorded.
    pub switches: u64,
}

impl Trace {
    pub fn new(capacity: usize) -> Self {
        Trace {
            events: Vec::with_capacity(capacity),
            capacity,
            written: 0,
            switches: 0,
        }
    }

    pub fn record(&mut self, event: Event) {
        if matches!(event, Event::Switch { .. }) {
            self.switches += 1;
        }
        if self.events.len() < self.capacity {
            self.events.push(event);
        } else {
            let slot = (self.written % self.capacity as u64) as usize;
            self.events[slot] = event;
        }
        self.written += 1;
    }

    /// Forgets everything (a new scenario starts).
    pub fn clear(&mut self) {
        self.events.clear();
        self.written = 0;
        self.switches = 0;
    }

    /// The events, oldest first.
    fn ordered(&self) -> impl Iterator<Item = &Event> {
        let split = if self.written > self.capacity as u64 {
            (self.written % self.capacity as u64) as usize
        } else {
            0
        };
        self.events[split..].iter().chain(&self.events[..split])
    }

    /// Writes the trace as ftrace text.
    pub fn write_ftrace(&self, out: &mut dyn fmt::Write) -> fmt::Result {
        writeln!(out, "# tracer: nop")?;
        writeln!(out, "#")?;
        writeln!(
            out,
            "# entries-in-buffer/entries-written: {}/{}   #P:1",
            self.events.len(),
            self.written
        )?;
        writeln!(out, "#")?;
        writeln!(out, "#                              _-----=> irqs-off")?;
        writeln!(out, "#                             / _----=> need-resched")?;
        writeln!(
            out,
            "#                            | / _---=> hardirq/softirq"
        )?;
        writeln!(out, "#                            || / _--=> preempt-depth")?;
        writeln!(out, "#                            ||| /     delay")?;
        writeln!(
            out,
            "#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION"
        )?;
        writeln!(out, "#              | |       |   ||||       |         |")?;
        for event in self.ordered() {
            write_event(out, event)?;
        }
        Ok(())
    }
}

fn write_prefix(out: &mut dyn fmt::Write, current: &Comm, at: u64) -> fmt::Result {
    let task = alloc::format!("{}-{}", current.name(), current.pid);
    write!(
        out,
        "{task:>22} [000] d..2 {:>5}.{:06}: ",
        at / 1_000_000_000,
        at % 1_000_000_000 / 1_000
    )
}

/// Writes one event as one ftrace text line (also what `log=trace` prints as it happens).
pub fn write_event(out: &mut dyn fmt::Write, event: &Event) -> fmt::Result {
    match event {
        Event::Switch {
            at,
            prev,
            prev_state,
            next,
        } => {
            write_prefix(out, prev, *at)?;
            writeln!(
                out,
                "sched_switch: prev_comm={} prev_pid={} prev_prio={} prev_state={prev_state} ==> next_comm={} next_pid={} next_prio={}",
                prev.name(),
                prev.pid,
                prev.prio,
                next.name(),
                next.pid,
                next.prio
            )
        }
        Event::Waking { at, current, task } => {
            write_prefix(out, current, *at)?;
            writeln!(
                out,
                "sched_waking: comm={} pid={} prio={} target_cpu=000",
                task.name(),
                task.pid,
                task.prio
            )
        }
    }
}
