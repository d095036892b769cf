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

mod lifecycle;
mod observe;
pub mod setup;
mod sleep;
pub mod trace;
pub mod waitqueue;

pub use lifecycle::{
    PermissionDenied, SpawnError, exec_done, exit, join, setuid, spawn, spawn_child, yield_now,
};
pub use observe::{
    TRACE_EVENTS, current_cpu_ns, current_if_unlocked, print_trace, switch_count, task_stats,
    trace_start, trace_stop, with_policy,
};
pub use sleep::{park, sleep, sleep_until, unpark, unpark_irq, wake_up_irq};
use sleep::{sleep_current, wake_up_from};
pub use waitqueue::WaitQueue;

use crate::arch::x86_64::switch::{initial_stack, switch_context};
use crate::config::Config;
use crate::mm::stack::KernelStack;
use crate::task::{State, Task, TaskId, TaskStats};
use crate::time::{self, clock};
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

/// The running task's id.
pub fn current() -> TaskId {
    with_sched(|s| s.current)
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
