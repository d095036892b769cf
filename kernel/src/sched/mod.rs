//! The scheduler glue: one runqueue for the one CPU, `schedule()`, the wake-up path and the
//! tick hook. It never decides who runs: it tells the policy (from the `sched` crate) what
//! happened and asks it whom to run.
//!
//! Locking and interrupts. All scheduler state is behind one spin lock, `SCHED`, taken only
//! through `with_sched`, which turns interrupts off first — otherwise a timer interrupt
//! arriving while a task holds it would spin forever in the handler. Operations that may
//! switch tasks go through `change_then_reschedule`; `schedule()` and the wake-up path
//! assert that interrupts are off. `schedule()` runs with interrupts off and
//! releases the lock *before* switching stacks: the next task may be anywhere, including in
//! its own `schedule()` about to return, and must be able to take the lock. Preemption
//! happens at the end of the timer interrupt (after its EOI): if the tick or a wake-up asked
//! for it, the handler calls `schedule()` on the interrupted task's stack; the task resumes
//! there later and returns from the interrupt as if nothing happened.

mod credentials;
mod current;
mod debugger;
pub mod knobs;
mod lifecycle;
mod observe;
mod process;
pub mod procview;
pub mod setup;
mod sleep;
mod switch;
mod takeover;
mod threads;
pub mod trace;
pub mod waitqueue;

pub use credentials::{PermissionDenied, processes_of, set_task_nice, setuid, task_nice};
pub use current::{current, current_process, kills_pending};
pub use lifecycle::{
    BOOT_TASK, MAX_PROCESSES, SpawnError, exec_done, exit, join, join_unless, reap_child, spawn,
    spawn_child, try_wait_child, wait_child, yield_now,
};
pub use observe::{
    RECENT_EVENTS, TRACE_EVENTS, current_cpu_ns, current_if_unlocked, idle_cpu_ns,
    print_sched_debug, print_trace, switch_count, task_stats, trace_start, trace_stop, with_policy,
};
pub use process::{
    Clone, current_address_space, current_files, current_killed, current_name, current_uid,
    fork_process, has_child, kill_task, kill_task_irq, parent_of, replace_program, spawn_process,
    task_uid,
};
pub use sleep::{
    park, sleep, sleep_until, sleep_until_tick_boundary, sleep_until_woken, unpark, unpark_irq,
    wake_task, wake_up_irq,
};
use sleep::{sleep_current, wake_up_from};
use switch::{finish_switch, schedule};
pub use takeover::{hand_over_process, wait_to_lead};
pub use threads::{
    blocked_signals, blocks, current_group, current_thread_times, group_of, live_threads_times,
    set_blocked_signals, set_clear_child_tid, take_clear_child_tid, threads_in, threads_of_task,
};
pub use waitqueue::WaitQueue;

use crate::arch::x86_64::switch::initial_stack;
use crate::config::Config;
use crate::mm::stack::KernelStack;
use crate::task::{Slot, State, Task, TaskId, TaskStats};
use crate::time::{self, clock};
use alloc::boxed::Box;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use alloc::vec::Vec;
pub use sched::ForkKind;
use sched::{Policy, Wakeup};
use spin::mutex::SpinMutex;
use x86_64::instructions::interrupts;

struct Scheduler {
    policy: Box<dyn Policy + Send>,
    /// Every task by slot (see [`crate::task`]): the policy knows tasks by slot.
    slots: Vec<Option<Box<Task>>>,
    free_slots: Vec<Slot>,
    /// Task id → slot, for the live tasks (and exited ones until their stack is freed).
    by_id: BTreeMap<TaskId, Slot>,
    /// The id the next task gets: ids are never reused.
    next_id: TaskId,
    /// The running task's slot.
    current: Slot,
    idle: Slot,
    need_resched: bool,
    /// The scheduling trace, while tracing (`trace=on`).
    trace: Option<trace::Trace>,
    /// The last few events, always kept: what gdb's `cfslab-trace` shows without `trace=on`.
    recent: trace::Trace,
    /// The running task is giving the CPU up with `yield_now`, which read the clock at this
    /// time (the trace shows `R`, not `R+`). The switch that follows at once takes the same
    /// time as its own, as Linux's `yield_task_fair` asks with `rq_clock_skip_update`: the
    /// policy has just charged the task, and a second charge of a few instructions would
    /// only repeat `update_curr`'s work.
    yielded_at: Option<u64>,
    /// Switches into tasks that have since exited (see [`switch_count`]).
    exited_switches: u64,
}

/// The scheduler's state. A plain spin lock (`SpinMutex`), whose data gdb's helpers can
/// reach while it is held (see [`debugger`]).
static SCHED: SpinMutex<Option<Scheduler>> = SpinMutex::new(None);

/// The one way to the scheduler's state: interrupts go off (a timer interrupt arriving while
/// a task held the lock would spin forever in the handler), then the lock is taken. Nested
/// calls from code that already has interrupts off (interrupt handlers, `schedule`) are fine.
fn with_sched<R>(f: impl FnOnce(&mut Scheduler) -> R) -> R {
    interrupts::without_interrupts(|| f(SCHED.lock().as_mut().expect("scheduler not started")))
}

/// "Change state under the lock, then reschedule if needed": runs `f` on the scheduler and,
/// if it (or anything before it) asked for a reschedule, switches before returning. Every
/// task-context operation that may wake, block or start a task goes through here.
fn change_then_reschedule<R>(f: impl FnOnce(&mut Scheduler) -> R) -> R {
    interrupts::without_interrupts(|| {
        let (result, resched) = with_sched(|s| {
            let result = f(s);
            (result, s.need_resched)
        });
        if resched {
            schedule();
        }
        result
    })
}

impl Scheduler {
    fn task(&mut self, slot: Slot) -> &mut Task {
        self.slots[slot].as_mut().expect("live task")
    }

    /// The task with id `id`, if it has not exited (or exited but is not freed yet).
    fn task_by_id(&mut self, id: TaskId) -> Option<&mut Task> {
        let slot = *self.by_id.get(&id)?;
        self.slots[slot].as_deref_mut()
    }

    fn current_id(&self) -> TaskId {
        self.slots[self.current].as_ref().expect("live task").id
    }

    /// Gives `task` a fresh id and a slot; returns both.
    fn add(&mut self, task: Task) -> (TaskId, Slot) {
        let slot = self.free_slots.pop().unwrap_or(self.slots.len());
        if slot == self.slots.len() {
            self.slots.push(None);
        }
        let id = self.next_id;
        self.next_id += 1;
        let mut task = Box::new(Task { id, slot, ..task });
        task.refresh_comm();
        self.slots[slot] = Some(task);
        self.by_id.insert(id, slot);
        (id, slot)
    }

    /// The running task stops being runnable: it sleeps at the `schedule()` this asks for.
    fn block_current(&mut self, now: u64) {
        let slot = self.current;
        self.task(slot).state = State::Sleeping;
        self.policy.dequeue(slot, now);
        self.need_resched = true;
    }

    /// Wakes task `id` if it sleeps (an id of a task that has exited is ignored).
    fn wake(&mut self, id: TaskId, wakeup: Wakeup, now: u64) {
        debug_assert!(
            !interrupts::are_enabled(),
            "wake-ups run with interrupts off"
        );
        let Some(task) = self.task_by_id(id) else {
            return;
        };
        if task.state != State::Sleeping {
            return;
        }
        task.state = State::Runnable;
        task.stats.runnable_since = Some(now);
        task.stats.woken = true;
        let slot = task.slot;
        self.record(now, self.current, wakeup.from_interrupt, |s| {
            trace::Kind::Waking { task: s.comm(slot) }
        });
        self.policy.enqueue(slot, wakeup, now);
        if self.current == self.idle || self.policy.check_preempt_wakeup(slot, now) {
            self.need_resched = true;
        }
    }
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
    parent: Option<TaskId>,
) -> Task {
    let rsp = stack.as_ref().map_or(0, |s| {
        // SAFETY: a fresh stack, mapped and unused.
        unsafe { initial_stack(s.top()) }
    });
    Task {
        id: 0,
        slot: 0,
        kernel_stack_top: stack.as_ref().map_or(0, KernelStack::top),
        address_space: None,
        user_start: None,
        fork_frame: None,
        user_cpu: None,
        files: None,
        group: None,
        clear_child_tid: 0,
        set_tid: [0; 2],
        blocked_signals: 0,
        killed: None,
        // Made again with the id when the task is added (`Scheduler::add`).
        comm: trace::Comm::new(0, name, nice, false),
        name: String::from(name),
        uid,
        nice,
        state: State::Runnable,
        // Set when the task starts (`Scheduler::start`); the boot and idle tasks: at boot.
        started_at: 0,
        entry,
        _stack: stack,
        rsp,
        waiters: Vec::new(),
        vfork_parent: None,
        parent,
        children: 0,
        exited_children: VecDeque::new(),
        waiting_for_child: false,
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
            slots: Vec::new(),
            free_slots: Vec::new(),
            by_id: BTreeMap::new(),
            next_id: 0,
            current: 0,
            idle: 0,
            need_resched: false,
            trace: None,
            recent: trace::Trace::new(RECENT_EVENTS),
            yielded_at: None,
            exited_switches: 0,
        };
        let (_, main) = s.add(new_task("main", 0, 0, None, None, None));
        (_, s.idle) = s.add(new_task(
            "idle",
            0,
            0,
            Some((idle_loop, 0)),
            Some(idle_stack),
            None,
        ));
        // Linux's idle task appears in events as `swapper/0`, pid 0.
        let idle = s.task(s.idle);
        idle.comm = trace::Comm::new(idle.id, &idle.name, idle.nice, true);
        s.policy.spawn(main, 0, 0, now);
        let picked = s.policy.pick_next(now);
        debug_assert_eq!(picked, Some(main));
        s.current = main;
        let m = s.task(main);
        m.state = State::Running;
        m.stats.switched_in_at = now;
        *SCHED.lock() = Some(s);
    });
    // Nothing in the kernel calls gdb's entry point; naming it here keeps the linker from
    // dropping it (and the text buffer it writes).
    core::hint::black_box(debugger::cfslab_gdb_dump as extern "C" fn(u64, u64) -> u64);
    time::set_tick_handler(tick);
    time::start_tick();
    if config.trace {
        trace_start(TRACE_EVENTS);
    }
}

/// Tasks still alive other than the boot task and the idle task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TasksAlive(pub usize);

/// Replaces the policy, e.g. between two lab scenarios. Only the boot task may exist besides
/// the idle task (the caller reaps every task it started first, see [`wait_child`]): it is
/// registered with the new policy and keeps running.
pub fn set_policy(config: &Config) -> Result<(), TasksAlive> {
    let policy = setup::policy_from(config, time::tick_ns());
    with_sched(|s| {
        let live = s
            .slots
            .iter()
            .flatten()
            .filter(|t| t.state != State::Exited)
            .count();
        if live != 2 {
            return Err(TasksAlive(live - 2));
        }
        let now = clock::now();
        s.policy = policy;
        s.policy.spawn(s.current, 0, 0, now);
        let picked = s.policy.pick_next(now);
        debug_assert_eq!(picked, Some(s.current));
        Ok(())
    })
}

/// The scheduler tick (from the timer interrupt): the policy may ask for a preemption.
fn tick(now: u64) {
    with_sched(|s| {
        if s.current == s.idle {
            return;
        }
        let current = s.current;
        let stats = &mut s.task(current).stats;
        if crate::time::tick_interrupted_user() {
            stats.user_ticks += 1;
        } else {
            stats.system_ticks += 1;
        }
        if s.policy.tick(now) {
            s.need_resched = true;
        }
    });
}

/// Called at the end of the timer interrupt handler (interrupts off): switch if the tick or
/// a wake-up asked.
pub fn preempt_from_interrupt() {
    if with_sched(|s| s.need_resched) {
        schedule();
    }
}
