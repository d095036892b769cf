//! The seed experiments' workloads as simulator behaviours (../shared/seeds/README.md).
//! The kernel's lab runs the same programs as real threads (`kernel/src/lab/workloads.rs`);
//! their numbers are shared in [`crate::programs`].

use super::{Action, Behavior, Ctx};
use crate::policy::{ForkKind, Nanos};
use crate::programs::{EXEC_COST_NS, JOB_CPU_NS, JOB_IO_BURST_NS, JOB_IO_SLEEP_NS};
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
/// sleep (see [`crate::programs`]).
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
                // The program's start is its only drift: POSIX timers have no slack.
                let first = ctx.now + self.period + ctx.rng.start_offset(self.period);
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
/// parent sleeps until the child execs), burns a pseudo-random 5–50 ms of CPU — in bursts
/// with I/O sleeps between them if `io` — and exits; the parent waits for any child and
/// starts the next.
pub struct MakeJ {
    /// How many jobs run at once (`-j`).
    pub jobs: u32,
    /// The jobs sleep on I/O between bursts of CPU (`makej:N/io`).
    pub io: bool,
    /// The CPU time each job burns, at random in this range.
    pub job_cpu_ns: (Nanos, Nanos),
    /// How many jobs it runs in all before it exits (`None`: it never ends).
    pub total: Option<u32>,
    started: u32,
    running: u32,
    waiting: bool,
}

impl MakeJ {
    /// `make -j jobs`; `io`: its jobs sleep on I/O ([`crate::programs::JOB_IO_SLEEP_NS`]).
    pub fn new(jobs: u32, io: bool) -> Self {
        MakeJ {
            jobs,
            io,
            job_cpu_ns: JOB_CPU_NS,
            total: None,
            started: 0,
            running: 0,
            waiting: false,
        }
    }

    /// The same, its jobs burning `job_cpu_ns` (a range) each.
    pub fn with_jobs_of(self, job_cpu_ns: (Nanos, Nanos)) -> Self {
        MakeJ { job_cpu_ns, ..self }
    }

    /// The same, ending once `total` jobs have run (a build of `total` files).
    pub fn with_total(self, total: u32) -> Self {
        MakeJ {
            total: Some(total),
            ..self
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
        let more = self.total.is_none_or(|total| self.started < total);
        if self.running < self.jobs && more {
            self.running += 1;
            self.started += 1;
            let job = Job {
                cpu_left: ctx.rng.within(self.job_cpu_ns),
                io: self.io,
                step: JobStep::Exec,
            };
            return Action::Spawn(Box::new(job), ForkKind::Vfork);
        }
        if self.running == 0 {
            return Action::Exit;
        }
        self.waiting = true;
        Action::WaitChild
    }
}

/// Where a job is in its life.
#[derive(Clone, Copy, PartialEq, Eq)]
enum JobStep {
    /// Exec'ing (releases the vfork parent when done).
    Exec,
    Execed,
    /// Burning CPU; after a burst, an I/O sleep if the job does I/O.
    Burning,
    Sleeping,
}

/// One compile job: exec (releasing the vfork parent), burn its CPU, exit.
struct Job {
    cpu_left: Nanos,
    io: bool,
    step: JobStep,
}

impl Behavior for Job {
    fn name(&self) -> &str {
        "job"
    }
    fn next(&mut self, ctx: &mut Ctx) -> Action {
        match self.step {
            JobStep::Exec => {
                self.step = JobStep::Execed;
                Action::Run(EXEC_COST_NS)
            }
            JobStep::Execed => {
                self.step = JobStep::Burning;
                Action::Exec
            }
            _ if self.cpu_left == 0 => Action::Exit,
            JobStep::Burning if self.io => {
                let burst = ctx.rng.within(JOB_IO_BURST_NS).min(self.cpu_left);
                self.cpu_left -= burst;
                self.step = JobStep::Sleeping;
                Action::Run(burst)
            }
            JobStep::Burning => Action::Run(core::mem::take(&mut self.cpu_left)),
            JobStep::Sleeping => {
                self.step = JobStep::Burning;
                Action::Sleep(ctx.rng.within(JOB_IO_SLEEP_NS))
            }
        }
    }
}
