//! The scheduler glue: the tasks, each CPU's runqueue that schedules them (`sched::rq::Rq`,
//! from the policy crate), `schedule()`, the wake-up path and the tick. It never decides who
//! runs, and never calls the policy itself: it tells a runqueue what happened, and the
//! runqueue asks the policy, in Linux's order (docs/scheduler.md §13).
//!
//! Locking and interrupts (docs/architecture.md, "Locks and interrupts"). All scheduler state,
//! every CPU's runqueue included, is behind one IRQ-safe spin lock, `SCHED` (interrupts off
//! while it is held: a timer interrupt arriving while a task held it would otherwise spin
//! forever in the handler), taken through `with_sched`. Operations that may wake, block or
//! start a task go through `change_then_reschedule`, which switches after the change — at
//! once in task context, at the interrupt's end in a handler. `schedule()` asserts its rules
//! in every build and releases the lock *before* switching stacks: the next task may be
//! anywhere, including in its own `schedule()` about to return, and must be able to take the
//! lock. Preemption from an interrupt happens after its `irq_exit` (`trap.rs`): the handler
//! calls `schedule()` on the interrupted task's stack; the task resumes there later and
//! returns from the interrupt as if nothing happened.

pub mod affinity;
pub mod balance;
mod credentials;
mod current;
mod debugger;
pub mod futex;
pub mod hotplug;
pub mod knobs;
pub mod loadavg;
mod observe;
pub mod proc;
pub mod procview;
pub mod setup;
mod sleep;
mod switch;
mod table;
pub mod trace;
pub mod waitqueue;
mod wakeup;

pub use credentials::{PermissionDenied, processes_of, set_task_nice, setuid, task_nice};
pub use current::{
    current, current_address_space, current_files, current_process, kills_pending,
    with_current_address_space,
};
pub use observe::{
    RECENT_EVENTS, TRACE_EVENTS, current_cpu_ns, current_if_unlocked, idle_cpu_ns, idle_ns_by_cpu,
    print_sched_debug, print_trace, switch_count, task_stats, trace_start, trace_stop, with_policy,
};
use proc::create::new_task;
pub use proc::create::{MAX_PROCESSES, SpawnError};
pub use proc::family::{
    WaitTarget, Zombie, has_child, parent_of, reap_child, set_exit_status, take_job_report,
    wait_child, wait_for_child,
};
pub use proc::lifecycle::{
    BOOT_TASK, exec_done, exit, join, join_unless, release_files, spawn, spawn_child,
};
pub use proc::process::{
    Clone, current_killed, current_name, current_uid, fork_process, kill_task, rename_current,
    replace_program, robust_list_of, set_robust_list, spawn_process, task_uid, unshare_files,
};
pub use proc::signal::signal_pending;
pub use proc::takeover::{hand_over_process, wait_to_lead};
pub use proc::threads::{
    blocked_signals, blocks, current_group, current_thread_times, group_of, live_threads_times,
    set_blocked_signals, set_clear_child_tid, set_waiting_for, suspend_mask, take_exit_addresses,
    threads_in, threads_of_task, with_thread_signals,
};
pub use setup::{TasksAlive, init, set_policy};
pub use sleep::{
    park, sleep, sleep_until, sleep_until_tick_boundary, sleep_until_woken, unpark, wake_task,
    wake_up, yield_now,
};
use sleep::{sleep_current, wake_up_from};
pub use switch::wait_for_exited_stacks;
use switch::{finish_switch, schedule};
pub use waitqueue::WaitQueue;

use crate::arch::irq;
use crate::percpu::this_cpu;
use crate::sync::{Rank, SpinLock};
use crate::task::{Slot, State, Task, TaskId};

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
pub use sched::ForkKind;
use sched::{Policy, Rq};

struct Scheduler {
    /// The runqueues, one per CPU up to the last online, indexed by its number (Linux's per-CPU
    /// `runqueues`): each has its own policy instance, its current and idle tasks, its
    /// `need_resched`, and the state and statistics of the tasks placed on it (by slot). A
    /// task is on one runqueue at a time, the one its [`Task::cpu`] names: placed there when
    /// it is made (`proc::create`), it stays there (balancing comes with the policy's
    /// multiprocessor half).
    rqs: Vec<Rq<dyn Policy + Send>>,
    /// Each AP's idle task, by CPU number (`None` for CPU 0, whose idle task has a slot,
    /// and for CPUs that did not come up): its boot flow, known by a slot no task has
    /// (`setup::idle_slot_of`), so that the APs move no task's slot.
    ap_idle: Vec<Option<Box<Task>>>,
    /// The machine's shape, the load balancer and the invariant's checker (`balance`).
    balancing: balance::BalanceState,
    /// The CPUs online, by number, in order: those `/proc/sched_debug` and
    /// `/proc/schedstat` list, and the only ones tasks are placed on (`hotplug` takes a
    /// CPU out and puts it back).
    online: Vec<usize>,
    /// The same CPUs, one bit each.
    online_mask: u64,
    /// The CPUs that came up at boot, one bit each (Linux's `cpu_present_mask`): those
    /// that can be online.
    present_mask: u64,
    /// Every task by slot (see [`crate::task`]): the policy knows tasks by slot.
    slots: Vec<Option<Box<Task>>>,
    free_slots: Vec<Slot>,
    /// Task id → slot, for the live tasks (and exited ones until their stack is freed).
    by_id: BTreeMap<TaskId, Slot>,
    /// The id the next task gets: ids are never reused.
    next_id: TaskId,
    /// The scheduling trace, while tracing (`trace=on`).
    trace: Option<trace::Trace>,
    /// The last few events, always kept: what gdb's `cfslab-trace` shows without `trace=on`.
    recent: trace::Trace,
    /// `log=trace`: every event goes to the console too, as it happens. Read from the log
    /// level once, when the scheduler starts (the level is set once, before), rather than
    /// asked of the logger at every switch.
    echo: bool,
}

/// The scheduler's state — every CPU's runqueue and the task table — behind one IRQ-safe
/// lock (interrupts are off while it is held: a timer interrupt arriving while a task held
/// it would spin forever in the handler). One lock for all the CPUs' runqueues, where Linux
/// has one per runqueue: the simplest rule that is right on several CPUs, until per-CPU
/// runqueue locks and their double-locking come with migration. gdb's helpers read its
/// data while it is held (see [`debugger`]).
static SCHED: SpinLock<Option<Scheduler>> = SpinLock::new(Rank::Sched, None);

/// The scheduler's lock (`runqueue()` in the kernel's vocabulary: `this_rq()`'s lock, which
/// every CPU shares for now).
#[inline(always)]
fn runqueue() -> &'static SpinLock<Option<Scheduler>> {
    &SCHED
}

/// The one way to the scheduler's state.
fn with_sched<R>(f: impl FnOnce(&mut Scheduler) -> R) -> R {
    f(runqueue().lock().as_mut().expect("scheduler not started"))
}

/// "Change state under the lock, then reschedule if needed": runs `f` on the scheduler and,
/// if it (or anything before it) asked for a reschedule, switches before returning — unless
/// this runs in an interrupt handler, whose switch waits for the handler's end
/// ([`preempt_from_interrupt`]). Every operation that may wake, block or start a task goes
/// through here.
fn change_then_reschedule<R>(f: impl FnOnce(&mut Scheduler) -> R) -> R {
    let mut sched = runqueue().lock();
    let s = sched.as_mut().expect("scheduler not started");
    let result = f(s);
    // The switch picks under the same lock, with interrupts off from the change on: a tick
    // in between could switch first, and this switch would be a second one for one reason.
    if s.this_rq().need_resched() && !this_cpu().in_interrupt() {
        let irq_were_on = switch::schedule_locked(sched);
        irq::restore(irq_were_on);
    }
    result
}

impl Scheduler {
    /// The running CPU's runqueue (Linux's `this_rq()`).
    fn this_rq(&self) -> &Rq<dyn Policy + Send> {
        &self.rqs[this_cpu().index()]
    }

    /// The running CPU's runqueue, to change.
    fn this_rq_mut(&mut self) -> &mut Rq<dyn Policy + Send> {
        &mut self.rqs[this_cpu().index()]
    }

    /// The CPU whose runqueue holds the task in `slot` (Linux's `task_cpu()`).
    fn cpu_of(&self, slot: Slot) -> usize {
        self.task_ref(slot).cpu
    }

    /// The runqueue that holds the task in `slot` (Linux's `task_rq()`).
    fn task_rq(&self, slot: Slot) -> &Rq<dyn Policy + Send> {
        &self.rqs[self.cpu_of(slot)]
    }

    /// The runqueue that holds the task in `slot`, to change.
    fn task_rq_mut(&mut self, slot: Slot) -> &mut Rq<dyn Policy + Send> {
        let cpu = self.cpu_of(slot);
        &mut self.rqs[cpu]
    }

    /// Whether `slot` holds an idle task (CPU 0's: an AP's has no slot yet, see
    /// `setup::idle_slot_of`). One lookup whatever the number of CPUs, so that a walk over
    /// every task costs the same on one CPU as on several.
    fn is_idle(&self, slot: Slot) -> bool {
        self.task_rq(slot).idle() == slot
    }

    fn current_id(&self) -> TaskId {
        self.task_ref(self.current_slot()).id
    }

    /// The running task's slot (on the running CPU): the per-CPU copy the switch keeps of
    /// its runqueue's `current`, read with one instruction on every system call's way.
    fn current_slot(&self) -> Slot {
        let slot = this_cpu().current_slot();
        debug_assert_eq!(slot, self.this_rq().current(), "the per-CPU current slot");
        slot
    }

    /// Where `slot`'s task is in its life.
    fn state(&self, slot: Slot) -> State {
        self.task_rq(slot).state(slot)
    }

    /// `slot`'s task has not exited.
    fn alive(&self, slot: Slot) -> bool {
        self.state(slot) != State::Exited
    }

    /// Tasks running or waiting for a CPU, the idle tasks aside (Linux's `nr_running()`,
    /// summed over the CPUs: what the load average, `/proc/stat` and `/proc/loadavg` count).
    fn runnable_tasks(&self) -> u64 {
        let tasks = self.slots.iter().flatten();
        tasks.filter(|t| self.is_runnable(t)).count() as u64
    }

    /// CPU `cpu`'s tasks running or waiting for it, its idle task aside (its runqueue's
    /// `nr_running`, as `/proc/sched_debug` shows it).
    fn runnable_on(&self, cpu: usize) -> u64 {
        let tasks = self.slots.iter().flatten();
        tasks
            .filter(|t| t.cpu == cpu && self.is_runnable(t))
            .count() as u64
    }

    /// `t` runs or waits for its CPU, and is not an idle task.
    fn is_runnable(&self, t: &Task) -> bool {
        !self.is_idle(t.slot) && matches!(self.state(t.slot), State::Running | State::Runnable)
    }

    /// A user process (or thread) that has not exited: what the process limit counts and
    /// what `kill(-1)` and PRIO_USER reach.
    fn is_live_process(&self, t: &Task) -> bool {
        t.address_space.is_some() && self.alive(t.slot)
    }

    /// The running task stops being runnable: it sleeps at the `schedule()` this asks for.
    fn block_current(&mut self, now: u64) {
        // A push (active or exec balancing) is for a task that stays runnable, as Linux's
        // stopper moves only a queued one: a task that sleeps first keeps its CPU. (A move
        // its affinity asks for — its CPU no longer allowed — stays marked.)
        let t = self.task(self.current_slot());
        if t.move_to.is_some() && t.affinity & 1 << t.cpu != 0 {
            t.move_to = None;
        }
        self.this_rq_mut().block_current(now);
    }
}

impl Scheduler {
    /// How the task in `slot` appears in trace events.
    pub(super) fn comm(&mut self, slot: Slot) -> trace::Comm {
        self.task(slot).comm
    }

    /// Records `kind` of event, about the task in `about`, at `now` while the task in
    /// `on_cpu` ran (`hardirq`: in the timer interrupt's handler): into the recent-events
    /// ring always, then on (`trace::publish`).
    pub(super) fn record(
        &mut self,
        now: u64,
        on_cpu: Slot,
        hardirq: bool,
        kind: trace::Kind,
        about: Slot,
    ) {
        let (current, task) = (self.comm(on_cpu), self.comm(about));
        let target_cpu = self.cpu_of(about) as u16;
        let flags = self.flags(hardirq);
        let event = self.recent.next_slot();
        *event = trace::Event {
            at: now,
            cpu: this_cpu().index() as u16,
            target_cpu,
            flags,
            current,
            kind,
            task,
        };
        trace::publish(event, &mut self.trace, self.echo);
    }

    /// The CPU's flags for an event recorded now (`hardirq`: in the timer interrupt).
    fn flags(&self, hardirq: bool) -> trace::Flags {
        trace::Flags {
            need_resched: self.this_rq().need_resched(),
            hardirq,
        }
    }
}

/// Where every new task starts (called by the switch trampoline, interrupts off).
pub extern "C" fn task_entry() -> ! {
    finish_switch();
    let (function, argument) = with_sched(|s| {
        let current = s.current_slot();
        s.task(current).entry.expect("a spawned task has an entry")
    });
    irq::enable();
    function(argument);
    exit()
}

/// The scheduler tick (from the timer interrupt), which found the CPU in ring 3 if
/// `user_mode`: the policy may ask for a preemption.
pub fn tick(now: u64, user_mode: bool) {
    with_sched(|s| {
        s.this_rq_mut().tick(now, user_mode);
        s.balance_tick(now);
        // The load average is the machine's: sampled once, by the boot CPU's tick.
        if this_cpu().index() == 0 {
            loadavg::tick(now, || s.runnable_tasks());
            s.check_invariant(now);
        }
    });
    if user_mode {
        this_cpu().count_user_tick();
    }
}

/// Called at the end of an interrupt handler, after `irq_exit` (interrupts off): switch if
/// the tick or a wake-up asked.
pub fn preempt_from_interrupt() {
    if with_sched(|s| s.this_rq().need_resched()) {
        schedule();
    }
}
