//! The seed experiments' workloads as simulator behaviours (../shared/seeds/README.md).
//! The kernel's lab (a later milestone) runs the same programs as real threads.

use super::{Action, Behavior, Ctx};
use crate::policy::{ForkKind, Nanos};
use alloc::boxed::Box;

/// Spins forever (seed 000's and 002's CPU hog).
pub struct Hog;

impl Behavior for Hog {
    fn name(&self) -> &str {
        "hog"
    }
    fn next(&mut self, _: &mut Ctx) -> Action {
        Action::Run(Nanos::MAX / 4)
    }
}

/// seed 000's `sched.py`: sleeps `period` in a loop; each sample is how late it woke up
/// (the overshoot of the sleep, timer slack included, as the script measured it). It starts
/// at a random point of its first period and each iteration does a little work besides the
/// sleep (see [`crate::variation`]).
pub struct Sleeper {
    /// How long each sleep is.
    pub period: Nanos,
    started: bool,
    due: Option<Nanos>,
    worked: bool,
}

impl Sleeper {
    /// A sleeper sleeping `period` at a time.
    pub fn new(period: Nanos) -> Self {
        Sleeper {
            period,
            started: false,
            due: None,
            worked: false,
        }
    }
}

impl Behavior for Sleeper {
    fn name(&self) -> &str {
        "sleeper"
    }
    fn next(&mut self, ctx: &mut Ctx) -> Action {
        if !core::mem::replace(&mut self.started, true) {
            return Action::Sleep(ctx.rng.start_offset(self.period));
        }
        if let Some(due) = self.due.take() {
            ctx.samples.push(ctx.now - due);
        }
        if !core::mem::replace(&mut self.worked, true) {
            return Action::Run(ctx.rng.sleeper_loop_work());
        }
        self.worked = false;
        self.due = Some(ctx.now + self.period);
        Action::Sleep(self.period + ctx.rng.timer_slack())
    }
}

/// seed 002's `lat3`: spins `loop_ns` of wall time, then sleeps 1 ms, forever. Its figures
/// come from the simulator's per-task waits (the time it was kept off the CPU).
pub struct Lat3 {
    /// Wall time of each spin.
    pub loop_ns: Nanos,
    spinning: bool,
}

impl Lat3 {
    /// A lat3 spinning `loop_ns` per cycle (`lat3 N` with N in µs × 1000).
    pub fn new(loop_ns: Nanos) -> Self {
        Lat3 {
            loop_ns,
            spinning: false,
        }
    }
}

impl Behavior for Lat3 {
    fn name(&self) -> &str {
        "lat3"
    }
    fn next(&mut self, ctx: &mut Ctx) -> Action {
        self.spinning = !self.spinning;
        if self.spinning {
            Action::SpinUntil(ctx.now + self.loop_ns)
        } else {
            Action::Sleep(1_000_000)
        }
    }
}

/// seed 003's `wakeup-latency`: a periodic timer whose every expiry makes a helper thread
/// (this task) create a new thread, as glibc does for SIGEV_THREAD; the new thread records
/// how late it runs against the ideal expiry. Expiries that pass while the helper has not yet
/// handled the previous one are counted as missed.
pub struct Waker {
    /// The timer's period.
    pub period: Nanos,
    next_expiry: Option<Nanos>,
}

impl Waker {
    /// A waker with a timer of `period`.
    pub fn new(period: Nanos) -> Self {
        Waker {
            period,
            next_expiry: None,
        }
    }
}

impl Behavior for Waker {
    fn name(&self) -> &str {
        "waker"
    }
    fn next(&mut self, ctx: &mut Ctx) -> Action {
        match self.next_expiry {
            None => {
                let first = ctx.now + self.period;
                self.next_expiry = Some(first);
                Action::SleepUntil(first)
            }
            Some(expiry) if ctx.now >= expiry => {
                let mut next = expiry + self.period;
                while next <= ctx.now {
                    *ctx.missed += 1;
                    next += self.period;
                }
                self.next_expiry = Some(next);
                Action::Spawn(
                    Box::new(TimerThread {
                        expiry,
                        started: false,
                    }),
                    ForkKind::Fork,
                )
            }
            Some(expiry) => Action::SleepUntil(expiry),
        }
    }
}

/// The thread created for one timer expiry: records its lateness, does a little work, exits.
struct TimerThread {
    expiry: Nanos,
    started: bool,
}

impl Behavior for TimerThread {
    fn name(&self) -> &str {
        "waker-thread"
    }
    fn next(&mut self, ctx: &mut Ctx) -> Action {
        if core::mem::replace(&mut self.started, true) {
            return Action::Exit;
        }
        ctx.samples.push(ctx.now - self.expiry);
        Action::Run(10_000)
    }
}

/// seed 003's `make -j N`: keeps `jobs` children alive; each is started vfork-style (the
/// parent sleeps until the child execs), burns a pseudo-random 5–50 ms of CPU and exits; the
/// parent waits for any child and starts the next.
pub struct MakeJ {
    /// How many jobs run at once (`-j`).
    pub jobs: u32,
    running: u32,
    waiting: bool,
}

impl MakeJ {
    /// `make -j jobs`.
    pub fn new(jobs: u32) -> Self {
        MakeJ {
            jobs,
            running: 0,
            waiting: false,
        }
    }
}

impl Behavior for MakeJ {
    fn name(&self) -> &str {
        "makej"
    }
    fn next(&mut self, ctx: &mut Ctx) -> Action {
        if core::mem::take(&mut self.waiting) {
            self.running -= 1;
        }
        if self.running < self.jobs {
            self.running += 1;
            let cpu = ctx.rng.between(5_000_000, 50_000_000);
            return Action::Spawn(Box::new(Job { cpu, step: 0 }), ForkKind::Vfork);
        }
        self.waiting = true;
        Action::WaitChild
    }
}

/// One compile job: exec (releasing the vfork parent), burn `cpu`, exit.
struct Job {
    cpu: Nanos,
    step: u8,
}

/// What `exec` itself costs the child before the parent is released.
const EXEC_COST_NS: Nanos = 100_000;

impl Behavior for Job {
    fn name(&self) -> &str {
        "job"
    }
    fn next(&mut self, _: &mut Ctx) -> Action {
        self.step += 1;
        match self.step {
            1 => Action::Run(EXEC_COST_NS),
            2 => Action::Exec,
            3 => Action::Run(self.cpu),
            _ => Action::Exit,
        }
    }
}
