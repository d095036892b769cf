//! The scheduler's side of user processes: starting a task that enters ring 3 in an address
//! space of its own, and what the system calls ask about the running task.

use super::{Scheduler, change_then_reschedule, with_sched};
use crate::mm::stack::KernelStack;
use crate::task::TaskId;
use crate::time::clock;
use crate::user::address_space::AddressSpace;
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
) -> Result<TaskId, super::SpawnError> {
    let stack = KernelStack::new().map_err(|_| super::SpawnError::OutOfMemory)?;
    Ok(change_then_reschedule(|s| {
        let now = clock::now();
        let (id, slot) = s.start_child(name, uid, nice, (enter_ring_3, 0), stack, now);
        let t = s.task(slot);
        t.address_space = Some(space);
        t.user_start = Some((entry, sp));
        s.need_resched |= s.policy.spawn(slot, uid, nice, now);
        s.record_new(slot, now);
        id
    }))
}

/// A new process's first code in the kernel: the switch has loaded its address space and
/// kernel stack; off to ring 3.
fn enter_ring_3(_: u64) {
    let (entry, sp) = with_sched(|s| {
        let me = s.current;
        s.task(me).user_start.take().expect("a process has a start")
    });
    x86_64::instructions::interrupts::disable();
    // SAFETY: the switch to this task loaded its address space (which maps `entry` and the
    // stack, see user::process::spawn) and pointed the TSS and SYSCALL at its kernel stack.
    unsafe { crate::arch::x86_64::syscall::enter_user(entry, sp) }
}

impl Scheduler {
    fn current_task(&mut self) -> &mut crate::task::Task {
        let me = self.current;
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
