//! A deterministic single-CPU simulator that drives any [`Policy`] with scripted tasks, in the
//! spirit of LinSched (docs/scheduler.md §10): a virtual nanosecond clock, an event queue ordered
//! by (time, sequence number), a periodic tick, tasks whose behaviour is a small state machine
//! ([`Behavior`]), and randomness only from a seeded generator. The same inputs give the
//! same schedule, bit for bit.
//!
//! What it measures per task: CPU time, every wake-up latency (from the wake-up to the first
//! instruction after the switch), every wait (runnable but not running, after a wake-up or a
//! preemption), and whatever samples the behaviour records itself.
//!
//! Built with the `sim` feature (and for the crate's own tests); the kernel does not use it.

mod behavior;
pub mod smp;
mod timers;
pub mod wasted;
pub mod workload;

pub use behavior::{Action, Behavior, Ctx};

use crate::policy::{ForkKind, Nanos, Policy, TaskId, Uid, Wakeup};
use crate::rq::Rq;
use crate::weights::Nice;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use timers::Timers;

pub use crate::programs::Rng;

/// Why a task sleeps, beyond what the runqueue knows (it knows only that it sleeps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    /// A timer wakes it.
    Timer,
    /// A vfork parent waiting for this child.
    VforkChild(TaskId),
    /// Waiting for any child to exit.
    Child,
}

/// The simulator's idle task: a number no simulated task has.
const IDLE: TaskId = TaskId::new(usize::MAX);

/// Everything the simulation knows and measured about one task.
pub struct SimTask {
    /// The behaviour's name.
    pub name: String,
    /// The task's uid.
    pub uid: Uid,
    /// The task that created it, if any.
    pub parent: Option<TaskId>,
    behavior: Box<dyn Behavior>,
    waiting: Option<Waiting>,
    run_left: Nanos,
    spin_until: Nanos,
    unreaped_children: u32,
    /// CPU time received.
    pub cpu_ns: Nanos,
    /// Every wake-up latency.
    pub wake_latencies: Vec<Nanos>,
    /// Every wait between becoming runnable (woken or preempted) and running.
    pub waits: Vec<Nanos>,
    /// Samples recorded by the behaviour.
    pub samples: Vec<Nanos>,
    /// Events counted by the behaviour.
    pub missed: u64,
    /// When it exited, if it has.
    pub exited_ns: Option<Nanos>,
}

impl SimTask {
    /// A task of `behavior`, uid `uid`, child of `parent`, that has done nothing yet.
    fn new(behavior: Box<dyn Behavior>, uid: Uid, parent: Option<TaskId>) -> SimTask {
        SimTask {
            name: behavior.name().into(),
            uid,
            parent,
            behavior,
            waiting: None,
            run_left: 0,
            spin_until: 0,
            unreaped_children: 0,
            cpu_ns: 0,
            wake_latencies: Vec::new(),
            waits: Vec::new(),
            samples: Vec::new(),
            missed: 0,
            exited_ns: None,
        }
    }
}

/// The wake-up of a vfork parent whose child exec'd or exited.
const VFORK_RELEASE: Wakeup = Wakeup {
    vfork_parent: true,
    from_interrupt: false,
    sync: crate::policy::SyncWake::No,
};

/// The vfork parent waiting for `child`, if one is.
fn vfork_waiter(tasks: &[SimTask], child: TaskId) -> Option<TaskId> {
    let parent = tasks[child].parent?;
    (tasks[parent].waiting == Some(Waiting::VforkChild(child))).then_some(parent)
}

/// `child` exits: its parent, if it waits for a child, is to be woken; otherwise the exit
/// waits for the parent's next wait (a child to reap).
fn exit_wakes(tasks: &mut [SimTask], child: TaskId) -> Option<TaskId> {
    let parent = tasks[child].parent?;
    if tasks[parent].waiting == Some(Waiting::Child) {
        return Some(parent);
    }
    tasks[parent].unreaped_children += 1;
    None
}

impl SimTask {
    /// Reaps an exited child if there is one (`wait` without sleeping).
    fn reap_one(&mut self) -> bool {
        let reaped = self.unreaped_children > 0;
        if reaped {
            self.unreaped_children -= 1;
        }
        reaped
    }

    /// CPU time it still wants at `now` before its next decision.
    fn work_left(&self, now: Nanos) -> Nanos {
        self.run_left.max(self.spin_until.saturating_sub(now))
    }

    /// It ran `ran` ns.
    fn charge(&mut self, ran: Nanos) {
        self.cpu_ns += ran;
        self.run_left = self.run_left.saturating_sub(ran);
    }

    /// Its behaviour's next step, task `task` at `now`.
    fn next_action(&mut self, task: TaskId, now: Nanos, rng: &mut Rng) -> Action {
        let mut ctx = Ctx {
            now,
            task,
            rng,
            samples: &mut self.samples,
            missed: &mut self.missed,
        };
        self.behavior.next(&mut ctx)
    }

    /// It got the CPU after `waited` (a wait, and a wake-up latency if it woke).
    fn record_wait(&mut self, waited: Option<crate::rq::Waited>) {
        if let Some(waited) = waited {
            self.waits.push(waited.ns);
            if waited.woken {
                self.wake_latencies.push(waited.ns);
            }
        }
    }

    /// Forgets what was measured so far.
    fn reset_measurements(&mut self) {
        self.cpu_ns = 0;
        self.wake_latencies.clear();
        self.waits.clear();
        self.samples.clear();
        self.missed = 0;
    }
}

/// Simulation settings.
#[derive(Debug, Clone, Copy)]
pub struct SimConfig {
    /// Tick length (1 / HZ).
    pub tick_ns: Nanos,
    /// Timers expire on time (true) or on the next tick boundary (the jiffies world).
    pub hrtimer: bool,
    /// Seed of the simulation's random numbers.
    pub seed: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            tick_ns: 1_000_000,
            hrtimer: true,
            seed: 1,
        }
    }
}

/// The simulated machine: one CPU (its runqueue drives the policy exactly as the kernel's
/// does, see [`crate::rq`]), tasks and timers.
pub struct Sim<P: Policy> {
    rq: Rq<P>,
    config: SimConfig,
    now: Nanos,
    tasks: Vec<SimTask>,
    /// Timer wake-ups.
    timers: Timers,
    rng: Rng,
    /// Context switches so far.
    pub switches: u64,
}

impl<P: Policy> Sim<P> {
    /// A machine at time 0 with no tasks.
    pub fn new(policy: P, config: SimConfig) -> Self {
        Sim {
            rq: Rq::new(0, Box::new(policy), IDLE),
            config,
            now: 0,
            tasks: Vec::new(),
            timers: Timers::new(),
            rng: Rng::new(config.seed),
            switches: 0,
        }
    }

    /// The policy under test, to inspect between runs.
    pub fn policy(&self) -> &P {
        self.rq.policy()
    }

    /// The simulated clock.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Every task created so far, by id.
    pub fn tasks(&self) -> &[SimTask] {
        &self.tasks
    }

    fn new_task(
        &mut self,
        behavior: Box<dyn Behavior>,
        uid: Uid,
        parent: Option<TaskId>,
    ) -> TaskId {
        self.tasks.push(SimTask::new(behavior, uid, parent));
        TaskId::new(self.tasks.len() - 1)
    }

    /// Starts a task (no parent) now.
    pub fn spawn(&mut self, behavior: Box<dyn Behavior>, uid: Uid, nice: Nice) -> TaskId {
        let id = self.new_task(behavior, uid, None);
        self.rq.spawn(id, uid, nice, self.now);
        id
    }

    fn arm_timer(&mut self, task: TaskId, at: Nanos) {
        self.timers.arm(task, at, self.now, &self.config);
    }

    fn wake(&mut self, task: TaskId, wakeup: Wakeup) {
        if self.rq.wake(task, wakeup, self.now) {
            self.tasks[task].waiting = None;
        }
    }

    /// The running task stops being runnable, for `why`: out of the policy's queue, then
    /// switch.
    fn block(&mut self, task: TaskId, why: Waiting) {
        debug_assert_eq!(task, self.rq.current());
        self.rq.block_current(self.now);
        self.tasks[task].waiting = Some(why);
    }

    /// Linux's `schedule()`: put the current task back, pick the next one.
    fn schedule(&mut self) {
        let now = self.now;
        let pick = self.rq.pick(|| now);
        if pick.next == IDLE {
            return;
        }
        self.tasks[pick.next].record_wait(pick.waited);
        self.switches += 1;
    }

    /// The running task, if it is not the idle task.
    fn current(&self) -> Option<TaskId> {
        Some(self.rq.current()).filter(|&t| t != IDLE)
    }

    /// CPU time the current task still wants before its next decision.
    fn work_left(&self, task: TaskId) -> Nanos {
        self.tasks[task].work_left(self.now)
    }

    /// Lets the running task make its zero-time decisions until it has CPU work or blocks.
    fn drive_current(&mut self) {
        let mut decisions = 0;
        while let Some(task) = self.current() {
            if self.rq.need_resched() {
                self.schedule();
                continue;
            }
            if self.work_left(task) > 0 {
                return;
            }
            decisions += 1;
            assert!(
                decisions < 100_000,
                "task {task} makes no progress at {}",
                self.now
            );
            let action = self.tasks[task].next_action(task, self.now, &mut self.rng);
            self.perform(task, action);
        }
    }

    fn perform(&mut self, task: TaskId, action: Action) {
        let now = self.now;
        match action {
            Action::Run(ns) => self.tasks[task].run_left = ns,
            Action::SpinUntil(t) => self.tasks[task].spin_until = t,
            Action::Sleep(ns) => {
                self.arm_timer(task, now.saturating_add(ns));
                self.block(task, Waiting::Timer);
            }
            Action::SleepUntil(t) => {
                self.arm_timer(task, t);
                self.block(task, Waiting::Timer);
            }
            Action::Spawn(behavior, kind) => {
                let uid = self.tasks[task].uid;
                let child = self.new_task(behavior, uid, Some(task));
                self.rq.fork(child, kind, now);
                if kind == ForkKind::Vfork {
                    self.block(task, Waiting::VforkChild(child));
                }
            }
            Action::Exec => self.release_vfork_parent(task),
            Action::WaitChild => {
                if !self.tasks[task].reap_one() {
                    self.block(task, Waiting::Child);
                }
            }
            Action::Exit => {
                self.tasks[task].exited_ns = Some(now);
                self.rq.exit_current(now);
                self.release_vfork_parent(task);
                if let Some(parent) = exit_wakes(&mut self.tasks, task) {
                    self.wake(parent, Wakeup::default());
                }
            }
        }
    }

    fn release_vfork_parent(&mut self, child: TaskId) {
        if let Some(parent) = vfork_waiter(&self.tasks, child) {
            self.wake(parent, VFORK_RELEASE);
        }
    }

    /// Advances the clock to `t`, charging the running task.
    fn advance(&mut self, t: Nanos) {
        if let Some(task) = self.current() {
            let ran = t - self.now;
            let task = &mut self.tasks[task];
            task.charge(ran);
        }
        self.now = t;
    }

    /// Forgets every measurement so far (CPU time, latencies, waits, samples): what follows
    /// is measured alone, after a warm-up.
    pub fn reset_measurements(&mut self) {
        self.tasks.iter_mut().for_each(SimTask::reset_measurements);
    }

    /// Runs the machine until the clock reads `end`.
    pub fn run_until(&mut self, end: Nanos) {
        while self.now < end {
            if self.rq.need_resched() {
                self.schedule();
            }
            self.drive_current();
            let next_tick = (self.now / self.config.tick_ns + 1) * self.config.tick_ns;
            let next_timer = self.timers.next();
            let work_done = self
                .current()
                .map_or(Nanos::MAX, |c| self.now + self.work_left(c));
            let t = next_tick.min(next_timer).min(work_done).min(end);
            self.advance(t);
            while let Some(task) = self.timers.pop_due(self.now) {
                let timer = Wakeup {
                    from_interrupt: true,
                    ..Wakeup::default()
                };
                self.wake(task, timer);
            }
            if self.now == next_tick {
                // The simulated tasks run in user mode.
                self.rq.tick(self.now, true);
            }
        }
    }
}
