//! The scheduler's side of user processes: starting a task that enters ring 3 in an address
//! space of its own, and what the system calls ask about the running task.

use super::create::{Group, NewTask, Placement, Process, create};
use crate::arch::user_state::UserCpuState;
use crate::sched::{Scheduler, with_current_context, with_sched, with_tasks};
use crate::task::TaskId;
use crate::time::clock;
use crate::user::address_space::AddressSpace;
use alloc::boxed::Box;
use alloc::sync::Arc;

/// Starts a process: a task, child of the running one, that enters ring 3 at `entry` with
/// stack pointer `sp` in `space`.
pub fn spawn_process(
    name: &str,
    uid: u32,
    nice: i8,
    space: Arc<AddressSpace>,
    entry: u64,
    sp: u64,
) -> Result<TaskId, super::create::SpawnError> {
    create(NewTask {
        name: Some(name),
        entry: (enter_ring_3, 0),
        placement: Placement::Spawn { uid, nice },
        child: true,
        process: Some(Process {
            space,
            files: crate::user::files::FdTable::with_console(),
            group: Group::New,
            cpu: Box::new(UserCpuState::initial()),
            user_start: Some((entry, sp)),
            fork_frame: None,
            set_tid: [0; 2],
            clear_child_tid: 0,
        }),
    })
}

/// What `clone` asks for, besides the flags the caller has already acted on (which address
/// space and files the child gets).
pub struct Clone {
    pub kind: ::sched::ForkKind,
    /// A thread of the caller's process (CLONE_THREAD), not a new process.
    pub thread: bool,
    pub space: Arc<AddressSpace>,
    pub files: crate::user::files::Files,
    /// The parent's registers at the call, rax already 0 (and rsp the new stack, if any).
    pub frame: crate::arch::user_mode::TrapFrame,
    /// The child's FPU and FS base.
    pub cpu: UserCpuState,
    /// See [`crate::task::Task::set_tid`] and [`crate::task::Task::clear_child_tid`].
    pub set_tid: [u64; 2],
    pub clear_child_tid: u64,
}

/// Forks the running process, or starts a thread of it: a child task (placed by the policy
/// as a fork, with the parent's uid and nice) that returns to ring 3 with `clone.frame`.
/// A new process is the caller's child; a thread is no one's (it ends by itself, see
/// `thread_group`). With [`ForkKind::Vfork`] the caller sleeps until the child execs
/// or exits.
pub fn fork_process(clone: Clone) -> Result<TaskId, super::create::SpawnError> {
    // Read before the scheduler's lock, which ranks after every process's own (the lock
    // order, `sync::lock_order`): a thread shares the group, a new process inherits this.
    let group = match clone.thread {
        true => Group::Same,
        false => super::threads::current_group()
            .map_or(Group::New, |g| Group::Forked(g.actions_to_inherit())),
    };
    create(NewTask {
        name: None,
        entry: (return_forked, 0),
        placement: Placement::Fork(clone.kind),
        // A thread is no one's child: it ends by itself, and no `wait` reaps it.
        child: !clone.thread,
        process: Some(Process {
            space: clone.space,
            files: clone.files,
            group,
            cpu: Box::new(clone.cpu),
            user_start: None,
            fork_frame: Some(Box::new(clone.frame)),
            set_tid: clone.set_tid,
            clear_child_tid: clone.clear_child_tid,
        }),
    })
}

/// A forked process's first code in the kernel: its tid where `clone` was asked to write it,
/// then back to ring 3 where its parent called.
fn return_forked(_: u64) {
    let (frame, set_tid) = with_tasks(|s| {
        let t = s.current_task();
        let frame = *t.fork_frame.take().expect("a fork frame");
        (frame, core::mem::take(&mut t.set_tid))
    });
    write_tid(set_tid);
    crate::arch::irq::disable();
    // SAFETY: the switch loaded the child's address space, a copy of (or the same as) the
    // parent's, in which the frame's rip and rsp are the parent's user addresses.
    unsafe { crate::arch::user_mode::resume_user(&frame) }
}

/// Writes the running thread's tid at each non-zero address (CLONE_PARENT_SETTID,
/// CLONE_CHILD_SETTID); a bad address is ignored, as Linux ignores it.
fn write_tid(addresses: [u64; 2]) {
    let Some(space) = crate::sched::current_address_space() else {
        return;
    };
    let tid = crate::task::pid_of(crate::sched::current()) as u32;
    for addr in addresses.into_iter().filter(|&a| a != 0) {
        let _ = space.write(addr, &tid.to_le_bytes());
    }
}

/// Replaces the running process's program: its address space, entry and name (`execve`).
/// Wakes a vfork parent. The caller then enters ring 3 at the new entry.
pub fn replace_program(space: Arc<AddressSpace>, name: &str) {
    let frame = space.level_4_frame();
    let old = with_sched(|s| {
        s.rename(s.current_slot(), name);
        // The alternate signal stack was in the old program's memory (Linux's exec resets
        // it too); the mask and the pending signals stay.
        s.current_task().altstack = Default::default();
        let context = s.current_context();
        let top = context.kernel_stack_top;
        crate::sched::current::set_current_space(Some(&space));
        let old = context.address_space.replace(space);
        // Interrupts are off: the scheduler's lock is held.
        crate::arch::switch::prepare(Some(frame), top);
        old
    });
    // A new program starts with a clean FPU and no TLS (the saved copy is rewritten at the
    // next switch).
    UserCpuState::initial().restore();
    // The old space goes (unless a vfork parent or a thread still holds it) now that CR3
    // no longer points at it.
    drop(old);
    super::lifecycle::exec_done();
}

/// Gives the running task a descriptor table of its own if it shares one with another
/// process (`clone` with CLONE_FILES but not CLONE_THREAD), as Linux's `execve` does
/// (`unshare_files`): the close-on-exec descriptors it closes next are then its own only.
pub fn unshare_files() {
    let shared = with_current_context(|context| {
        let files = context.files.as_ref()?;
        (Arc::strong_count(files) > 1).then(|| files.clone())
    });
    let Some(shared) = shared else {
        return;
    };
    // Copied outside the scheduler's lock (the table's own is taken), installed under it.
    let own = shared.lock().fork();
    let old = with_current_context(|context| {
        crate::sched::current::set_current_files(Some(&own));
        context.files.replace(own)
    });
    drop((old, shared));
}

/// Marks task `id` killed by `signal` and wakes it if it sleeps; false if there is no such
/// task. It dies at its next step through the kernel (a system call's end, a timer tick in
/// ring 3).
pub fn kill_task(id: TaskId, signal: u8) -> bool {
    crate::sched::change_then_reschedule(|s| s.kill(id, signal))
}

impl Scheduler {
    pub(in crate::sched) fn kill(&mut self, id: TaskId, signal: u8) -> bool {
        let Some(t) = self.live_task_by_id(id) else {
            return false;
        };
        if t.killed.is_none() {
            t.killed = Some(signal);
            crate::sched::current::kill_marked();
        }
        self.wake(id, ::sched::Wakeup::default(), clock::now());
        true
    }
}

/// Whether task `id` exists (alive) and its uid.
pub fn task_uid(id: TaskId) -> Option<u32> {
    with_sched(|s| Some(s.live_task_by_id(id)?.uid))
}

/// A new process's first code in the kernel: the switch has loaded its address space and
/// kernel stack; off to ring 3.
fn enter_ring_3(_: u64) {
    let (entry, sp) = with_tasks(|s| {
        let me = s.current_slot();
        s.task(me).user_start.take().expect("a process has a start")
    });
    crate::arch::irq::disable();
    // SAFETY: the switch to this task loaded its address space (which maps `entry` and the
    // stack, see user::process::spawn) and pointed the TSS and SYSCALL at its kernel stack.
    unsafe { crate::arch::user_mode::enter_user(entry, sp) }
}

impl Scheduler {
    pub(in crate::sched) fn current_task(&mut self) -> &mut crate::task::Task {
        let me = self.current_slot();
        self.task(me)
    }
}

/// The running task's name.
pub fn current_name() -> alloc::string::String {
    with_tasks(|s| s.current_task().name.clone())
}

/// Renames the running thread (`prctl(PR_SET_NAME)`).
pub fn rename_current(name: &str) {
    with_sched(|s| s.rename(s.current_slot(), name));
}

/// Sets where the running thread's robust futex list is (`set_robust_list`).
pub fn set_robust_list(head: u64) {
    with_tasks(|s| s.current_task().robust_list = head);
}

/// Task `id`'s robust list head and its uid, if it is alive.
pub fn robust_list_of(id: TaskId) -> Option<(u64, u32)> {
    with_sched(|s| {
        let t = s.live_task_by_id(id)?;
        Some((t.robust_list, t.uid))
    })
}

/// The running task's uid.
pub fn current_uid() -> u32 {
    with_tasks(|s| s.current_task().uid)
}
