//! The scheduler glue: one runqueue for the one CPU, `schedule()`, the wake-up path and the
//! tick hook. It never decides who runs: it tells the policy (from the `sched` crate) what
//! happened and asks it whom to run.
//!
//! Locking and interrupts. All scheduler state is behind one spin lock, `SCHED`, which is
//! only ever taken with interrupts off — otherwise a timer interrupt arriving while a task
//! holds it would spin forever in the handler. `schedule()` runs with interrupts off and
//! releases the lock *before* switching stacks: the next task may be anywhere, including in
//! its own `schedule()` about to return, and must be able to take the lock. Preemption
//! happens at the end of the timer interrupt (after its EOI): if the tick or a wake-up asked
//! for it, the handler calls `schedule()` on the interrupted task's stack; the task resumes
//! there later and returns from the interrupt as if nothing happened.

pub mod setup;
pub mod trace;
pub mod waitqueue;

pub use waitqueue::WaitQueue;

use crate::arch::x86_64::switch::{initial_stack, switch_context};
use crate::config::Config;
use crate::mm::stack::KernelStack;
use crate::task::{State, Task, TaskId, TaskStats};
use crate::time::{self, clock, hrtimer};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
pub use sched::ForkKind;
use sched::{Policy, Wakeup};
use spin::Mutex;
use x86_64::instructions::interrupts;

struct Scheduler {
    policy: Box<dyn Policy + Send>,
    tasks: Vec<Option<Box<Task>>>,
    current: TaskId,
    idle: TaskId,
    need_resched: bool,
    /// An exited task whose stack the next task to run frees.
    dead: Option<TaskId>,
    free_ids: Vec<TaskId>,
    /// The scheduling trace, while tracing.
    trace: Option<trace::Trace>,
    /// Switches into tasks that have since exited (see [`switch_count`]).
    exited_switches: u64,
}

static SCHED: Mutex<Option<Scheduler>> = Mutex::new(None);

/// Runs `f` on the scheduler with interrupts off.
fn with_sched<R>(f: impl FnOnce(&mut Scheduler) -> R) -> R {
    interrupts::without_interrupts(|| f(SCHED.lock().as_mut().expect("scheduler not started")))
}

impl Scheduler {
    fn task(&mut self, id: TaskId) -> &mut Task {
        self.tasks[id].as_mut().expect("live task")
    }

    /// How `id` appears in trace events.
    fn comm(&mut self, id: TaskId) -> trace::Comm {
        let idle = id == self.idle;
        let t = self.task(id);
        trace::Comm::new(id, &t.name, t.nice, idle)
    }

    fn add(&mut self, task: Task) -> TaskId {
        let id = self.free_ids.pop().unwrap_or(self.tasks.len());
        if id == self.tasks.len() {
            self.tasks.push(None);
        }
        self.tasks[id] = Some(Box::new(Task { id, ..task }));
        id
    }

    /// Puts the current task back, picks the next, and returns the stack pointers to switch
    /// with (`None` if the current task keeps the CPU).
    fn pick(&mut self, now: u64) -> Option<(*mut u64, u64)> {
        self.need_resched = false;
        let prev = self.current;
        if prev != self.idle {
            self.policy.put_prev(prev, now);
        }
        let p = self.task(prev);
        p.stats.cpu_ns += now - p.stats.switched_in_at;
        let prev_state = match p.state {
            State::Running | State::Runnable => 'R',
            State::Sleeping => 'S',
            State::Exited => 'X',
        };
        if p.state == State::Running {
            p.state = State::Runnable;
            p.stats.runnable_since = Some(now);
        }
        let next = self.policy.pick_next(now).unwrap_or(self.idle);
        let n = self.task(next);
        n.state = State::Running;
        n.stats.switched_in_at = now;
        if let Some(since) = n.stats.runnable_since.take() {
            n.stats.wait_ns += now - since;
            if core::mem::take(&mut n.stats.woken) {
                n.stats.wakeups += 1;
                n.stats.wake_latency_sum_ns += now - since;
                n.stats.wake_latency_max_ns = n.stats.wake_latency_max_ns.max(now - since);
            }
        }
        self.current = next;
        if next == prev {
            return None;
        }
        self.task(next).stats.switches += 1;
        if self.trace.is_some() {
            let event = trace::Event::Switch {
                at: now,
                prev: self.comm(prev),
                prev_state,
                next: self.comm(next),
            };
            self.trace.as_mut().unwrap().record(event);
        }
        let load = self.task(next).rsp;
        Some((&raw mut self.task(prev).rsp, load))
    }

    /// The running task stops being runnable (it will sleep at the next `schedule()`).
    fn block_current(&mut self, now: u64) {
        let id = self.current;
        self.task(id).state = State::Sleeping;
        self.policy.dequeue(id, now);
    }

    fn wake(&mut self, id: TaskId, wakeup: Wakeup, now: u64) {
        let Some(task) = self.tasks.get_mut(id).and_then(|t| t.as_mut()) else {
            return;
        };
        if task.state != State::Sleeping {
            return;
        }
        task.state = State::Runnable;
        task.stats.runnable_since = Some(now);
        task.stats.woken = true;
        if self.trace.is_some() {
            let event = trace::Event::Waking {
                at: now,
                current: self.comm(self.current),
                task: self.comm(id),
            };
            self.trace.as_mut().unwrap().record(event);
        }
        self.policy.enqueue(id, wakeup, now);
        if self.current == self.idle || self.policy.check_preempt_wakeup(id, now) {
            self.need_resched = true;
        }
    }
}

/// Switches to whichever task the policy picks. Interrupts must be off.
fn schedule() {
    let switch = SCHED
        .lock()
        .as_mut()
        .expect("scheduler not started")
        .pick(clock::now());
    if let Some((save, load)) = switch {
        // SAFETY: interrupts are off; `save` points into the previous task's boxed `Task`,
        // which lives until the task after it has run `finish_switch`; `load` was saved by
        // this function or made by `initial_stack` on the next task's live stack.
        unsafe { switch_context(save, load) };
        finish_switch();
    }
}

/// Runs in the task that was just switched to: frees the stack of a task that exited.
fn finish_switch() {
    let dead = SCHED.lock().as_mut().and_then(|s| {
        let id = s.dead.take()?;
        s.free_ids.push(id);
        let task = s.tasks[id].take()?;
        s.exited_switches += task.stats.switches;
        Some(task)
    });
    // Dropped after the lock: freeing the stack takes the memory lock.
    drop(dead);
}

/// Where every new task starts (called by the switch trampoline, interrupts off).
pub extern "C" fn task_entry() -> ! {
    finish_switch();
    let (function, argument) = with_sched(|s| {
        let current = s.current;
        s.task(current).entry.expect("a spawned task has an entry")
    });
    interrupts::enable();
    function(argument);
    exit()
}

fn idle_loop(_: u64) {
    loop {
        // `sti; hlt` atomically: an interrupt between the two could not be missed.
        interrupts::enable_and_hlt();
    }
}

fn new_task(
    name: &str,
    uid: u32,
    nice: i8,
    entry: Option<(fn(u64), u64)>,
    stack: Option<KernelStack>,
) -> Task {
    let rsp = stack.as_ref().map_or(0, |s| {
        // SAFETY: a fresh stack, mapped and unused.
        unsafe { initial_stack(s.top()) }
    });
    Task {
        id: 0,
        name: String::from(name),
        uid,
        nice,
        state: State::Runnable,
        entry,
        _stack: stack,
        rsp,
        waiters: Vec::new(),
        vfork_parent: None,
        parked: false,
        unpark_token: false,
        stats: TaskStats::default(),
    }
}

/// Starts multitasking: the boot flow becomes task 0 ("main", uid 0), an idle task waits
/// for when nothing is runnable, and the tick starts driving the policy.
pub fn init(config: &Config) {
    let policy = setup::policy_from(config, time::tick_ns());
    let idle_stack = KernelStack::new().expect("no memory for the idle task's stack");
    interrupts::without_interrupts(|| {
        let now = clock::now();
        let mut s = Scheduler {
            policy,
            tasks: Vec::new(),
            current: 0,
            idle: 0,
            need_resched: false,
            dead: None,
            free_ids: Vec::new(),
            trace: None,
            exited_switches: 0,
        };
        let main = s.add(new_task("main", 0, 0, None, None));
        s.idle = s.add(new_task(
            "idle",
            0,
            0,
            Some((idle_loop, 0)),
            Some(idle_stack),
        ));
        s.policy.spawn(main, 0, 0, now);
        let picked = s.policy.pick_next(now);
        debug_assert_eq!(picked, Some(main));
        s.current = main;
        let m = s.task(main);
        m.state = State::Running;
        m.stats.switched_in_at = now;
        *SCHED.lock() = Some(s);
    });
    time::set_tick_handler(tick);
    time::start_tick();
    if config.trace {
        trace_start(TRACE_EVENTS);
    }
}

/// Events the ring keeps with `trace=on` (about 5 MB).
pub const TRACE_EVENTS: usize = 65_536;

/// Starts (or restarts, emptied) tracing into a ring of `capacity` events. Returns the
/// [`switch_count`] at that moment.
pub fn trace_start(capacity: usize) -> u64 {
    let ring = trace::Trace::new(capacity);
    with_sched(|s| {
        s.trace = Some(ring);
        s.switches()
    })
}

/// Stops tracing; returns the trace and the [`switch_count`] at that moment.
pub fn trace_stop() -> (Option<trace::Trace>, u64) {
    with_sched(|s| (s.trace.take(), s.switches()))
}

/// Prints a trace between the markers tools look for.
pub fn print_trace(trace: &trace::Trace) {
    crate::println!("--- TRACE BEGIN ---");
    crate::arch::x86_64::serial::with_console(|out| trace.write_ftrace(out).ok());
    crate::println!("--- TRACE END ---");
}

/// Context switches so far, summed over every task's statistics (exited ones included).
pub fn switch_count() -> u64 {
    with_sched(|s| s.switches())
}

impl Scheduler {
    fn switches(&self) -> u64 {
        self.exited_switches
            + self
                .tasks
                .iter()
                .flatten()
                .map(|t| t.stats.switches)
                .sum::<u64>()
    }
}

/// Replaces the policy, e.g. for a test comparing policies in one boot. Only the boot task
/// may exist besides the idle task: it is registered with the new policy and keeps running.
pub fn set_policy(config: &Config) {
    let policy = setup::policy_from(config, time::tick_ns());
    with_sched(|s| {
        let live = s
            .tasks
            .iter()
            .flatten()
            .filter(|t| t.state != State::Exited)
            .count();
        assert_eq!(
            live, 2,
            "set_policy with tasks other than main and idle alive"
        );
        let now = clock::now();
        s.policy = policy;
        s.policy.spawn(s.current, 0, 0, now);
        let picked = s.policy.pick_next(now);
        debug_assert_eq!(picked, Some(s.current));
    });
}

/// Why a task could not be started.
#[derive(Debug)]
pub enum SpawnError {
    /// No memory for its stack.
    OutOfMemory,
}

/// Starts a kernel thread running `entry(argument)` as `uid` at `nice`. It may run at once if
/// the policy says it should preempt the caller.
pub fn spawn(
    entry: fn(u64),
    argument: u64,
    name: &str,
    uid: u32,
    nice: i8,
) -> Result<TaskId, SpawnError> {
    let stack = KernelStack::new().map_err(|_| SpawnError::OutOfMemory)?;
    let task = new_task(name, uid, nice, Some((entry, argument)), Some(stack));
    let (id, preempt) = with_sched(|s| {
        let now = clock::now();
        let id = s.add(task);
        s.task(id).stats.runnable_since = Some(now);
        let preempt = s.policy.spawn(id, uid, nice, now);
        s.need_resched |= preempt;
        (id, s.need_resched)
    });
    if preempt {
        interrupts::without_interrupts(schedule);
    }
    Ok(id)
}

/// Starts a child of the running task, with its uid and nice, running `entry(argument)`
/// (Linux's fork, placed by the policy as a fork). With [`ForkKind::Vfork`] the caller sleeps
/// until the child calls [`exec_done`] or exits, as a vfork parent does.
pub fn spawn_child(
    entry: fn(u64),
    argument: u64,
    name: &str,
    kind: ForkKind,
) -> Result<TaskId, SpawnError> {
    let stack = KernelStack::new().map_err(|_| SpawnError::OutOfMemory)?;
    interrupts::without_interrupts(|| {
        let switch = with_sched(|s| {
            let now = clock::now();
            let parent = s.current;
            let (uid, nice) = (s.task(parent).uid, s.task(parent).nice);
            let id = s.add(new_task(
                name,
                uid,
                nice,
                Some((entry, argument)),
                Some(stack),
            ));
            s.task(id).stats.runnable_since = Some(now);
            s.need_resched |= s.policy.fork(parent, id, kind, now);
            if kind == ForkKind::Vfork {
                s.task(id).vfork_parent = Some(parent);
                s.block_current(now);
                s.need_resched = true;
            }
            (id, s.need_resched)
        });
        if switch.1 {
            schedule();
        }
        Ok(switch.0)
    })
}

/// The running task "execs": a vfork parent waiting for it wakes up.
pub fn exec_done() {
    interrupts::without_interrupts(|| {
        let preempt = with_sched(|s| {
            let me = s.current;
            if let Some(parent) = s.task(me).vfork_parent.take() {
                s.wake(parent, Wakeup { vfork_parent: true }, clock::now());
            }
            s.need_resched
        });
        if preempt {
            schedule();
        }
    });
}

/// Only root may change uids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PermissionDenied;

/// Changes the running task's uid (Linux's setuid, with the scheduler told as
/// `sched_move_task` was: with per-uid groups the task moves to the new uid's group).
pub fn setuid(uid: u32) -> Result<(), PermissionDenied> {
    with_sched(|s| {
        let me = s.current;
        if s.task(me).uid != 0 {
            return Err(PermissionDenied);
        }
        s.task(me).uid = uid;
        s.policy.set_uid(me, uid, clock::now());
        Ok(())
    })
}

/// Looks into the policy (for reports, tests and debugging).
pub fn with_policy<R>(f: impl FnOnce(&dyn Policy) -> R) -> R {
    with_sched(|s| f(&*s.policy))
}

/// The running task's id, without waiting for the scheduler lock (for fault reports, which
/// may come while it is held).
pub fn current_if_unlocked() -> Option<TaskId> {
    SCHED.try_lock().and_then(|s| s.as_ref().map(|s| s.current))
}

/// The running task's id.
pub fn current() -> TaskId {
    with_sched(|s| s.current)
}

/// Gives up the CPU if the policy has someone else to run.
pub fn yield_now() {
    interrupts::without_interrupts(|| {
        let others = SCHED
            .lock()
            .as_mut()
            .expect("scheduler not started")
            .policy
            .yield_now(clock::now());
        if others {
            schedule();
        }
    });
}

/// Ends the running task: waiters wake, and the next task frees its stack.
pub fn exit() -> ! {
    interrupts::disable();
    {
        let mut guard = SCHED.lock();
        let s = guard.as_mut().expect("scheduler not started");
        let now = clock::now();
        let id = s.current;
        s.task(id).state = State::Exited;
        s.policy.exit(id, now);
        for waiter in core::mem::take(&mut s.task(id).waiters) {
            s.wake(waiter, Wakeup::default(), now);
        }
        if let Some(parent) = s.task(id).vfork_parent.take() {
            s.wake(parent, Wakeup { vfork_parent: true }, now);
        }
        s.dead = Some(id);
    }
    schedule();
    unreachable!("an exited task was scheduled again");
}

/// Sleeps until the clock reads `deadline` (rounded up to a tick with `hrtimer=off`).
pub fn sleep_until(deadline: u64) {
    interrupts::without_interrupts(|| {
        with_sched(|s| {
            s.block_current(clock::now());
            hrtimer::start(time::sleep_expiry(deadline), sleep_timer, s.current as u64);
        });
        schedule();
    });
}

/// Puts the running task to sleep until someone wakes it (its waker must know it: a wait
/// queue, a timer). Interrupts must be off.
fn sleep_current() {
    with_sched(|s| s.block_current(clock::now()));
    schedule();
}

/// Wakes `tasks` from task context, switching at once if the policy says a wakee should
/// preempt the caller. Interrupts must be off.
fn wake_up_from(tasks: &[TaskId]) {
    let preempt = with_sched(|s| {
        let now = clock::now();
        for &task in tasks {
            s.wake(task, Wakeup::default(), now);
        }
        s.need_resched
    });
    if preempt {
        schedule();
    }
}

/// Sleeps for `ns` nanoseconds.
pub fn sleep(ns: u64) {
    sleep_until(clock::now() + ns);
}

fn sleep_timer(task: u64, now: u64) {
    wake_up_irq(task as TaskId, now);
}

/// Wakes `task` from interrupt context (a timer callback); the switch, if the policy wants
/// one, happens when the interrupt returns.
pub fn wake_up_irq(task: TaskId, now: u64) {
    if let Some(s) = SCHED.lock().as_mut() {
        s.wake(task, Wakeup::default(), now);
    }
}

/// Sleeps until [`unpark`] (or [`unpark_irq`]) names the running task — at once if that
/// already happened since the last `park` (the wake-up is remembered, so it cannot be lost).
pub fn park() {
    interrupts::without_interrupts(|| {
        let must_sleep = with_sched(|s| {
            let me = s.current;
            if core::mem::take(&mut s.task(me).unpark_token) {
                return false;
            }
            s.task(me).parked = true;
            s.block_current(clock::now());
            true
        });
        if must_sleep {
            schedule();
        }
    });
}

/// Lets `task` return from [`park`] (now, or at its next `park`), from interrupt context.
pub fn unpark_irq(task: TaskId, now: u64) {
    if let Some(s) = SCHED.lock().as_mut() {
        s.unpark(task, now);
    }
}

/// Lets `task` return from [`park`], from task context (switching if the policy says so).
pub fn unpark(task: TaskId) {
    interrupts::without_interrupts(|| {
        let preempt = with_sched(|s| {
            s.unpark(task, clock::now());
            s.need_resched
        });
        if preempt {
            schedule();
        }
    });
}

impl Scheduler {
    fn unpark(&mut self, id: TaskId, now: u64) {
        let Some(task) = self.tasks.get_mut(id).and_then(|t| t.as_mut()) else {
            return;
        };
        if core::mem::take(&mut task.parked) {
            self.wake(id, Wakeup::default(), now);
        } else {
            task.unpark_token = true;
        }
    }
}

/// Waits until task `id` has exited (at once if it already has).
pub fn join(id: TaskId) {
    interrupts::without_interrupts(|| {
        let must_wait = with_sched(|s| {
            let me = s.current;
            match s.tasks.get_mut(id).and_then(|t| t.as_mut()) {
                Some(target) if target.state != State::Exited => {
                    target.waiters.push(me);
                    s.block_current(clock::now());
                    true
                }
                _ => false,
            }
        });
        if must_wait {
            schedule();
        }
    });
}

/// The scheduler tick (from the timer interrupt): the policy may ask for a preemption.
fn tick(now: u64) {
    if let Some(s) = SCHED.lock().as_mut()
        && s.current != s.idle
        && s.policy.tick(now)
    {
        s.need_resched = true;
    }
}

/// Called at the end of the timer interrupt handler: switch if the tick or a wake-up asked.
pub fn preempt_from_interrupt() {
    let needed = SCHED.lock().as_ref().is_some_and(|s| s.need_resched);
    if needed {
        schedule();
    }
}

/// A copy of a task's statistics, name, uid and nice.
pub fn task_stats(id: TaskId) -> Option<(String, u32, i8, TaskStats)> {
    with_sched(|s| {
        let now = clock::now();
        let running = s.current == id;
        let t = s.tasks.get(id)?.as_ref()?;
        let mut stats = t.stats;
        if running {
            stats.cpu_ns += now - stats.switched_in_at;
        }
        Some((t.name.clone(), t.uid, t.nice, stats))
    })
}
