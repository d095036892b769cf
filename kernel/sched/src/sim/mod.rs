//! A deterministic single-CPU simulator that drives any [`Policy`] with scripted tasks, in the
//! spirit of LinSched (cfs-semantics §10): a virtual nanosecond clock, an event queue ordered
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
pub mod workload;

pub use behavior::{Action, Behavior, Ctx};

use crate::policy::{ForkKind, Nanos, Policy, TaskId, Uid, Wakeup};
use crate::weights::Nice;
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

pub use crate::programs::Rng;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Runnable,
    Running,
    Sleeping,
    /// A vfork parent waiting for this child.
    VforkWait(TaskId),
    WaitChild,
    Exited,
}

/// Everything the simulation knows and measured about one task.
pub struct SimTask {
    /// The behaviour's name.
    pub name: String,
    /// The task's uid.
    pub uid: Uid,
    /// The task that created it, if any.
    pub parent: Option<TaskId>,
    behavior: Box<dyn Behavior>,
    state: State,
    run_left: Nanos,
    spin_until: Nanos,
    runnable_since: Option<Nanos>,
    woken: bool,
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

/// The simulated machine: one CPU, a policy, tasks and timers.
pub struct Sim<P: Policy> {
    /// The policy under test (public for inspection between runs).
    pub policy: P,
    config: SimConfig,
    now: Nanos,
    tasks: Vec<SimTask>,
    /// Timer wake-ups, by (time, sequence).
    timers: BTreeMap<(Nanos, u64), TaskId>,
    sequence: u64,
    current: Option<TaskId>,
    need_resched: bool,
    rng: Rng,
    /// Context switches so far.
    pub switches: u64,
}

impl<P: Policy> Sim<P> {
    /// A machine at time 0 with no tasks.
    pub fn new(policy: P, config: SimConfig) -> Self {
        Sim {
            policy,
            config,
            now: 0,
            tasks: Vec::new(),
            timers: BTreeMap::new(),
            sequence: 0,
            current: None,
            need_resched: false,
            rng: Rng::new(config.seed),
            switches: 0,
        }
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
        self.tasks.push(SimTask {
            name: behavior.name().into(),
            uid,
            parent,
            behavior,
            state: State::Runnable,
            run_left: 0,
            spin_until: 0,
            runnable_since: Some(self.now),
            woken: false,
            unreaped_children: 0,
            cpu_ns: 0,
            wake_latencies: Vec::new(),
            waits: Vec::new(),
            samples: Vec::new(),
            missed: 0,
        });
        self.tasks.len() - 1
    }

    /// Starts a task (no parent) now.
    pub fn spawn(&mut self, behavior: Box<dyn Behavior>, uid: Uid, nice: Nice) -> TaskId {
        let id = self.new_task(behavior, uid, None);
        self.need_resched |= self.policy.spawn(id, uid, nice, self.now);
        id
    }

    fn arm_timer(&mut self, task: TaskId, at: Nanos) {
        let at = if self.config.hrtimer {
            at
        } else {
            at.next_multiple_of(self.config.tick_ns)
        };
        self.sequence += 1;
        self.timers.insert((at.max(self.now), self.sequence), task);
    }

    fn wake(&mut self, task: TaskId, wakeup: Wakeup) {
        self.policy.enqueue(task, wakeup, self.now);
        let t = &mut self.tasks[task];
        t.state = State::Runnable;
        t.runnable_since = Some(self.now);
        t.woken = true;
        self.need_resched |= self.policy.check_preempt_wakeup(task, self.now);
    }

    /// The running task stops being runnable: out of the policy's queue, then switch.
    fn block(&mut self, task: TaskId, state: State) {
        self.policy.dequeue(task, self.now);
        self.tasks[task].state = state;
        self.need_resched = true;
    }

    /// Linux's `schedule()`: put the current task back, pick the next one.
    fn schedule(&mut self) {
        self.need_resched = false;
        if let Some(prev) = self.current.take() {
            self.policy.put_prev(prev, self.now);
            let t = &mut self.tasks[prev];
            if t.state == State::Running {
                t.state = State::Runnable;
                t.runnable_since = Some(self.now);
            }
        }
        let Some(next) = self.policy.pick_next(self.now) else {
            return;
        };
        let now = self.now;
        let t = &mut self.tasks[next];
        debug_assert_eq!(
            t.state,
            State::Runnable,
            "picked a task that is not runnable"
        );
        t.state = State::Running;
        if let Some(since) = t.runnable_since.take() {
            t.waits.push(now - since);
            if core::mem::take(&mut t.woken) {
                t.wake_latencies.push(now - since);
            }
        }
        self.switches += 1;
        self.current = Some(next);
    }

    /// CPU time the current task still wants before its next decision.
    fn work_left(&self, task: TaskId) -> Nanos {
        let t = &self.tasks[task];
        t.run_left.max(t.spin_until.saturating_sub(self.now))
    }

    /// Lets the running task make its zero-time decisions until it has CPU work or blocks.
    fn drive_current(&mut self) {
        let mut decisions = 0;
        while let Some(task) = self.current {
            if self.need_resched {
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
            let t = &mut self.tasks[task];
            let mut ctx = Ctx {
                now: self.now,
                task,
                rng: &mut self.rng,
                samples: &mut t.samples,
                missed: &mut t.missed,
            };
            let action = t.behavior.next(&mut ctx);
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
                self.block(task, State::Sleeping);
            }
            Action::SleepUntil(t) => {
                self.arm_timer(task, t);
                self.block(task, State::Sleeping);
            }
            Action::Spawn(behavior, kind) => {
                let uid = self.tasks[task].uid;
                let child = self.new_task(behavior, uid, Some(task));
                self.need_resched |= self.policy.fork(task, child, kind, now);
                if kind == ForkKind::Vfork {
                    self.block(task, State::VforkWait(child));
                }
            }
            Action::Exec => self.release_vfork_parent(task),
            Action::WaitChild => {
                let t = &mut self.tasks[task];
                if t.unreaped_children > 0 {
                    t.unreaped_children -= 1;
                } else {
                    self.block(task, State::WaitChild);
                }
            }
            Action::Exit => {
                self.policy.exit(task, now);
                self.tasks[task].state = State::Exited;
                self.need_resched = true;
                self.release_vfork_parent(task);
                if let Some(parent) = self.tasks[task].parent {
                    if self.tasks[parent].state == State::WaitChild {
                        self.wake(parent, Wakeup::default());
                    } else {
                        self.tasks[parent].unreaped_children += 1;
                    }
                }
            }
        }
    }

    fn release_vfork_parent(&mut self, child: TaskId) {
        if let Some(parent) = self.tasks[child].parent
            && self.tasks[parent].state == State::VforkWait(child)
        {
            self.wake(
                parent,
                Wakeup {
                    vfork_parent: true,
                    ..Wakeup::default()
                },
            );
        }
    }

    /// Advances the clock to `t`, charging the running task.
    fn advance(&mut self, t: Nanos) {
        if let Some(task) = self.current {
            let ran = t - self.now;
            let task = &mut self.tasks[task];
            task.cpu_ns += ran;
            task.run_left = task.run_left.saturating_sub(ran);
        }
        self.now = t;
    }

    /// Forgets every measurement so far (CPU time, latencies, waits, samples): what follows
    /// is measured alone, after a warm-up.
    pub fn reset_measurements(&mut self) {
        for t in &mut self.tasks {
            t.cpu_ns = 0;
            t.wake_latencies.clear();
            t.waits.clear();
            t.samples.clear();
            t.missed = 0;
        }
    }

    /// Runs the machine until the clock reads `end`.
    pub fn run_until(&mut self, end: Nanos) {
        while self.now < end {
            if self.current.is_none() || self.need_resched {
                self.schedule();
            }
            self.drive_current();
            let next_tick = (self.now / self.config.tick_ns + 1) * self.config.tick_ns;
            let next_timer = self.timers.keys().next().map_or(Nanos::MAX, |&(t, _)| t);
            let work_done = self
                .current
                .map_or(Nanos::MAX, |c| self.now + self.work_left(c));
            let t = next_tick.min(next_timer).min(work_done).min(end);
            self.advance(t);
            while let Some((&(at, seq), &task)) = self.timers.iter().next() {
                if at > self.now {
                    break;
                }
                self.timers.remove(&(at, seq));
                let timer = Wakeup {
                    from_interrupt: true,
                    ..Wakeup::default()
                };
                self.wake(task, timer);
            }
            if self.now == next_tick && self.current.is_some() {
                self.need_resched |= self.policy.tick(self.now);
            }
        }
    }
}
