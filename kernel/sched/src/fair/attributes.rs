//! A task's attributes changing under it: its nice level (`set_user_nice`) and its group
//! (`sched_move_task`, a uid change with per-uid groups) — taken off its queues, changed,
//! and put back, with what each era carries across.

use super::{Enqueue, Fair};
use crate::params::Grouping;
use crate::policy::{Nanos, TaskId, Uid};
use crate::weights::{Nice, nice_to_weight};

impl Fair {
    pub(super) fn renice(&mut self, task: TaskId, nice: Nice, now: Nanos) {
        let id = self.task_se(task);
        let on_rq = self.se(id).on_rq;
        if on_rq {
            self.dequeue_task(task, false, now);
        }
        let weight = nice_to_weight(nice);
        if self.tracks_load() {
            self.reweight_load_avg(self.se(id).rq, id, weight);
        }
        let se = self.se_mut(id);
        se.nice = nice;
        se.weight = weight;
        if on_rq {
            self.enqueue_task(task, Enqueue::Requeue, now);
        }
    }

    /// Linux's `sched_move_task`: out of the old group, into the new one. 2.6.24 and 2.6.25
    /// dequeue and re-enqueue the task with its vruntime untouched — an absolute value from
    /// the old queue's clock, however far the new queue's `min_vruntime` is. Later eras keep
    /// the task's position relative to `min_vruntime` (EEVDF keeps its lag instead).
    pub(super) fn move_to_group(&mut self, task: TaskId, uid: Uid, now: Nanos) {
        let id = self.task_se(task);
        if self.params.grouping == Grouping::None {
            self.se_mut(id).uid = uid;
            return;
        }
        let running = self.current == Some(task);
        let on_rq = self.se(id).on_rq;
        if on_rq {
            self.dequeue_task(task, false, now);
        }
        if running {
            for level in self.hierarchy(id) {
                self.put_prev_entity(self.se(level).rq, level, now);
            }
        }
        if self.tracks_load() {
            // `task_change_group_fair`: its averages leave the old group for the new.
            self.detach_from(self.se(id).rq, id, now);
        }
        let old_min = self.rq(self.se(id).rq).min_vruntime;
        let (rq, parent) = self.rq_for_uid(uid);
        let new_min = self.rq(rq).min_vruntime;
        let renormalise = self.params.era > crate::params::Era::V2_6_25;
        let se = self.se_mut(id);
        if renormalise {
            se.vruntime = se.vruntime.wrapping_sub(old_min).wrapping_add(new_min);
        }
        se.rq = rq;
        se.parent = parent;
        se.uid = uid;
        if self.tracks_load() {
            self.attach_to(rq, id, now);
        }
        if running {
            for level in self.hierarchy(id) {
                self.set_next_entity(self.se(level).rq, level, now);
            }
        }
        if on_rq {
            self.enqueue_task(task, Enqueue::Requeue, now);
        }
    }
}
