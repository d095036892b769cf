//! The task table: every task by slot, the APs' idle tasks beside it, and the lookups by
//! slot and by id (Linux keeps its tasks in a list and a pid hash; the policy crate knows a
//! task by its slot, so a slot is the key here).
//!
//! A slot past the table's end names an AP's idle task (`setup::idle_slot_of`): those are
//! kept apart so that bringing up an AP moves no task's slot. [`task_in`] and
//! [`task_in_ref`] are the one definition of that rule; the scheduler's own lookups and the
//! switch (which holds the scheduler's fields apart) both use them.

use super::{Scheduler, setup};
use crate::task::{Slot, Task, TaskId};
use alloc::boxed::Box;

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
        None => ap_idle[setup::cpu_of_idle_slot(slot)]
            .as_deref_mut()
            .expect("an AP's idle task"),
    }
}

/// The task in `slot`, to read ([`task_in`]'s rule).
#[inline(always)]
pub(super) fn task_in_ref<'a>(slots: &'a Slots, ap_idle: &'a Slots, slot: Slot) -> &'a Task {
    match slots.get(slot.index()) {
        Some(task) => task.as_deref().expect("live task"),
        None => ap_idle[setup::cpu_of_idle_slot(slot)]
            .as_deref()
            .expect("an AP's idle task"),
    }
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

    /// Gives `task` a fresh id and a slot; returns both.
    pub(super) fn add(&mut self, task: Task) -> (TaskId, Slot) {
        let slot = self.free_slots.pop().unwrap_or(Slot::new(self.slots.len()));
        if slot.index() == self.slots.len() {
            self.slots.push(None);
        }
        let id = self.next_id;
        self.next_id = self.next_id.next();
        let mut task = Box::new(Task { id, slot, ..task });
        task.refresh_comm();
        self.slots[slot] = Some(task);
        self.by_id.insert(id, slot);
        (id, slot)
    }
}
