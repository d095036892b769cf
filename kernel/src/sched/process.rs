//! The scheduler's side of user processes: starting a task that enters ring 3 in an address
//! space of its own, and what the system calls ask about the running task.

use super::{Scheduler, change_then_reschedule, new_task, with_sched};
use crate::arch::x86_64::user_state::UserCpuState;
use crate::mm::stack::KernelStack;
use crate::task::TaskId;
use crate::time::clock;
use crate::user::address_space::AddressSpace;
use crate::user::thread_group::ThreadGroup;
use alloc::boxed::Box;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicUsize, Ordering};

/// User processes and threads alive, or being made: checked against
/// [`MAX_PROCESSES`](super::MAX_PROCESSES) *before* a new task's kernel stack is allocated,
/// so that forks preempted half-way cannot hold more stacks between them than the limit
/// allows (a fork bomb's peak, and the kernel-stack tables it leaves, stay the same run to
/// run).
static USER_TASKS: AtomicUsize = AtomicUsize::new(0);

/// A place under the process limit, held while a task is made; kept by the task when it
/// starts ([`ProcessPlace::keep`]) and given back when it exits ([`process_ended`]).
struct ProcessPlace;

impl ProcessPlace {
    fn reserve() -> Result<ProcessPlace, super::SpawnError> {
        USER_TASKS
            .try_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < super::MAX_PROCESSES).then_some(n + 1)
            })
            .map(|_| ProcessPlace)
            .map_err(|_| super::SpawnError::TooManyProcesses)
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
pub(super) fn process_ended() {
    USER_TASKS.fetch_sub(1, Ordering::Relaxed);
}

/// Starts a process: a task, child of the running one, that enters ring 3 at `entry` with
/// stack pointer `sp` in `space`.
pub fn spawn_process(
    name: &str,
    uid: u32,
    nice: i8,
    space: Arc<AddressSpace>,
    entry: u64,
    sp: u64,
) -> Result<TaskId, super::SpawnError> {
    let place = ProcessPlace::reserve()?;
    let stack = KernelStack::new().map_err(|_| super::SpawnError::OutOfMemory)?;
    let cpu = Box::new(UserCpuState::initial());
    let started = change_then_reschedule(|s| {
        let now = clock::now();
        let me = Some(s.current_id());
        let task = new_task(name, uid, nice, Some((enter_ring_3, 0)), Some(stack), me);
        let (id, slot) = s.start(task, now);
        let t = s.task(slot);
        t.address_space = Some(space);
        t.group = Some(Arc::new(ThreadGroup::new(id)));
        t.user_cpu = Some(cpu);
        t.user_start = Some((entry, sp));
        t.files = Some(crate::user::files::FdTable::with_console());
        s.rq.spawn(slot, uid, nice, now);
        s.record_new(slot, now);
        id
    });
    place.keep();
    Ok(started)
}

/// What `clone` asks for, besides the flags the caller has already acted on (which address
/// space and files the child gets).
pub struct Clone {
    pub kind: super::ForkKind,
    /// A thread of the caller's process (CLONE_THREAD), not a new process.
    pub thread: bool,
    pub space: Arc<AddressSpace>,
    pub files: crate::user::files::Files,
    /// The parent's registers at the call, rax already 0 (and rsp the new stack, if any).
    pub frame: crate::arch::x86_64::syscall::SyscallFrame,
    /// The child's FPU and FS base.
    pub cpu: UserCpuState,
    /// See [`crate::task::Task::set_tid`] and [`crate::task::Task::clear_child_tid`].
    pub set_tid: [u64; 2],
    pub clear_child_tid: u64,
}

/// Forks the running process, or starts a thread of it: a child task (placed by the policy
/// as a fork, with the parent's uid and nice) that returns to ring 3 with `clone.frame`.
/// A new process is the caller's child; a thread is no one's (it ends by itself, see
/// `user::thread_group`). With [`ForkKind::Vfork`] the caller sleeps until the child execs
/// or exits.
pub fn fork_process(clone: Clone) -> Result<TaskId, super::SpawnError> {
    let place = ProcessPlace::reserve()?;
    let stack = KernelStack::new().map_err(|_| super::SpawnError::OutOfMemory)?;
    let (cpu, frame) = (Box::new(clone.cpu), Box::new(clone.frame));
    let forked = change_then_reschedule(|s| {
        let now = clock::now();
        let (parent_slot, parent) = (s.current_slot(), s.current_id());
        let p = s.task(parent_slot);
        let (uid, nice, name) = (p.uid, p.nice, p.name.clone());
        let (group, blocked) = (p.group.clone().expect("a process"), p.blocked_signals);
        let entry: (fn(u64), u64) = (return_forked, 0);
        // A thread is no one's child: it ends by itself, and no `wait` reaps it.
        let child_of = (!clone.thread).then_some(parent);
        let task = new_task(&name, uid, nice, Some(entry), Some(stack), child_of);
        let (id, slot) = s.start(task, now);
        let t = s.task(slot);
        t.group = Some(if clone.thread {
            group
        } else {
            Arc::new(group.forked(id))
        });
        t.blocked_signals = blocked;
        t.address_space = Some(clone.space);
        t.files = Some(clone.files);
        t.fork_frame = Some(frame);
        t.user_cpu = Some(cpu);
        t.set_tid = clone.set_tid;
        t.clear_child_tid = clone.clear_child_tid;
        s.rq.fork(slot, clone.kind, now);
        s.record_new(slot, now);
        if clone.kind == super::ForkKind::Vfork {
            s.task(slot).vfork_parent = Some(parent);
            s.block_current(now);
        }
        id
    });
    place.keep();
    Ok(forked)
}

/// A forked process's first code in the kernel: its tid where `clone` was asked to write it,
/// then back to ring 3 where its parent called.
fn return_forked(_: u64) {
    let (frame, set_tid) = with_sched(|s| {
        let t = s.current_task();
        let frame = *t.fork_frame.take().expect("a fork frame");
        (frame, core::mem::take(&mut t.set_tid))
    });
    crate::user::process::write_tid(set_tid);
    x86_64::instructions::interrupts::disable();
    // SAFETY: the switch loaded the child's address space, a copy of (or the same as) the
    // parent's, in which the frame's rip and rsp are the parent's user addresses.
    unsafe { crate::arch::x86_64::syscall::resume_user(&frame) }
}

/// Replaces the running process's program: its address space, entry and name (`execve`).
/// Wakes a vfork parent. The caller then enters ring 3 at the new entry.
pub fn replace_program(space: Arc<AddressSpace>, name: &str) {
    let frame = space.level_4_frame();
    let old = with_sched(|s| {
        let t = s.current_task();
        t.rename(name);
        let top = t.kernel_stack_top;
        let old = t.address_space.replace(space);
        x86_64::instructions::interrupts::without_interrupts(|| {
            crate::arch::x86_64::switch::prepare(Some(frame), top)
        });
        old
    });
    // A new program starts with a clean FPU and no TLS (the saved copy is rewritten at the
    // next switch).
    UserCpuState::initial().restore();
    // The old space goes (unless a vfork parent or a thread still holds it) now that CR3
    // no longer points at it.
    drop(old);
    super::exec_done();
}

/// The running process's open files.
pub fn current_files() -> Option<crate::user::files::Files> {
    with_sched(|s| s.current_task().files.clone())
}

/// Marks task `id` killed by `signal` and wakes it if it sleeps; false if there is no such
/// task. It dies at its next step through the kernel (a system call's end, a timer tick in
/// ring 3).
pub fn kill_task(id: TaskId, signal: u8) -> bool {
    super::change_then_reschedule(|s| s.kill(id, signal, ::sched::Wakeup::default()))
}

/// [`kill_task`] from interrupt context (Ctrl-C on the console): the switch, if the wake-up
/// asks for one, waits for the interrupt's end.
pub fn kill_task_irq(id: TaskId, signal: u8) -> bool {
    with_sched(|s| s.kill(id, signal, super::sleep::FROM_INTERRUPT))
}

impl Scheduler {
    fn kill(&mut self, id: TaskId, signal: u8, wakeup: ::sched::Wakeup) -> bool {
        let Some(t) = self.live_task_by_id(id) else {
            return false;
        };
        if t.killed.is_none() {
            t.killed = Some(signal);
            super::current::kill_marked();
        }
        self.wake(id, wakeup, clock::now());
        true
    }
}

/// The signal the running task was killed with, if any. Every system call asks at its end:
/// while no task at all is marked (nearly always), the answer needs no lock.
pub fn current_killed() -> Option<u8> {
    if !super::kills_pending() {
        return None;
    }
    with_sched(|s| s.current_task().killed)
}

/// Whether `parent` has a child (`child`, if given) not yet reaped by `wait4`.
pub fn has_child(parent: TaskId, child: Option<TaskId>) -> bool {
    with_sched(|s| {
        s.slots
            .iter()
            .flatten()
            .any(|t| t.parent == Some(parent) && child.is_none_or(|c| c == t.id))
    })
}

/// Whether task `id` exists (alive) and its uid.
pub fn task_uid(id: TaskId) -> Option<u32> {
    with_sched(|s| Some(s.live_task_by_id(id)?.uid))
}

/// A new process's first code in the kernel: the switch has loaded its address space and
/// kernel stack; off to ring 3.
fn enter_ring_3(_: u64) {
    let (entry, sp) = with_sched(|s| {
        let me = s.current_slot();
        s.task(me).user_start.take().expect("a process has a start")
    });
    x86_64::instructions::interrupts::disable();
    // SAFETY: the switch to this task loaded its address space (which maps `entry` and the
    // stack, see user::process::spawn) and pointed the TSS and SYSCALL at its kernel stack.
    unsafe { crate::arch::x86_64::syscall::enter_user(entry, sp) }
}

impl Scheduler {
    pub(super) fn current_task(&mut self) -> &mut crate::task::Task {
        let me = self.current_slot();
        self.task(me)
    }
}

/// The running process's address space (`None` in a kernel thread).
pub fn current_address_space() -> Option<Arc<AddressSpace>> {
    with_sched(|s| s.current_task().address_space.clone())
}

/// The running task's name.
pub fn current_name() -> alloc::string::String {
    with_sched(|s| s.current_task().name.clone())
}

/// The running task's uid.
pub fn current_uid() -> u32 {
    with_sched(|s| s.current_task().uid)
}

/// The parent of task `id`, if it has one.
pub fn parent_of(id: TaskId) -> Option<TaskId> {
    with_sched(|s| s.task_by_id(id)?.parent)
}
