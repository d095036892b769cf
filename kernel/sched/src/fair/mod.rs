//! The fair scheduling class: CFS (Linux 2.6.24–2.6.36) and EEVDF (6.6), with group
//! scheduling. Mirrors kernel/sched_fair.c (later kernel/sched/fair.c).
//!
//! Both policies share the machinery in this module: entities in per-group runqueues, the
//! hierarchy walks of `enqueue_task_fair` / `dequeue_task_fair` / `pick_next_task_fair`,
//! `update_curr` and `min_vruntime`. Where they differ — slices, placement, preemption, the
//! pick itself — the code is in [`cfs`] and [`eevdf`], era by era.
//!
//! With per-uid grouping the hierarchy has two levels, as FAIR_USER_SCHED had: the root
//! runqueue holds one entity per uid, each owning a runqueue of that uid's tasks. Without
//! grouping, tasks sit directly on the root runqueue.

mod adaptive_gran;
mod attributes;
mod buddies;
mod cfs;
mod class;
mod debug;
mod eevdf;
pub mod entity;
mod knobs;
mod load_avg;
pub mod migrate;
mod queueing;
pub mod runqueue;
mod timeline;

use crate::params::{FairParams, Grouping};
use crate::policy::{Nanos, TaskId, Uid};
use crate::weights::{Nice, calc_delta_fair, max_vruntime, min_vruntime, nice_to_weight};
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::vec::Vec;
use entity::{Entity, EntityId, Hierarchy};
use load_avg::Track;
use runqueue::{FairRq, RqId};

const ROOT: RqId = 0;

/// The fair class's state: every entity and runqueue, and who is running.
#[derive(Debug, Clone)]
pub struct Fair {
    params: FairParams,
    entities: Vec<Option<Entity>>,
    free_entities: Vec<EntityId>,
    runqueues: Vec<FairRq>,
    /// Task id → its entity.
    tasks: Vec<Option<EntityId>>,
    /// uid → its group entity (per-uid grouping only).
    groups: BTreeMap<Uid, EntityId>,
    current: Option<TaskId>,
    /// The current task must go (Linux's TIF_NEED_RESCHED, set by `resched_task`): set by
    /// any path that decides so, reported by every Policy method that answers "preempt?",
    /// and cleared only when the task is switched out (`put_prev`). Wake-up checks look at
    /// it first, as Linux's `check_preempt_wakeup` does.
    need_resched: bool,
}

impl Fair {
    /// A fair scheduler with `params` (CFS or EEVDF, by `params.era`).
    pub fn new(params: FairParams) -> Self {
        let eevdf = params.era.is_eevdf();
        Fair {
            params,
            entities: Vec::new(),
            free_entities: Vec::new(),
            runqueues: alloc::vec![FairRq::new("/".into(), None, eevdf)],
            tasks: Vec::new(),
            groups: BTreeMap::new(),
            current: None,
            need_resched: false,
        }
    }

    /// The parameters this scheduler runs with (era preset plus overrides).
    pub fn params(&self) -> &FairParams {
        &self.params
    }

    fn eevdf(&self) -> bool {
        self.params.era.is_eevdf()
    }

    // --- the entity table -------------------------------------------------------------

    fn se(&self, id: EntityId) -> &Entity {
        self.entities[id].as_ref().expect("live entity")
    }

    fn se_mut(&mut self, id: EntityId) -> &mut Entity {
        self.entities[id].as_mut().expect("live entity")
    }

    fn rq(&self, id: RqId) -> &FairRq {
        &self.runqueues[id]
    }

    fn rq_mut(&mut self, id: RqId) -> &mut FairRq {
        &mut self.runqueues[id]
    }

    fn alloc_entity(&mut self, entity: Entity) -> EntityId {
        match self.free_entities.pop() {
            Some(id) => {
                self.entities[id] = Some(entity);
                id
            }
            None => {
                self.entities.push(Some(entity));
                self.entities.len() - 1
            }
        }
    }

    fn free_task_entity(&mut self, task: TaskId) {
        if let Some(id) = self.tasks.get_mut(task.index()).and_then(Option::take) {
            self.entities[id] = None;
            self.free_entities.push(id);
        }
    }

    /// The entity of `task`; panics on an unknown task (a kernel bug).
    fn task_se(&self, task: TaskId) -> EntityId {
        self.tasks
            .get(task.index())
            .copied()
            .flatten()
            .unwrap_or_else(|| panic!("unknown task {task}"))
    }

    /// The entity and its ancestors, bottom up (`for_each_sched_entity`).
    fn hierarchy(&self, id: EntityId) -> Hierarchy {
        let mut chain = Hierarchy::of(id);
        let mut at = id;
        while let Some(parent) = self.se(at).parent {
            chain.push(parent);
            at = parent;
        }
        chain
    }

    /// The runqueue a task of `uid` is queued on, creating the uid's group if needed
    /// (Linux created it with the `user_struct`, `sched_create_user`).
    fn rq_for_uid(&mut self, uid: Uid) -> (RqId, Option<EntityId>) {
        if self.params.grouping == Grouping::None {
            return (ROOT, None);
        }
        if let Some(&group) = self.groups.get(&uid) {
            return (self.se(group).my_q.unwrap(), Some(group));
        }
        let rq_id = self.runqueues.len();
        let shares = self.params.shares_of(uid);
        let mut group = Entity::new(shares, ROOT, None, self.rq(ROOT).min_vruntime);
        group.my_q = Some(rq_id);
        group.uid = uid;
        let group_id = self.alloc_entity(group);
        self.runqueues.push(FairRq::new(
            format!("/uids/{uid}"),
            Some(group_id),
            self.eevdf(),
        ));
        self.groups.insert(uid, group_id);
        if self.tracks_load() {
            // `online_fair_sched_group`: a new group's entity is attached at once, empty,
            // so that its first task's arrival propagates into it and is not added twice.
            self.attach_group_entity(group_id);
        }
        (rq_id, Some(group_id))
    }

    /// A new task entity for `task` in `uid`'s runqueue (not queued yet).
    fn new_task_entity(&mut self, task: TaskId, uid: Uid, nice: Nice) -> EntityId {
        assert!(
            self.tasks.get(task.index()).is_none_or(Option::is_none),
            "task {task} already exists"
        );
        let (rq, parent) = self.rq_for_uid(uid);
        let mut se = Entity::new(nice_to_weight(nice), rq, parent, self.rq(rq).min_vruntime);
        se.task = Some(task);
        se.uid = uid;
        se.nice = nice;
        let id = self.alloc_entity(se);
        if self.tasks.len() <= task.index() {
            self.tasks.resize(task.index() + 1, None);
        }
        self.tasks[task] = Some(id);
        id
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn timeline_insert(&mut self, rq: RqId, id: EntityId) {
        let se = self.se(id);
        let (vruntime, weight, deadline) = (se.vruntime, se.weight, se.deadline);
        self.rq_mut(rq).insert(id, vruntime, weight, deadline);
    }

    fn timeline_remove(&mut self, rq: RqId, id: EntityId) {
        let se = self.se(id);
        let (vruntime, weight) = (se.vruntime, se.weight);
        self.rq_mut(rq).remove(id, vruntime, weight);
    }

    // --- accounting: update_curr and min_vruntime --------------------------------------

    /// Charges the running entity of `rq` for the time since it was last charged
    /// (`update_curr`): wall time to `sum_exec_runtime`, scaled time to `vruntime`.
    // The check for nothing to charge is inlined into the callers: a switch right after a
    // yield (which charged the task at the same `now`) then costs no call.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn update_curr(&mut self, rq: RqId, now: Nanos) {
        let Some(curr) = self.rq(rq).curr else { return };
        if now > self.se(curr).exec_start {
            self.charge(rq, curr, now);
        }
    }

    /// `update_curr`'s work, for a `now` past the entity's `exec_start`. Inlined in
    /// optimised builds like the steps below: its call's register saves and restores were
    /// a fifth of its cost, paid at every yield and every wake-up's preemption check.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn charge(&mut self, rq: RqId, curr: EntityId, now: Nanos) {
        let se = self.se_mut(curr);
        let delta = now - se.exec_start;
        se.exec_start = now;
        se.sum_exec_runtime += delta;
        se.vruntime = se.vruntime.wrapping_add(calc_delta_fair(delta, se.weight));
        if self.eevdf() {
            self.update_deadline(rq, curr);
        }
        self.update_min_vruntime(rq);
    }

    /// `update_min_vruntime`: the smaller of the running and the leftmost entity's virtual
    /// runtime, but never backwards.
    // Inlined in optimised builds, as the other steps of a switch marked so: a call's
    // register saves and restores cost about as much as these bodies (the profile of the
    // switch). Debug builds keep the calls, so that gdb can break in each step.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn update_min_vruntime(&mut self, rq: RqId) {
        let q = self.rq(rq);
        let curr = q
            .curr
            .filter(|&c| self.se(c).on_rq)
            .map(|c| self.se(c).vruntime);
        let left = q.leftmost_vruntime();
        let candidate = match (curr, left) {
            (Some(c), Some(l)) => min_vruntime(c, l),
            (Some(v), None) | (None, Some(v)) => v,
            (None, None) => return,
        };
        let floor = max_vruntime(q.min_vruntime, candidate);
        self.rq_mut(rq).advance_min_vruntime(floor);
    }

    // --- enqueue and dequeue: `queueing` ------------------------------------------------

    /// `set_next_entity`: `id` becomes the running entity of `rq`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn set_next_entity(&mut self, rq: RqId, id: EntityId, now: Nanos) {
        if self.tracks_load() && self.se(id).on_rq {
            self.update_load_avg(rq, id, now, Track::Update);
        }
        let se = self.se_mut(id);
        se.exec_start = now;
        se.prev_sum_exec_runtime = se.sum_exec_runtime;
        se.deadline_at_pick = se.deadline;
        let (on_rq, vruntime, weight) = (se.on_rq, se.vruntime, se.weight);
        let q = self.rq_mut(rq);
        if on_rq {
            q.remove(id, vruntime, weight);
        }
        q.curr = Some(id);
    }

    /// `put_prev_entity`: `id` stops running; if still queued it goes back on the timeline.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn put_prev_entity(&mut self, rq: RqId, id: EntityId, now: Nanos) {
        if self.se(id).on_rq {
            self.update_curr(rq, now);
            self.timeline_insert(rq, id);
            if self.tracks_load() {
                self.update_load_avg(rq, id, now, Track::Update);
            }
        }
        self.rq_mut(rq).curr = None;
    }

    /// Brings `se` and `pse` up to the first level where they share a runqueue
    /// (`find_matching_se`), so that they can be compared.
    fn find_matching_se(&self, mut se: EntityId, mut pse: EntityId) -> (EntityId, EntityId) {
        let depth = |mut id: EntityId| {
            let mut d = 0;
            while let Some(p) = self.se(id).parent {
                id = p;
                d += 1;
            }
            d
        };
        let (mut se_depth, mut pse_depth) = (depth(se), depth(pse));
        while se_depth > pse_depth {
            se = self.se(se).parent.unwrap();
            se_depth -= 1;
        }
        while pse_depth > se_depth {
            pse = self.se(pse).parent.unwrap();
            pse_depth -= 1;
        }
        while self.se(se).rq != self.se(pse).rq {
            se = self.se(se).parent.unwrap();
            pse = self.se(pse).parent.unwrap();
        }
        (se, pse)
    }

    /// Asks for the current task to be switched out (`resched_task`); returns true.
    fn resched(&mut self) -> bool {
        self.need_resched = true;
        true
    }
}

/// How an entity joins a runqueue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Enqueue {
    /// A new task (fork or spawn): placement was done before, by the fork path.
    Initial,
    /// Back on the queue without sleeping (reweighting, moving groups).
    Requeue,
    /// A wake-up: sleeper placement applies.
    Wakeup { vfork_parent: bool },
}
#[cfg(test)]
mod fidelity_tests;
#[cfg(test)]
mod migrate_tests;
#[cfg(test)]
mod tests;
