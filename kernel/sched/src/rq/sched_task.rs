//! The scheduling part of a task, as a runqueue keeps it ([`super::Rq`]): where the task is in
//! its life, what happened to it (Linux's schedstats, in spirit), and how a switch out and a
//! switch in bring both up to date.

use crate::policy::Nanos;

/// Where a task is in its life, as the scheduler sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Queued, waiting for the CPU.
    Runnable,
    /// On the CPU.
    Running,
    /// Waiting for a timer or an event.
    Sleeping,
    /// Finished; it leaves the CPU at the next pick for the last time.
    Exited,
}

/// How the task that left the CPU left it: the trace's `prev_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrevState {
    /// Still runnable, gave the CPU up itself (`sched_yield`): `R`.
    Yielded,
    /// Still runnable, preempted (by the tick or a wake-up): `R+`.
    Preempted,
    /// Went to sleep: `S`.
    Sleeping,
    /// Exited: `X` (Linux's EXIT_DEAD).
    Dead,
}

/// As the trace's `sched_switch` line shows it (Linux's `prev_state` letters).
impl core::fmt::Display for PrevState {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            PrevState::Yielded => "R",
            PrevState::Preempted => "R+",
            PrevState::Sleeping => "S",
            PrevState::Dead => "X",
        })
    }
}

/// What happened to a task, for reports (Linux's schedstats, in spirit).
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskStats {
    /// CPU time received, up to its last switch out.
    pub cpu_ns: Nanos,
    /// Time spent runnable but not running.
    pub wait_ns: Nanos,
    /// Times switched in (a pick that keeps the same task is not a switch).
    pub switches: u64,
    /// Wake-ups, and the latency from each wake-up to running.
    pub wakeups: u64,
    /// Sum of the wake-up latencies.
    pub wake_latency_sum_ns: Nanos,
    /// The longest wake-up latency.
    pub wake_latency_max_ns: Nanos,
    /// Ticks that found the task in user mode, and in the kernel: the sample that splits
    /// `cpu_ns` into user and system time (Linux's `account_process_tick`).
    pub user_ticks: u64,
    /// Ticks that found the task in the kernel.
    pub system_ticks: u64,
    /// Time spent asleep (schedstats' `sum_sleep_runtime`): from going to sleep to the
    /// wake-up.
    pub sleep_ns: Nanos,
    /// Since when it has been asleep (`None` while runnable).
    pub(super) asleep_since: Option<Nanos>,
    /// Switches away while asleep.
    pub voluntary_switches: u64,
    /// Switches away while still runnable.
    pub involuntary_switches: u64,
    /// When the task last got the CPU.
    pub switched_in_at: Nanos,
    /// Since when it has been runnable without running (`None` while running or asleep).
    pub(super) runnable_since: Option<Nanos>,
    /// Whether that wait started with a wake-up (it then counts as wake-up latency).
    pub(super) woken: bool,
}

impl TaskStats {
    /// CPU time received up to `now`, the current stretch included if it is `running`.
    pub fn cpu_ns_at(&self, now: Nanos, running: bool) -> Nanos {
        if running {
            self.cpu_ns + now.saturating_sub(self.switched_in_at)
        } else {
            self.cpu_ns
        }
    }
}

/// The scheduling part of a task: its state and statistics.
#[derive(Debug, Clone, Copy)]
pub struct SchedTask {
    /// Where it is in its life.
    pub state: State,
    /// What happened to it.
    pub stats: TaskStats,
}

/// The wait that a switch in ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waited {
    /// How long the task was runnable without running.
    pub ns: Nanos,
    /// The wait began with a wake-up: `ns` is a wake-up latency.
    pub woken: bool,
}

/// The statistics of a task leaving the CPU at `now`; returns how it left.
#[inline(always)]
pub(super) fn switch_out(p: &mut SchedTask, now: Nanos, yielded: bool, is_idle: bool) -> PrevState {
    p.stats.cpu_ns += now - p.stats.switched_in_at;
    let prev_state = match p.state {
        State::Running | State::Runnable if yielded => PrevState::Yielded,
        State::Running | State::Runnable => PrevState::Preempted,
        State::Sleeping => PrevState::Sleeping,
        State::Exited => PrevState::Dead,
    };
    if prev_state == PrevState::Sleeping {
        p.stats.voluntary_switches += 1;
    } else if prev_state != PrevState::Dead && !is_idle {
        p.stats.involuntary_switches += 1;
    }
    if p.state == State::Running {
        p.state = State::Runnable;
        p.stats.runnable_since = Some(now);
    }
    prev_state
}

/// The statistics of a task getting the CPU at `now`: its wait (and wake-up latency) ends.
#[inline(always)]
pub(super) fn switch_in(n: &mut SchedTask, now: Nanos) -> Option<Waited> {
    n.state = State::Running;
    n.stats.switched_in_at = now;
    let since = n.stats.runnable_since.take()?;
    let waited = Waited {
        ns: now - since,
        woken: core::mem::take(&mut n.stats.woken),
    };
    n.stats.wait_ns += waited.ns;
    if waited.woken {
        n.stats.wakeups += 1;
        n.stats.wake_latency_sum_ns += waited.ns;
        n.stats.wake_latency_max_ns = n.stats.wake_latency_max_ns.max(waited.ns);
    }
    Some(waited)
}
