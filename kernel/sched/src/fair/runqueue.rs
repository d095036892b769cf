//! A fair runqueue (Linux's `struct cfs_rq`): the entities waiting to run, ordered by
//! virtual runtime, plus the sums the policies need — total load, count, `min_vruntime`,
//! and EEVDF's weighted average of virtual runtimes.
//!
//! The running entity (`curr`) is *not* in the timeline, as in Linux: it is taken out when
//! picked and put back when switched out, while still counting in `load` and `nr_running`.
//!
//! The timeline is a B-tree keyed by (virtual runtime, entity id), the same for both
//! policies (see [`super::timeline`]); under EEVDF each subtree also knows its earliest
//! deadline, so that the pick finds the earliest eligible deadline in O(log n) — one tree for
//! both orders, as in Linux 6.6. The leftmost entity is the root's first key: peeking at it
//! is O(1), as Linux's cached `rb_leftmost` is.

use super::entity::EntityId;
use super::timeline::Timeline;
use crate::pelt::Avg;
use crate::weights::vdiff;
use alloc::string::String;

/// Index of a runqueue in the scheduler's table; the root is 0.
pub type RqId = usize;

/// Linux starts `min_vruntime` at −2^20 ns, just below the u64 wrap, so that code comparing
/// virtual times without wrap-safety breaks within the first millisecond.
pub const INITIAL_MIN_VRUNTIME: u64 = (-(1i64 << 20)) as u64;

/// One fair runqueue: the root, or the queue a group entity owns (Linux's `struct cfs_rq`).
#[derive(Debug, Clone)]
pub struct FairRq {
    /// "/" for the root, "/uids/N" for uid N's group (as `/sys/kernel/uids/N` names it).
    pub name: String,
    /// The waiting entities in vruntime order (`tasks_timeline`).
    timeline: Timeline,
    /// Timeline keys are virtual times relative to this fixed origin, which turns the wrap-safe
    /// order of virtual times into plain integer order (valid while all entities of the queue
    /// are within 2^63 ns of it: 292 years).
    epoch: u64,
    /// Σ weight of queued entities, the running one included (`cfs_rq->load.weight`).
    pub load: u64,
    /// Number of queued entities, the running one included.
    pub nr_running: u32,
    /// Monotonic floor of the virtual runtimes of the queue's entities.
    pub min_vruntime: u64,
    /// The running entity of this queue, if any.
    pub curr: Option<EntityId>,
    /// The group entity this queue belongs to (`None` for the root).
    pub owner: Option<EntityId>,
    /// NEXT_BUDDY: the wakee to prefer at the next pick.
    pub next_buddy: Option<EntityId>,
    /// LAST_BUDDY: the entity a wake-up preempted, to give the CPU back to.
    pub last_buddy: Option<EntityId>,
    /// EEVDF: Σ (vruntime − min_vruntime) × weight over the timeline (not `curr`). CFS
    /// keeps it (and `avg_load`) at zero: 128-bit products on every insert, remove and
    /// `min_vruntime` step would cost every switch for a sum CFS never reads.
    pub avg_vruntime: i128,
    /// EEVDF: Σ weight over the timeline (not `curr`).
    pub avg_load: u64,
    /// 6.6: tasks queued here and in the groups below (`h_nr_running`).
    pub h_nr_running: u32,
    /// 6.6: the queue's load-tracking averages (`cfs_rq->avg`, `super::load_avg`).
    pub avg: Avg,
    /// 6.6: runnable time attached (+) or detached (−) here since the group's entity
    /// last took it (`prop_runnable_sum`), and whether there is any (`propagate`).
    pub prop_runnable_sum: i64,
    /// See `prop_runnable_sum`.
    pub propagate: bool,
    /// 6.6: the load this group's queue last published to the group's sum over CPUs.
    pub tg_load_avg_contrib: u64,
    /// 6.6: the group's published load on every other CPU (`tg->load_avg` less
    /// `tg_load_avg_contrib`), as the caller last summed it.
    pub tg_load_avg_elsewhere: u64,
}

impl FairRq {
    /// An empty runqueue (Linux's `init_cfs_rq`), owned by group entity `owner` if any.
    pub fn new(name: String, owner: Option<EntityId>, eevdf: bool) -> Self {
        FairRq {
            name,
            timeline: Timeline::new(eevdf),
            epoch: INITIAL_MIN_VRUNTIME,
            load: 0,
            nr_running: 0,
            min_vruntime: INITIAL_MIN_VRUNTIME,
            curr: None,
            owner,
            next_buddy: None,
            last_buddy: None,
            avg_vruntime: 0,
            avg_load: 0,
            h_nr_running: 0,
            avg: Avg::default(),
            prop_runnable_sum: 0,
            propagate: false,
            tg_load_avg_contrib: 0,
            tg_load_avg_elsewhere: 0,
        }
    }

    /// Whether this is an EEVDF queue (its timeline tracks deadlines), which keeps
    /// `avg_vruntime` and `avg_load`.
    fn is_eevdf(&self) -> bool {
        self.timeline.tracks_deadlines()
    }

    fn key(&self, vruntime: u64) -> i64 {
        vdiff(vruntime, self.epoch)
    }

    /// Puts an entity on the timeline (`__enqueue_entity`).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn insert(&mut self, id: EntityId, vruntime: u64, weight: u64, deadline: u64) {
        let entry = (self.key(vruntime), id);
        let deadline_key = self.key(deadline);
        self.timeline.insert(entry, deadline_key);
        if self.is_eevdf() {
            self.avg_vruntime +=
                i128::from(vdiff(vruntime, self.min_vruntime)) * i128::from(weight);
            self.avg_load += weight;
        }
    }

    /// Takes an entity off the timeline (`__dequeue_entity`); `vruntime` and `weight` must be
    /// the values it was inserted with.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn remove(&mut self, id: EntityId, vruntime: u64, weight: u64) {
        let removed = self.timeline.remove((self.key(vruntime), id));
        debug_assert!(removed, "entity {id} not on the timeline of {}", self.name);
        if self.is_eevdf() {
            self.avg_vruntime -=
                i128::from(vdiff(vruntime, self.min_vruntime)) * i128::from(weight);
            self.avg_load -= weight;
        }
    }

    /// The waiting entity with the smallest virtual runtime.
    pub fn leftmost(&self) -> Option<EntityId> {
        self.timeline.first().map(|(_, id)| id)
    }

    /// The smallest virtual runtime on the timeline, read from its key (no entity lookup).
    pub fn leftmost_vruntime(&self) -> Option<u64> {
        let (key, _) = self.timeline.first()?;
        Some(self.epoch.wrapping_add(key as u64))
    }

    /// The waiting entity with the largest virtual runtime.
    pub fn rightmost(&self) -> Option<EntityId> {
        self.timeline.last().map(|(_, id)| id)
    }

    /// EEVDF: the waiting entity with the earliest deadline among the eligible ones, those
    /// at most `offset` past `min_vruntime` in virtual time. `None` under CFS.
    pub fn earliest_eligible(&self, offset: i64) -> Option<EntityId> {
        if !self.is_eevdf() {
            return None;
        }
        self.timeline
            .pick(self.key(self.min_vruntime).saturating_add(offset))
    }

    /// Waiting entities in virtual-runtime order.
    pub fn iter(&self) -> impl Iterator<Item = EntityId> + '_ {
        self.timeline.keys().into_iter().map(|(_, id)| id)
    }

    /// Raises `min_vruntime` to `candidate` if that is later (it never goes back), keeping
    /// EEVDF's relative sum consistent with the new origin.
    pub fn advance_min_vruntime(&mut self, candidate: u64) {
        let delta = vdiff(candidate, self.min_vruntime);
        if delta > 0 {
            if self.is_eevdf() {
                self.avg_vruntime -= i128::from(self.avg_load) * i128::from(delta);
            }
            self.min_vruntime = candidate;
        }
    }
}
