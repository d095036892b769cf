//! A schedulable entity (Linux's `struct sched_entity`): a task, or a group standing in its
//! parent's runqueue for all the tasks of the group.

use super::runqueue::RqId;
use crate::pelt::Avg;
use crate::policy::{TaskId, Uid};
use crate::weights::Nice;

/// Index of an entity in the scheduler's table.
pub type EntityId = usize;

/// One entity: its weight, its virtual time and where it sits in the group hierarchy
/// (Linux's `struct sched_entity`).
#[derive(Debug, Clone)]
pub struct Entity {
    /// Load weight: from the nice level for a task, the group's shares for a group.
    pub weight: u64,
    /// Virtual runtime: CPU time received, scaled by 1024 / weight.
    pub vruntime: u64,
    /// When the entity last started running or was last accounted (`exec_start`).
    pub exec_start: u64,
    /// Total wall-clock CPU time received.
    pub sum_exec_runtime: u64,
    /// `sum_exec_runtime` when the entity was last picked: what it has run since is
    /// `sum_exec_runtime − prev_sum_exec_runtime`.
    pub prev_sum_exec_runtime: u64,
    /// Queued (waiting or running) on `rq`.
    pub on_rq: bool,
    /// The runqueue the entity is (or would be) queued on.
    pub rq: RqId,
    /// The group entity one level up; `None` at the top.
    pub parent: Option<EntityId>,
    /// For a group entity, the runqueue it owns (`my_q`); `None` for a task.
    pub my_q: Option<RqId>,
    /// The task this entity is; `None` for a group.
    pub task: Option<TaskId>,
    /// The task's uid (for a group entity, the group's uid).
    pub uid: Uid,
    /// The task's nice level (its weight comes from it).
    pub nice: Nice,
    /// EEVDF: virtual deadline.
    pub deadline: u64,
    /// EEVDF: the requested slice (wall-clock ns).
    pub slice: u64,
    /// EEVDF: virtual lag (V − vruntime) saved when the entity left the queue.
    pub vlag: i64,
    /// EEVDF (RUN_TO_PARITY): the deadline the entity had when it was picked.
    pub deadline_at_pick: u64,
    /// The task has exited and goes away once it is switched out.
    pub dead: bool,
    /// 2.6.32's `avg_wakeup`: how long the task runs, on average, between waking others
    /// (a task that sleeps without waking anyone counts as the wakeup granularity).
    pub avg_wakeup: u64,
    /// `sum_exec_runtime` at the task's last wake-up of another task (0: none since it woke).
    pub last_wakeup: u64,
    /// `sum_exec_runtime` when the task last woke up itself.
    pub start_runtime: u64,
    /// 6.6: its load-tracking averages (`se->avg`, `fair::load_avg`).
    pub avg: Avg,
    /// 6.6: its averages are part of its runqueue's (Linux marks the opposite with
    /// `last_update_time == 0`, which a clock starting at 0 cannot).
    pub avg_attached: bool,
    /// 6.6: for a group's entity, the tasks its queue held at its last update
    /// (`runnable_weight`); a task counts 1.
    pub runnable_weight: u32,
}

impl Entity {
    /// A not-yet-queued entity of `weight` for runqueue `rq`, starting at `vruntime`.
    pub fn new(weight: u64, rq: RqId, parent: Option<EntityId>, vruntime: u64) -> Self {
        Entity {
            weight,
            vruntime,
            exec_start: 0,
            sum_exec_runtime: 0,
            prev_sum_exec_runtime: 0,
            on_rq: false,
            rq,
            parent,
            my_q: None,
            task: None,
            uid: 0,
            nice: 0,
            deadline: vruntime,
            slice: 0,
            vlag: 0,
            deadline_at_pick: 0,
            dead: false,
            avg_wakeup: 0,
            last_wakeup: 0,
            start_runtime: 0,
            avg: Avg::default(),
            avg_attached: false,
            runnable_weight: 1,
        }
    }

    /// A task entity (Linux's `entity_is_task`), as opposed to a group.
    pub fn is_task(&self) -> bool {
        self.my_q.is_none()
    }

    /// Wall time run since the entity was last picked.
    pub fn ran_since_pick(&self) -> u64 {
        self.sum_exec_runtime - self.prev_sum_exec_runtime
    }
}

/// The most levels an entity's hierarchy has: a task and its uid group. Groups do not nest
/// in any era cfslab models (FAIR_USER_SCHED and USER_SCHED made one level of per-uid
/// groups under the root).
const MAX_DEPTH: usize = 2;

/// An entity and its ancestors, bottom up (what `for_each_sched_entity` walks), held in
/// place: the walk runs on every switch, and a heap allocation there cost more than the
/// walk itself.
#[derive(Debug, Clone, Copy)]
pub struct Hierarchy {
    ids: [EntityId; MAX_DEPTH],
    len: usize,
}

impl Hierarchy {
    /// Just `id`.
    pub fn of(id: EntityId) -> Hierarchy {
        Hierarchy {
            ids: [id; MAX_DEPTH],
            len: 1,
        }
    }

    /// Adds the next ancestor up.
    pub fn push(&mut self, parent: EntityId) {
        assert!(self.len < MAX_DEPTH, "groups do not nest");
        self.ids[self.len] = parent;
        self.len += 1;
    }
}

impl IntoIterator for Hierarchy {
    type Item = EntityId;
    type IntoIter = core::iter::Take<core::array::IntoIter<EntityId, MAX_DEPTH>>;

    fn into_iter(self) -> Self::IntoIter {
        self.ids.into_iter().take(self.len)
    }
}
