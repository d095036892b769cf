//! The scheduling trace: a fixed-size ring of scheduler events — `sched_switch`,
//! `sched_waking`, `sched_process_fork`, `sched_wakeup_new`, `sched_process_exit` — printed as
//! the text Linux 6.x's `/sys/kernel/tracing/trace` shows, which ui.perfetto.dev opens as CPU
//! and thread tracks (the boot tool also converts it to Perfetto's JSON, `boot/src/perfetto.rs`).
//!
//! The line layout is Linux's `trace_print_context` (kernel/trace/trace_output.c): the task as
//! `%16s-%-7d`, the CPU as `[%03d]`, the five latency flags (irqs-off, need-resched,
//! hardirq, preempt-depth, migrate-disable: `d..2.`), and the time as `%5lu.%06lu`. The
//! events' fields are the `TP_printk` formats of include/trace/events/sched.h. Task ids are
//! shifted by one in `pid` fields because Linux reserves pid 0 for the idle task, which
//! appears as `swapper/0` in event fields and `<idle>-0` in the line's task column.

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
    const BLANK: Comm = Comm {
        pid: 0,
        name: [0; NAME_LEN],
        len: 0,
        prio: 0,
    };

    /// `task` (its id, name, nice); the idle task becomes pid 0 `swapper/0`.
    pub fn new(id: crate::task::TaskId, name: &str, nice: i8, idle: bool) -> Self {
        let (pid, name) = if idle {
            (0, "swapper/0")
        } else {
            (crate::task::pid_of(id) as u64, name)
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

    /// CPU `cpu`'s idle task: pid 0, `swapper/N` (as Linux names each CPU's).
    pub fn idle(cpu: usize) -> Self {
        let mut comm = Self::new(crate::task::TaskId::from_number(0), "swapper/", 0, false);
        comm.pid = 0;
        let mut digits = [0u8; 20];
        let mut n = cpu;
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        for &d in &digits[at..] {
            if usize::from(comm.len) < NAME_LEN {
                comm.name[usize::from(comm.len)] = d;
                comm.len += 1;
            }
        }
        comm
    }

    /// Whether this is an idle task (`swapper/N`, pid 0).
    pub fn is_idle(&self) -> bool {
        self.pid == 0
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

/// How the task that left the CPU left it (`prev_state`): the runqueue's account.
pub use sched::PrevState;

/// The state of the CPU when an event was recorded: ftrace's latency flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags {
    /// A reschedule is pending (TIF_NEED_RESCHED): `N`.
    pub need_resched: bool,
    /// Recorded in the timer interrupt's handler: `h`.
    pub hardirq: bool,
}

impl fmt::Display for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Interrupts are always off in the scheduler (`d`). The preempt depth is 2, as in
        // Linux 6.1's sched_switch lines (the runqueue lock plus schedule's own); nothing
        // here disables migration (one CPU), so the fifth column is `.`.
        let n = if self.need_resched { 'N' } else { '.' };
        let h = if self.hardirq { 'h' } else { '.' };
        write!(f, "d{n}{h}2.")
    }
}

/// One traced event: when, the CPU's flags, the running task, and what happened.
#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub at: u64,
    /// The CPU it happened on (the line's `[00N]` column).
    pub cpu: u16,
    /// The CPU of the task it is about (`target_cpu` of a wake-up).
    pub target_cpu: u16,
    pub flags: Flags,
    /// The task on the CPU when the event happened (the line's task column).
    pub current: Comm,
    pub kind: Kind,
    /// The task the event is about: a switch's next task, the task woken, the child made
    /// or queued — for an exit, the running task itself. A field of its own rather than
    /// the kind's, so that a switch writes it straight from the task into the ring.
    pub task: Comm,
}

impl Event {
    /// A place in the ring not written yet (never shown: [`Trace::next_slot`] hands it out
    /// to be filled).
    const BLANK: Event = Event {
        at: 0,
        cpu: 0,
        target_cpu: 0,
        flags: Flags {
            need_resched: false,
            hardirq: false,
        },
        current: Comm::BLANK,
        kind: Kind::Exit,
        task: Comm::BLANK,
    };
}

#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// `current` left the CPU in `prev_state`; `task` got it.
    Switch { prev_state: PrevState },
    /// `current` woke `task`.
    Waking,
    /// `current` started `task` (`sched_process_fork`).
    Fork,
    /// `task`, new, was queued for the first time (`sched_wakeup_new`).
    WakeupNew,
    /// `current` exited (`sched_process_exit`).
    Exit,
    /// `task` moved from CPU `orig_cpu` to `target_cpu` (`sched_migrate_task`, which
    /// Linux's `set_task_cpu` records: a move, not a new task's first CPU).
    Migrate { orig_cpu: u16 },
}

/// An event just written to the flight recorder (the recent-events ring) goes on: into the
/// trace while tracing, and at once to the console if `echo` (`log=trace`: every scheduling
/// decision as it is taken, at the cost of slowing the run).
#[inline(always)]
pub fn publish(event: &Event, trace: &mut Option<Trace>, echo: bool) {
    if echo {
        echo_event(event);
    }
    if let Some(ring) = trace.as_mut() {
        ring.record(*event);
    }
}

#[cold]
fn echo_event(event: &Event) {
    crate::arch::serial::with_console(|out| {
        let _ = out.write_str("[TRACE] ");
        let _ = write_event(out, event);
    });
}

/// The ring: the most recent `capacity` events.
pub struct Trace {
    events: Vec<Event>,
    /// The capacity less one: the capacity is a power of two, so that the next event's
    /// place is `written & mask` (this runs on every switch).
    mask: u64,
    /// Events ever recorded (more than the capacity means the oldest were overwritten).
    written: u64,
    /// The CPUs online when it started (the header's `#P`).
    cpus: usize,
}

impl Trace {
    /// A ring of `capacity` events, a power of two, of a machine of `cpus` CPUs online.
    pub fn new(capacity: usize, cpus: usize) -> Self {
        assert!(
            capacity.is_power_of_two(),
            "a trace ring holds a power of two of events"
        );
        Trace {
            events: Vec::with_capacity(capacity),
            mask: capacity as u64 - 1,
            written: 0,
            cpus,
        }
    }

    /// The place of the next event — the oldest event's, once the ring is full — for the
    /// caller to fill in: a switch writes its event straight into the ring, not into a copy
    /// that is then copied in (80 bytes, about 40 instructions of every switch).
    #[inline(always)]
    pub fn next_slot(&mut self) -> &mut Event {
        let slot = (self.written & self.mask) as usize;
        self.written += 1;
        if slot == self.events.len() {
            // Not full yet.
            self.events.push(Event::BLANK);
        }
        &mut self.events[slot]
    }

    pub fn record(&mut self, event: Event) {
        *self.next_slot() = event;
    }

    /// The events, oldest first.
    pub fn ordered(&self) -> impl DoubleEndedIterator<Item = &Event> {
        // The next event's place: once the ring is full, the oldest's; before, the end.
        let split = (self.written & self.mask) as usize;
        self.events[split..].iter().chain(&self.events[..split])
    }

    /// Writes the trace as ftrace text: the header, then every event.
    pub fn write_ftrace(&self, out: &mut dyn fmt::Write) -> fmt::Result {
        self.write_header(out)?;
        self.ordered().try_for_each(|event| write_event(out, event))
    }

    /// Writes the header and the last `n` events.
    pub fn write_last(&self, n: usize, out: &mut dyn fmt::Write) -> fmt::Result {
        self.write_header(out)?;
        let skip = self.events.len().saturating_sub(n);
        self.ordered()
            .skip(skip)
            .try_for_each(|event| write_event(out, event))
    }

    fn write_header(&self, out: &mut dyn fmt::Write) -> fmt::Result {
        write_header(out, self.events.len(), self.written, self.cpus)
    }

    /// The events it holds.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether it holds no event.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The events ever recorded into it.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Its `i`-th oldest event (`i` below [`Trace::len`]).
    pub fn oldest(&self, i: usize) -> &Event {
        let split = (self.written & self.mask) as usize;
        &self.events[(split + i) % self.events.len()]
    }
}

/// Linux 6.x's header (`print_func_help_header_irq`) of a trace holding `held` events of
/// the `written` recorded, on `cpus` CPUs.
pub fn write_header(
    out: &mut dyn fmt::Write,
    held: usize,
    written: u64,
    cpus: usize,
) -> fmt::Result {
    writeln!(out, "# tracer: nop\n#")?;
    writeln!(
        out,
        "# entries-in-buffer/entries-written: {held}/{written}   #P:{cpus}\n#"
    )?;
    const HEADER: &str = "\
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
";
    out.write_str(HEADER)
}

/// Writes one event as one ftrace text line (also what `log=trace` prints as it happens).
pub fn write_event(out: &mut dyn fmt::Write, event: &Event) -> fmt::Result {
    let Event {
        at,
        cpu,
        target_cpu,
        flags,
        current: c,
        kind,
        task,
    } = event;
    // The task column, `%16s` (no allocation: gdb's helpers call this while the kernel is
    // stopped, perhaps inside the allocator). The idle task shows as `<idle>`, as in Linux.
    let idle = c.pid == 0;
    let width = if idle { 6 } else { usize::from(c.len) };
    for _ in width..16 {
        out.write_char(' ')?;
    }
    if idle {
        out.write_str("<idle>")?;
    } else {
        write!(out, "{}", c.name())?;
    }
    write!(
        out,
        "-{:<7} [{cpu:03}] {flags} {:>5}.{:06}: ",
        c.pid,
        at / 1_000_000_000,
        at % 1_000_000_000 / 1_000
    )?;
    match kind {
        Kind::Switch { prev_state } => writeln!(
            out,
            "sched_switch: prev_comm={} prev_pid={} prev_prio={} prev_state={prev_state} ==> next_comm={} next_pid={} next_prio={}",
            c.name(),
            c.pid,
            c.prio,
            task.name(),
            task.pid,
            task.prio
        ),
        Kind::Waking => writeln!(
            out,
            "sched_waking: comm={} pid={} prio={} target_cpu={target_cpu:03}",
            task.name(),
            task.pid,
            task.prio
        ),
        Kind::WakeupNew => writeln!(
            out,
            "sched_wakeup_new: comm={} pid={} prio={} target_cpu={target_cpu:03}",
            task.name(),
            task.pid,
            task.prio
        ),
        Kind::Fork => writeln!(
            out,
            "sched_process_fork: comm={} pid={} child_comm={} child_pid={}",
            c.name(),
            c.pid,
            task.name(),
            task.pid
        ),
        Kind::Exit => writeln!(
            out,
            "sched_process_exit: comm={} pid={} prio={}",
            c.name(),
            c.pid,
            c.prio
        ),
        Kind::Migrate { orig_cpu } => writeln!(
            out,
            "sched_migrate_task: comm={} pid={} prio={} orig_cpu={orig_cpu} dest_cpu={target_cpu}",
            task.name(),
            task.pid,
            task.prio
        ),
    }
}
