//! The task table: every task by slot, the APs' idle tasks beside it, and the lookups by
//! slot and by id (Linux keeps its tasks in a list and a pid hash; the policy crate knows a
//! task by its slot, so a slot is the key here).
//!
//! A slot past the table's end names an AP's idle task ([`idle_slot_of`]): those are
//! kept apart so that bringing up an AP moves no task's slot. [`task_in`] and
//! [`task_in_ref`] are the one definition of that rule; the scheduler's own lookups and the
//! switch (which holds the scheduler's fields apart) both use them.

use super::Scheduler;
use crate::task::{Context, Slot, Task, TaskId, TaskRef};
use alloc::boxed::Box;
use alloc::string::String;

/// A table of tasks by slot, `None` where a slot is free.
type Slots = [Option<Box<Task>>];

/// The task in `slot`: in the table, or among the APs' idle tasks (by CPU).
#[inline(always)]
pub(super) fn task_in<'a>(
    slots: &'a mut Slots,
    ap_idle: &'a mut Slots,
    slot: Slot,
) -> &'a mut Task {
    match slots.get_mut(slot.index()) {
        Some(task) => task.as_deref_mut().expect("live task"),
        None => ap_idle[cpu_of_idle_slot(slot)]
            .as_deref_mut()
            .expect("an AP's idle task"),
    }
}

/// The task in `slot`, to read ([`task_in`]'s rule).
#[inline(always)]
pub(super) fn task_in_ref<'a>(slots: &'a Slots, ap_idle: &'a Slots, slot: Slot) -> &'a Task {
    match slots.get(slot.index()) {
        Some(task) => task.as_deref().expect("live task"),
        None => ap_idle[cpu_of_idle_slot(slot)]
            .as_deref()
            .expect("an AP's idle task"),
    }
}

/// What an AP's runqueue knows its idle task by: a number no slot has (slots count up from
/// 0, one per task). The idle task is the AP's boot flow, idling in `setup::ap_idle_loop`; its
/// `Task` is kept apart (`Scheduler::ap_idle`). Were it given a slot in the table, every
/// later task's slot would move up by one per AP, and an idle AP would move the figures of
/// a run: tried, seed003 at `smp=4` then differed from `smp=1` (its maximum latency by
/// 2 ms; slots index the policy's tables, and how they changed a decision was not pinned
/// down).
pub(super) fn idle_slot_of(cpu: usize) -> Slot {
    Slot::new(usize::MAX - cpu)
}

/// The slot of CPU `cpu`'s idle task: the boot CPU's is in the table, after the boot
/// task's; an AP's is [`idle_slot_of`] it.
pub(super) fn idle_slot(cpu: usize) -> Slot {
    match cpu {
        0 => Slot::new(1),
        ap => idle_slot_of(ap),
    }
}

/// The CPU whose idle task `slot` names (a slot from [`idle_slot_of`]).
pub(super) fn cpu_of_idle_slot(slot: Slot) -> usize {
    usize::MAX - slot.index()
}

impl Scheduler {
    /// The task in `slot` (an AP's idle task included).
    pub(super) fn task(&mut self, slot: Slot) -> &mut Task {
        task_in(&mut self.slots, &mut self.ap_idle, slot)
    }

    /// The task in `slot`, to read.
    pub(super) fn task_ref(&self, slot: Slot) -> &Task {
        task_in_ref(&self.slots, &self.ap_idle, slot)
    }

    /// The task with id `id`, if it has not exited.
    pub(super) fn live_task_by_id(&mut self, id: TaskId) -> Option<&mut Task> {
        let slot = *self.by_id.get(&id)?;
        if !self.alive(slot) {
            return None;
        }
        self.slots[slot].as_deref_mut()
    }

    /// The task with id `id`, if it has not exited (or exited but is not freed yet).
    pub(super) fn task_by_id(&mut self, id: TaskId) -> Option<&mut Task> {
        let slot = *self.by_id.get(&id)?;
        self.slots[slot].as_deref_mut()
    }

    /// The task with id `id`, to read, if it has not exited (or exited but is not freed yet).
    pub(super) fn task_ref_by_id(&self, id: TaskId) -> Option<&Task> {
        let slot = *self.by_id.get(&id)?;
        self.slots[slot].as_deref()
    }

    /// The task `task` names if it still holds the slot it was taken in (the slot is
    /// reused once a task has exited, and a thread that execs takes its leader's id: see
    /// [`TaskRef`]).
    pub(super) fn task_of_ref(&self, task: TaskRef) -> Option<&Task> {
        let there = self.slots.get(task.slot.index())?.as_deref()?;
        (there.id == task.id).then_some(there)
    }

    /// Task `id`'s process, if it is a user task.
    pub(super) fn group_of_task(
        &self,
        id: TaskId,
    ) -> Option<&alloc::sync::Arc<super::proc::thread_group::ThreadGroup>> {
        self.task_ref_by_id(id)?.group.as_ref()
    }

    /// Gives `task` a fresh id and a slot; returns both.
    pub(super) fn add(&mut self, task: Task) -> (TaskId, Slot) {
        let slot = self.free_slots.pop().unwrap_or(Slot::new(self.slots.len()));
        if slot.index() == self.slots.len() {
            self.slots.push(None);
        }
        let id = self.next_id;
        self.next_id = self.next_id.next();
        self.slots[slot] = Some(Box::new(Task { id, slot, ..task }));
        self.by_id.insert(id, slot);
        (id, slot)
    }

    /// The context of the task in `slot`, on its CPU's runqueue.
    pub(super) fn context(&self, slot: Slot) -> &Context {
        self.task_rq(slot).context(slot)
    }

    /// The context of the task in `slot`, to change.
    pub(super) fn context_mut(&mut self, slot: Slot) -> &mut Context {
        let cpu = self.cpu_of(slot);
        self.rqs[cpu].context_mut(slot)
    }

    /// The running task's context.
    pub(super) fn current_context(&mut self) -> &mut Context {
        let current = self.current_slot();
        self.this_rq_mut().context_mut(current)
    }

    /// Makes the trace's name of the task in `slot` again, after its id, name or nice changed.
    pub(super) fn refresh_comm(&mut self, slot: Slot) {
        let idle = self.context(slot).comm.is_idle();
        let comm = self.task_ref(slot).comm(idle);
        self.context_mut(slot).comm = comm;
    }

    /// Gives the task in `slot` a new name (`execve`, `prctl(PR_SET_NAME)`).
    pub(super) fn rename(&mut self, slot: Slot, name: &str) {
        self.task(slot).name = String::from(name);
        self.refresh_comm(slot);
    }

    /// Gives the task in `slot` a new nice level (the policy is told separately).
    pub(super) fn set_nice_level(&mut self, slot: Slot, nice: i8) {
        self.task(slot).nice = nice;
        self.refresh_comm(slot);
    }
}
