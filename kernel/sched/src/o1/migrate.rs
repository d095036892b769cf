//! An O(1) task moving between CPUs (2.6.11's `pull_task`, `migrate_task` and
//! `wake_up_new_task`'s other-CPU branch).
//!
//! The task takes its whole record: priorities, the slice left, `sleep_avg`. A task pulled
//! while queued goes into the same array on the new CPU — expired stays expired — and its
//! `timestamp` is rebased from the old CPU's clock to the new one's, which in cfslab are
//! the same clock. One woken onto the CPU is activated there as any wake-up (its sleep
//! credited to `sleep_avg`). A child that starts on another CPU is set up by its parent's
//! fork (half the parent's slice, 95% of its bonus) and queued at the end of the new CPU's
//! active array, as `__activate_task`.
//!
//! What does not cross: a child's unused first slice goes back to its parent at exit only
//! while both are on one CPU (2.6.11's `sched_exit` reached the parent on any CPU).

use super::O1;
use super::task::Task;
use crate::policy::{BalanceQueue, Carried, Migrant, Nanos, QueuedTask, TaskId, Wakeup};
use alloc::vec::Vec;

/// What an O(1) task takes to another CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct O1Migrant {
    static_prio: u64,
    prio: u64,
    time_slice: u64,
    first_time_slice: bool,
    sleep_avg: u64,
    timestamp: Nanos,
    /// The array it was queued in (`Some(true)`: active), if it was queued.
    in_active: Option<bool>,
    activated: u8,
    parent: Option<TaskId>,
    sum_exec_runtime: u64,
}

impl O1 {
    /// [`crate::Policy::migrate_out`].
    pub(super) fn migrate_out_o1(&mut self, task: TaskId) -> Migrant {
        assert_ne!(self.current, Some(task), "the running task does not move");
        let in_active = self.t(task).in_active;
        self.dequeue_from_array(task);
        let t = self.tasks[task].take().expect("a task the policy knows");
        Migrant {
            uid: 0,
            nice: (t.static_prio as i64 - 120) as crate::weights::Nice,
            carried: Carried::new(O1Migrant {
                static_prio: t.static_prio,
                prio: t.prio,
                time_slice: t.time_slice,
                first_time_slice: t.first_time_slice,
                sleep_avg: t.sleep_avg,
                timestamp: t.timestamp,
                in_active,
                activated: t.activated,
                parent: t.parent,
                sum_exec_runtime: t.sum_exec_runtime,
            }),
        }
    }

    /// [`crate::Policy::migrate_in`].
    pub(super) fn migrate_in_o1(
        &mut self,
        task: TaskId,
        migrant: Migrant,
        woken: Option<Wakeup>,
        now: Nanos,
    ) -> bool {
        let Some(m) = migrant.carried.into_record::<O1Migrant>() else {
            panic!("task {task} comes from another kind of policy");
        };
        if self.tasks.len() <= task.index() {
            self.tasks.resize(task.index() + 1, None);
        }
        assert!(self.tasks[task].is_none(), "task {task} arrives twice");
        self.tasks[task] = Some(Task {
            static_prio: m.static_prio,
            prio: m.prio,
            time_slice: m.time_slice,
            first_time_slice: m.first_time_slice,
            sleep_avg: m.sleep_avg,
            timestamp: m.timestamp,
            in_active: None,
            activated: m.activated,
            parent: m.parent,
            sum_exec_runtime: m.sum_exec_runtime,
            picked_at: now,
            dead: false,
        });
        // A nice level changed while it moved (`Rq::set_nice` writes the migrant's): as
        // this policy's `set_nice` would have.
        let static_prio = (120 + i64::from(migrant.nice.clamp(-20, 19))) as u64;
        if static_prio != m.static_prio {
            let t = self.t_mut(task);
            t.static_prio = static_prio;
            t.prio = Self::effective_prio(t);
        }
        match woken {
            Some(wakeup) => crate::Policy::enqueue(self, task, wakeup, now),
            None => self.enqueue_in(task, m.in_active.unwrap_or(true)),
        }
        self.current != Some(task) && self.preempts_current(task)
    }

    /// [`crate::Policy::fork_away`]: the child as the parent's fork sets it up, carried off
    /// to be queued on its own CPU's active array.
    pub(super) fn fork_away_o1(&mut self, parent: TaskId, child: TaskId, now: Nanos) -> Migrant {
        self.forked_child(parent, child, now);
        self.migrate_out_o1(child)
    }

    /// [`crate::Policy::balance_queues`]: one queue — O(1) has no groups — whose waiting
    /// tasks come expired array first, each array best priority first (2.6.11's
    /// `move_tasks` order), weighted as CFS would weigh their nice levels.
    pub(super) fn balance_queues_o1(&self) -> Vec<BalanceQueue> {
        let expired = self.arrays[1 - self.active].tasks();
        let active = self.arrays[self.active].tasks();
        let weight = |id: TaskId| {
            crate::weights::nice_to_weight(
                (self.t(id).static_prio as i64 - 120) as crate::weights::Nice,
            )
        };
        let all: Vec<TaskId> = expired.into_iter().chain(active).collect();
        alloc::vec![BalanceQueue {
            uid: None,
            load: all.iter().map(|&id| weight(id)).sum(),
            waiting: all
                .iter()
                .filter(|&&id| self.current != Some(id))
                .map(|&id| QueuedTask {
                    task: id,
                    weight: weight(id),
                    prio: self.t(id).prio as u32,
                    h_load: weight(id),
                    util: 0,
                })
                .collect(),
            best_prio: all
                .iter()
                .map(|&id| self.t(id).prio as u32)
                .min()
                .unwrap_or(140),
            entity_weight: None,
        }]
    }
}
