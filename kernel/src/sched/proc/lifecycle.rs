//! A task's life: started (`spawn`, or as a child with `spawn_child`, fork or vfork),
//! ending (`exit`), and being waited for (`join`; a parent reaps its children through
//! `family`).

use super::create::{NewTask, Placement, SpawnError, create};
use crate::arch::irq;
use crate::sched::{
    change_then_reschedule, schedule, switch, trace, with_current_context, with_sched, with_tasks,
};
use crate::task::TaskId;
use crate::time::clock;
use ::sched::ForkKind;
use sched::{SyncWake, Wakeup};

/// How a vfork parent is woken when its child execs or exits.
const VFORK_PARENT: Wakeup = Wakeup {
    vfork_parent: true,
    from_interrupt: false,
    sync: SyncWake::No,
};

/// Starts a kernel thread running `entry(argument)` as `uid` at `nice`, a child of the
/// running task. It may run at once if the policy says it should preempt the caller; it can
/// read its own id with [`crate::sched::current`] from its first instruction.
pub fn spawn(
    entry: fn(u64),
    argument: u64,
    name: &str,
    uid: u32,
    nice: i8,
) -> Result<TaskId, SpawnError> {
    create(NewTask {
        name: Some(name),
        entry: (entry, argument),
        placement: Placement::Spawn { uid, nice },
        child: true,
        process: None,
    })
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
    create(NewTask {
        name: Some(name),
        entry: (entry, argument),
        placement: Placement::Fork(kind),
        child: true,
        process: None,
    })
}

/// The running task "execs": a vfork parent waiting for it wakes up.
pub fn exec_done() {
    change_then_reschedule(|s| {
        let me = s.current_slot();
        if let Some(parent) = s.task(me).vfork_parent.take() {
            s.wake(parent, VFORK_PARENT, clock::now());
        }
    });
}

/// Where every new task starts (called by the switch trampoline, interrupts off): it
/// finishes the switch that started it, runs its function, and ends when that returns
/// (Linux's `ret_from_fork` and `kthread`).
pub extern "C" fn task_entry() -> ! {
    switch::schedule_tail();
    // The task table alone: nothing here touches a runqueue.
    let (function, argument) = with_tasks(|s| {
        let current = s.current_slot();
        s.task(current).entry.expect("a spawned task has an entry")
    });
    irq::enable();
    function(argument);
    exit()
}

/// Ends the running task: what it holds beyond its kernel stack is released here, in its
/// own context; its parent and any `join` waiters wake; and the next task frees its stack.
pub fn exit() -> ! {
    release_resources();
    irq::disable();
    with_sched(|s| {
        let now = clock::now();
        let slot = s.current_slot();
        let id = s.current_id();
        s.record(now, false, trace::Kind::Exit, slot);
        if s.task(slot).killed.is_some() {
            crate::sched::current::killed_task_exited();
        }
        s.this_rq_mut().exit_current(now);
        for waiter in core::mem::take(&mut s.task(slot).waiters) {
            s.wake(waiter, Wakeup::default(), now);
        }
        if let Some(parent) = s.task(slot).vfork_parent.take() {
            s.wake(parent, VFORK_PARENT, now);
        }
        s.notify_parent(id, now);
        switch::leave_for_reaping(slot);
    });
    schedule();
    unreachable!("an exited task was scheduled again");
}

/// Closes the running task's files (Linux's `exit_files`), in its own context and while it
/// is still an ordinary runnable task: closing a pipe's last writer wakes the reader, which
/// may preempt it — just a switch, never one nested in another task's `finish_switch`. An
/// ending process calls this before the steps of its end that must not be interrupted
/// (`exit::end`); [`exit`] calls it again, which is then a no-op.
pub fn release_files() {
    let files = with_current_context(|context| {
        crate::sched::current::set_current_files(None);
        context.files.take()
    });
    drop(files);
}

/// Releases what the running task holds beyond its kernel stack, as Linux's `do_exit` does
/// with `exit_files` and `exit_mm`, before the task is marked exited: its files (see
/// [`release_files`]), then — interrupts off until the task's last switch — its address
/// space, once the kernel's own page table is loaded (the kernel half is the same in every
/// table), so that the pages and tables freed are not the ones the CPU translates through.
///
/// The task's stack is then all the next task frees (`switch::finish_switch`).
fn release_resources() {
    release_files();
    irq::disable();
    let (space, group, cpu, frame) = with_sched(|s| {
        // A process's end (its last thread's) may orphan process groups (`groups`).
        if let Some(g) = s.current_task().group.clone()
            && !g.has_other_threads()
        {
            s.hang_up_orphaned_groups(g.leader, g.pgid(), g.sid());
        }
        let context = s.current_context();
        let (space, user_cpu) = (context.address_space.take(), context.user_cpu.take());
        let t = s.current_task();
        let id = t.id;
        let parts = (space, t.group.take(), user_cpu, t.fork_frame.take());
        if let Some(group) = &parts.1 {
            group.thread_ended(id);
        }
        if parts.0.is_some() {
            // Its place under the process limit is free.
            super::create::process_ended();
            crate::sched::current::set_current_space(None);
            crate::arch::switch::prepare(None, 0);
        }
        parts
    });
    drop((space, group, cpu, frame));
}

/// Waits until task `id` has exited (at once if it already has). Ids are never reused, so
/// an old id cannot make this wait for a newer task.
pub fn join(id: TaskId) {
    join_unless(id, || false);
}

/// [`join`], but gives up as soon as `stop()` holds — asked under the scheduler's lock right
/// before each sleep, so a task that makes it hold and then wakes this one cannot be missed.
/// True if task `id` exited.
pub fn join_unless(id: TaskId, stop: impl Fn() -> bool) -> bool {
    loop {
        let waiting = change_then_reschedule(|s| {
            let me = s.current_id();
            let now = clock::now();
            match s.live_task_by_id(id) {
                _ if stop() => None,
                Some(target) => {
                    target.waiters.push(me);
                    s.block_current(now);
                    Some(true)
                }
                None => Some(false),
            }
        });
        match waiting {
            None => return false,
            Some(true) => continue,
            Some(false) => break,
        }
    }
    // A parent joining its child has reaped it (as pthread_join does).
    super::family::reap_child(super::children::WaitTarget::Child(id));
    true
}
