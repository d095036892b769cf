//! Making a task: the one path every new task takes — a kernel thread, a user process, a
//! fork, a vfork, a thread (Linux's `copy_process` + `wake_up_new_task`).
//!
//! A [`NewTask`] says what differs: its code, how the policy places it (a newcomer, or the
//! running task's fork), whether it is the running task's child, and for a user task the
//! process it belongs to. [`create`] does the rest in one order: a place under the process
//! limit, a kernel stack, then under the scheduler's lock the task itself, its process, the
//! runqueue's placement, the trace, and for a vfork the parent's sleep.

use super::lifecycle::task_entry;
use super::thread_group::{InheritedActions, ThreadGroup};
use crate::arch::switch::initial_stack;
use crate::arch::user_mode::TrapFrame;
use crate::arch::user_state::UserCpuState;
use crate::mm::stack::KernelStack;
use crate::percpu::this_cpu;
use crate::sched::{Scheduler, change_then_reschedule, trace};
use crate::task::{Context, Slot, Task, TaskId};
use crate::time::clock;
use crate::user::address_space::AddressSpace;
use crate::user::files::Files;
use ::sched::ForkKind;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};
use sched::smp::domains::Flags;

/// How many user processes (and threads) may be alive at once: a fork bomb meets EAGAIN
/// here, as Linux's meets RLIMIT_NPROC and threads-max, long before memory runs out
/// (each costs at least a 64 KiB kernel stack and its page tables).
pub const MAX_PROCESSES: usize = 256;

/// Why a task could not be started.
#[derive(Debug)]
pub enum SpawnError {
    /// No memory for its stack.
    OutOfMemory,
    /// [`MAX_PROCESSES`] user processes are alive already (fork gives EAGAIN).
    TooManyProcesses,
}

/// How the policy places a new task.
#[derive(Debug, Clone, Copy)]
pub(in crate::sched) enum Placement {
    /// A newcomer with its own uid and nice (the kernel starts it).
    Spawn { uid: u32, nice: i8 },
    /// The running task's fork: the parent's uid and nice, the policy's fork placement.
    Fork(ForkKind),
}

/// Which process a new user task belongs to.
pub(in crate::sched) enum Group {
    /// A new one that it leads.
    New,
    /// A new one that it leads, forked from the running task's: the inherited actions.
    Forked(InheritedActions),
    /// The running task's own: a thread.
    Same,
}

/// What makes a new task a user task.
pub(in crate::sched) struct Process {
    pub space: Arc<AddressSpace>,
    pub files: Files,
    pub group: Group,
    pub cpu: Box<UserCpuState>,
    /// A new program's entry and stack pointer (`None` after a fork: `fork_frame`).
    pub user_start: Option<(u64, u64)>,
    /// A fork's first return to ring 3: its parent's registers, rax = 0.
    pub fork_frame: Option<Box<TrapFrame>>,
    pub set_tid: [u64; 2],
    pub clear_child_tid: u64,
}

/// A task to make.
pub(in crate::sched) struct NewTask<'a> {
    /// Its name (`None`: the running task's, as after a fork).
    pub name: Option<&'a str>,
    /// Its code and argument.
    pub entry: (fn(u64), u64),
    pub placement: Placement,
    /// A child of the running task (counted, and reaped by `wait`); else a thread, no
    /// one's child, which ends by itself.
    pub child: bool,
    /// `None` for a kernel thread.
    pub process: Option<Process>,
}

/// Makes `new`. It may run at once if the policy says it should preempt the caller; it can
/// read its own id with [`crate::sched::current`] from its first instruction.
pub(in crate::sched) fn create(new: NewTask) -> Result<TaskId, SpawnError> {
    let place = match new.process {
        Some(_) => Some(ProcessPlace::reserve()?),
        None => None,
    };
    let stack = KernelStack::new().map_err(|_| SpawnError::OutOfMemory)?;
    let id = change_then_reschedule(|s| {
        let now = clock::now();
        let (parent_slot, parent) = (s.current_slot(), s.current_id());
        let p = s.task(parent_slot);
        let (uid, nice) = match new.placement {
            Placement::Spawn { uid, nice } => (uid, nice),
            Placement::Fork(_) => (p.uid, p.nice),
        };
        let name = new.name.map_or_else(|| p.name.clone(), String::from);
        let inherited = (p.blocked_signals, p.altstack, p.group.clone());
        let child_of = new.child.then_some(parent);
        let (task, mut context) = new_task(&name, uid, nice, Some(new.entry), Some(stack));
        let affinity = s.context(parent_slot).affinity;
        let (here, cpu) = (this_cpu().index(), s.cpu_for_new_task(affinity));
        task.cpu.set(cpu);
        context.affinity = affinity;
        let (id, slot) = s.start(task, child_of, now);
        crate::sched::wakelist::note_affinity(slot, affinity);
        if let Some(process) = new.process {
            s.task(slot).attach(process, &mut context, id, inherited);
        }
        let t = s.task_ref(slot);
        (context.id, context.process) = (id, t.group.as_ref().map_or(id, |g| g.leader));
        context.comm = t.comm(false);
        let asked_before = s.rqs[cpu].need_resched();
        match new.placement {
            Placement::Fork(kind) if cpu == here => {
                s.this_rq_mut().fork(slot, context, kind, now);
            }
            // On another CPU the parent's policy sets the child up and the other CPU's
            // queues it, as its era did (`sched::rq::Rq::fork_away`).
            Placement::Fork(_) => {
                let moving = s.this_rq_mut().fork_away(slot, now);
                let wakeup = ::sched::Wakeup::default();
                s.rqs[cpu].attach(slot, (moving, context), wakeup, now);
            }
            Placement::Spawn { uid, nice } => s.rqs[cpu].spawn(slot, context, (uid, nice), now),
        }
        s.rqs[cpu].kick_if_asked(asked_before);
        s.record_new(slot, now);
        if let Placement::Fork(ForkKind::Vfork) = new.placement {
            s.task(slot).vfork_parent = Some(parent);
            s.block_current(now);
        }
        id
    });
    if let Some(place) = place {
        place.keep();
    }
    Ok(id)
}

impl Task {
    /// Makes the task `id` a user task of `process`; a fork or a thread inherits the
    /// parent's blocked signals, a fork its alternate signal stack (a thread runs on a stack
    /// of its own, so it starts without one, as Linux's CLONE_VM does), and a thread its
    /// group.
    fn attach(
        &mut self,
        process: Process,
        context: &mut Context,
        id: TaskId,
        parent: (
            u64,
            crate::user::signal::altstack::AltStack,
            Option<Arc<ThreadGroup>>,
        ),
    ) {
        let (blocked, altstack, parent_group) = parent;
        let forked = matches!(process.group, Group::Forked(_));
        self.group = Some(match process.group {
            Group::New => Arc::new(ThreadGroup::new(id)),
            Group::Forked(inherited) => Arc::new(ThreadGroup::forked(id, inherited)),
            Group::Same => {
                let group = parent_group.expect("a thread of a process");
                group.thread_started();
                group
            }
        });
        if process.fork_frame.is_some() {
            self.blocked_signals = blocked;
        }
        if forked {
            self.altstack = altstack;
        }
        context.address_space = Some(process.space);
        context.files = Some(process.files);
        context.user_cpu = Some(process.cpu);
        self.user_start = process.user_start;
        self.fork_frame = process.fork_frame;
        self.set_tid = process.set_tid;
        self.clear_child_tid = process.clear_child_tid;
    }
}

impl Scheduler {
    /// The CPU a new task starts on, among those its `affinity` allows (Linux's
    /// `select_task_rq` at fork): the era's fork balancing (`sched::balance`); without a
    /// balancer (O(1), the lab's isolated CPU 0), or when that choice is not allowed, the
    /// CPU with the fewest tasks running or waiting, the creating CPU first among equals.
    /// Threads spread as processes do: a change to the page tables of an address space in
    /// use on several CPUs is flushed from all of them (`cpus::tlb`).
    ///
    /// With one CPU allowed there is nothing to weigh, and the choice costs the same few
    /// instructions on one CPU as on several: the lab's tasks, pinned to CPU 0, then run
    /// the same instructions whatever `smp=` says, and so give the same figures.
    fn cpu_for_new_task(&mut self, affinity: u64) -> usize {
        let allowed = affinity & self.online_mask;
        if allowed.is_power_of_two() {
            return allowed.trailing_zeros() as usize;
        }
        let here = this_cpu().index();
        self.balance_self(here, Flags::BALANCE_FORK, affinity)
            .unwrap_or_else(|| self.least_loaded(allowed))
    }

    /// Adds `task` (made by [`new_task`]), not yet known to the runqueue (the caller's
    /// `rq.spawn` or `rq.fork` makes it runnable): its id and slot. A task with a parent
    /// (always the running task) is among its children in the family tree, and `wait`
    /// reaps it; one without — a thread — ends by itself.
    fn start(&mut self, task: Task, parent: Option<TaskId>, now: u64) -> (TaskId, Slot) {
        debug_assert!(parent.is_none_or(|p| p == self.current_id()));
        let (id, slot) = self.add(task);
        self.task(slot).started_at = now;
        if let Some(parent) = parent {
            super::family::family().born(id, parent);
        }
        (id, slot)
    }

    /// Traces a new child as Linux 6.1 does: `sched_process_fork` in the parent, then
    /// `sched_wakeup_new` once the policy has queued it.
    fn record_new(&mut self, slot: Slot, now: u64) {
        self.record(now, false, trace::Kind::Fork, slot);
        self.record(now, false, trace::Kind::WakeupNew, slot);
    }
}

/// A task's data and its context, before it has an id or a slot; `stack` is `None` only for
/// the boot task, which runs on the bootloader's.
pub(in crate::sched) fn new_task(
    name: &str,
    uid: u32,
    nice: i8,
    entry: Option<(fn(u64), u64)>,
    stack: Option<KernelStack>,
) -> (Task, Box<Context>) {
    let rsp = stack.as_ref().map_or(0, |s| {
        // SAFETY: a fresh stack, mapped and unused.
        unsafe { initial_stack(s.top(), task_entry) }
    });
    // Its comm is made again with the task's id once it has one.
    let comm = trace::Comm::new(TaskId::from_number(0), name, nice, false);
    // Boxed once, for the task's life: it travels with the task from runqueue to runqueue
    // and never moves in memory (see `runqueue`'s docs).
    let mut context = Box::new(Context::new(
        rsp,
        stack.as_ref().map_or(0, KernelStack::top),
        comm,
    ));
    context.uid = uid;
    let task = Task {
        id: TaskId::from_number(0),
        slot: Slot::new(0),
        cpu: context.cpu.clone(),
        user_start: None,
        fork_frame: None,
        group: None,
        clear_child_tid: 0,
        set_tid: [0; 2],
        blocked_signals: 0,
        killed: None,
        waiting_for: 0,
        robust_list: 0,
        saved_mask: None,
        altstack: crate::user::signal::altstack::AltStack::default(),
        name: String::from(name),
        uid,
        nice,
        // Set when the task starts (`Scheduler::start`); the boot and idle tasks: at boot.
        started_at: 0,
        entry,
        _stack: stack,
        waiters: Vec::new(),
        vfork_parent: None,
        exit_status: None,
        parked: false,
        unpark_token: false,
    };
    (task, context)
}

/// User processes and threads alive, or being made: checked against [`MAX_PROCESSES`]
/// *before* a new task's kernel stack is allocated, so that forks preempted half-way cannot
/// hold more stacks between them than the limit allows (a fork bomb's peak, and the
/// kernel-stack tables it leaves, stay the same run to run).
static USER_TASKS: AtomicUsize = AtomicUsize::new(0);

/// A place under the process limit, held while a task is made; kept by the task when it
/// starts ([`ProcessPlace::keep`]) and given back when it exits ([`process_ended`]).
struct ProcessPlace;

impl ProcessPlace {
    fn reserve() -> Result<ProcessPlace, SpawnError> {
        USER_TASKS
            .try_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < MAX_PROCESSES).then_some(n + 1)
            })
            .map(|_| ProcessPlace)
            .map_err(|_| SpawnError::TooManyProcesses)
    }

    fn keep(self) {
        core::mem::forget(self);
    }
}

impl Drop for ProcessPlace {
    fn drop(&mut self) {
        process_ended();
    }
}

/// A user task has exited: its place under the limit is free.
pub(in crate::sched) fn process_ended() {
    USER_TASKS.fetch_sub(1, Ordering::Relaxed);
}
