//! Queueing and dequeueing, at the level of one entity (`enqueue_entity`,
//! `dequeue_entity`) and down the hierarchy of a task (`enqueue_task_fair`,
//! `dequeue_task_fair`, kernel/sched_fair.c and 6.6's kernel/sched/fair.c): placement,
//! the queue's sums, and — in 6.6 — the load averages and a group's shares at each level.

use super::entity::EntityId;
use super::load_avg::Track;
use super::runqueue::RqId;
use super::{Enqueue, Fair};
use crate::policy::{Nanos, TaskId};

impl Fair {
    pub(super) fn enqueue_entity(&mut self, rq: RqId, id: EntityId, how: Enqueue, now: Nanos) {
        self.update_curr(rq, now);
        if self.tracks_load() {
            self.update_load_avg(rq, id, now, Track::Attach);
            self.update_runnable_weight(id);
            self.update_cfs_group(id, now);
        }
        if self.eevdf() {
            // 6.6 places on every enqueue, never with ENQUEUE_INITIAL here: a new task's
            // `wake_up_new_task` enqueue re-places what `task_fork_fair` placed.
            self.place_entity_eevdf(rq, id, false);
        } else if let Enqueue::Wakeup { vfork_parent } = how {
            self.place_entity_cfs(rq, id, false, vfork_parent);
        }
        let weight = self.se(id).weight;
        let q = self.rq_mut(rq);
        q.load += weight;
        q.nr_running += 1;
        if q.curr != Some(id) {
            self.timeline_insert(rq, id);
        }
        self.se_mut(id).on_rq = true;
    }

    /// `dequeue_entity`; `leaving` when the task goes to another CPU (its averages go
    /// with it: `DO_DETACH`).
    pub(super) fn dequeue_entity(&mut self, rq: RqId, id: EntityId, leaving: bool, now: Nanos) {
        self.update_curr(rq, now);
        if self.tracks_load() {
            let how = if leaving {
                Track::Detach
            } else {
                Track::Update
            };
            self.update_load_avg(rq, id, now, how);
            self.update_runnable_weight(id);
        }
        if self.eevdf() {
            self.save_lag(rq, id);
        }
        self.clear_buddies(rq, id);
        if self.rq(rq).curr != Some(id) {
            self.timeline_remove(rq, id);
        }
        let weight = self.se(id).weight;
        let q = self.rq_mut(rq);
        q.load -= weight;
        q.nr_running -= 1;
        self.se_mut(id).on_rq = false;
        if self.tracks_load() {
            self.update_cfs_group(id, now);
        }
        // 2.6.24/25 only moved min_vruntime while charging the running entity.
        if !self.params.era.flat_slices() {
            self.update_min_vruntime(rq);
        }
    }

    /// `enqueue_task_fair`: queue the task's entity, then each ancestor that is not queued
    /// yet; an ancestor joining its parent's queue does so as a wake-up (its group was empty).
    /// 6.6 then brings the levels already queued up to date, and counts the task at every
    /// level.
    pub(super) fn enqueue_task(&mut self, task: TaskId, how: Enqueue, now: Nanos) {
        let mut how = how;
        let mut levels = self.hierarchy(self.task_se(task)).into_iter();
        for id in levels.by_ref() {
            if self.se(id).on_rq {
                self.update_queued_level(id, 1, now);
                break;
            }
            self.enqueue_entity(self.se(id).rq, id, how, now);
            if self.tracks_load() {
                self.rq_mut(self.se(id).rq).h_nr_running += 1;
            }
            how = match how {
                Enqueue::Wakeup { .. } => how,
                _ => Enqueue::Wakeup {
                    vfork_parent: false,
                },
            };
        }
        for id in levels {
            self.update_queued_level(id, 1, now);
        }
    }

    /// `dequeue_task_fair`: dequeue the task's entity, and each ancestor whose queue it left
    /// empty; `leaving` when the task goes to another CPU. 6.6 then brings the levels left
    /// queued up to date, and uncounts the task at every level.
    pub(super) fn dequeue_task(&mut self, task: TaskId, leaving: bool, now: Nanos) {
        let mut levels = self.hierarchy(self.task_se(task)).into_iter();
        let mut leaving = leaving;
        for id in levels.by_ref() {
            let rq = self.se(id).rq;
            self.dequeue_entity(rq, id, leaving, now);
            leaving = false;
            if self.tracks_load() {
                self.rq_mut(rq).h_nr_running -= 1;
            }
            if self.rq(rq).load != 0 {
                break;
            }
        }
        for id in levels {
            self.update_queued_level(id, -1, now);
        }
    }

    /// The second walk of 6.6's `enqueue_task_fair` and `dequeue_task_fair`, at a level
    /// that stays queued: its averages and shares brought up to now, and one task more or
    /// fewer (`delta`) in its queue's count.
    fn update_queued_level(&mut self, id: EntityId, delta: i32, now: Nanos) {
        if !self.tracks_load() {
            return;
        }
        let rq = self.se(id).rq;
        self.update_load_avg(rq, id, now, Track::Update);
        self.update_runnable_weight(id);
        self.update_cfs_group(id, now);
        let q = self.rq_mut(rq);
        q.h_nr_running = q.h_nr_running.wrapping_add_signed(delta);
    }
}
