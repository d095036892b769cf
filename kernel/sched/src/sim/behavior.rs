//! What a simulated task is: a program ([`Behavior`]) that, each time it has no work left,
//! looks at the clock and its random numbers ([`Ctx`]) and says what it does next
//! ([`Action`]): run, spin, sleep, fork or vfork, exec, wait for a child, exit.

use super::Rng;
use crate::policy::{ForkKind, Nanos, TaskId};
use alloc::boxed::Box;
use alloc::vec::Vec;

/// What a task does next, decided by its [`Behavior`] whenever it has no work left.
pub enum Action {
    /// Use this much CPU time.
    Run(Nanos),
    /// Keep running until the clock reads this (however much CPU that takes).
    SpinUntil(Nanos),
    /// Sleep this long (a timer wakes the task).
    Sleep(Nanos),
    /// Sleep until this time.
    SleepUntil(Nanos),
    /// Create a child running `behavior`; with [`ForkKind::Vfork`] the parent sleeps until
    /// the child does [`Action::Exec`] or exits.
    Spawn(Box<dyn Behavior>, ForkKind),
    /// A vfork child "execs": its parent wakes up.
    Exec,
    /// Sleep until a child has exited (at once if one already has).
    WaitChild,
    /// End the task.
    Exit,
}

/// A task's program.
pub trait Behavior {
    /// The name reports group the task's figures under.
    fn name(&self) -> &str;
    /// The next action, decided while running at `ctx.now`.
    fn next(&mut self, ctx: &mut Ctx) -> Action;
}

/// What a behaviour sees and may record when it decides.
pub struct Ctx<'a> {
    /// The simulated clock.
    pub now: Nanos,
    /// The deciding task.
    pub task: TaskId,
    /// The simulation's random numbers.
    pub rng: &'a mut Rng,
    /// Samples the behaviour records (their meaning is the behaviour's).
    pub samples: &'a mut Vec<Nanos>,
    /// Events the behaviour counts (e.g. missed timer expiries).
    pub missed: &'a mut u64,
}
