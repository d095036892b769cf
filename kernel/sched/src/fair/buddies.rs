//! Buddies (Linux 2.6.28+, `set_next_buddy` / `set_last_buddy` / `clear_buddies`): hints
//! that bend CFS's "leftmost runs next" for cache warmth. With LAST_BUDDY (on in 2.6.32–2.6.36)
//! a task preempted by a wake-up is remembered and gets the CPU back after the wakee, as long
//! as it is not more than a wakeup granularity right of the leftmost; with NEXT_BUDDY (off by
//! default) the wakee itself is preferred. Both only engage once a queue has at least
//! `sched_nr_latency` tasks — which 2.6.36's change of nr_latency from 3 to 8 made rarer.

use super::Fair;
use super::entity::EntityId;
use super::runqueue::RqId;
use crate::params::Feature;
use crate::weights::vdiff;

/// Which buddy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Buddy {
    /// The wakee to prefer (NEXT_BUDDY).
    Next,
    /// The task a wake-up preempted (LAST_BUDDY).
    Last,
}

impl Fair {
    fn buddy_slot(&mut self, rq: RqId, which: Buddy) -> &mut Option<EntityId> {
        let q = self.rq_mut(rq);
        match which {
            Buddy::Next => &mut q.next_buddy,
            Buddy::Last => &mut q.last_buddy,
        }
    }

    /// Marks `id` and its ancestors as buddies, each on its own queue.
    pub(super) fn set_buddy(&mut self, id: EntityId, which: Buddy) {
        for level in self.hierarchy(id) {
            let rq = self.se(level).rq;
            *self.buddy_slot(rq, which) = Some(level);
        }
    }

    /// `clear_buddies`: if `id` is a buddy of `rq`, it stops being one there and above.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn clear_buddies(&mut self, rq: RqId, id: EntityId) {
        for which in [Buddy::Next, Buddy::Last] {
            if *self.buddy_slot(rq, which) != Some(id) {
                continue;
            }
            for level in self.hierarchy(id) {
                let level_rq = self.se(level).rq;
                let slot = self.buddy_slot(level_rq, which);
                if *slot != Some(level) {
                    break;
                }
                *slot = None;
            }
        }
    }

    /// `wakeup_preempt_entity(curr, se)`: −1 if `se` is not behind `curr`, +1 if it is more
    /// than a wakeup granularity behind, 0 in between.
    pub(super) fn wakeup_preempt_entity(&self, curr: EntityId, se: EntityId) -> i32 {
        let d = vdiff(self.se(curr).vruntime, self.se(se).vruntime);
        if d <= 0 {
            -1
        } else if d > self.wakeup_gran(curr, se) as i64 {
            1
        } else {
            0
        }
    }

    /// `pick_next_entity` of 2.6.36: the leftmost, unless a buddy is close enough behind it.
    pub(super) fn pick_next_entity_cfs(&mut self, rq: RqId) -> Option<EntityId> {
        let left = self.rq(rq).leftmost()?;
        let mut pick = left;
        let (next, last) = (self.rq(rq).next_buddy, self.rq(rq).last_buddy);
        for buddy in [next, last].into_iter().flatten() {
            debug_assert!(self.se(buddy).on_rq, "a buddy that is not queued");
            if self.wakeup_preempt_entity(buddy, left) < 1 {
                pick = buddy;
            }
        }
        self.clear_buddies(rq, pick);
        Some(pick)
    }

    /// NEXT_BUDDY's part of a wake-up (`check_preempt_wakeup` of 2.6.32–2.6.36): the wakee
    /// is marked, unless it is a new child. `scale`: the running task's queue has at least
    /// `sched_nr_latency` tasks.
    pub(super) fn note_next_buddy(&mut self, wakee: EntityId, scale: bool, fork: bool) {
        if self.feature(Feature::NextBuddy) && scale && !fork {
            self.set_buddy(wakee, Buddy::Next);
        }
    }

    /// LAST_BUDDY's part, once the wakee has preempted `preempted` (the running entity at
    /// the level where the two met): it is marked if it is a task still queued.
    pub(super) fn note_last_buddy(&mut self, preempted: EntityId, scale: bool) {
        if self.feature(Feature::LastBuddy)
            && scale
            && self.se(preempted).is_task()
            && self.se(preempted).on_rq
        {
            self.set_buddy(preempted, Buddy::Last);
        }
    }
}
