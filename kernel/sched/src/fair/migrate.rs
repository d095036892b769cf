//! A fair task moving between CPUs, era by era: what it takes with it and where the new
//! CPU's runqueue puts it (docs/scheduler.md, "Several CPUs").
//!
//! - **CFS, 2.6.24–2.6.36.** A task keeps its distance from the floor of its runqueue. Up
//!   to 2.6.32 `set_task_cpu` shifted its vruntime by the difference between the two
//!   runqueues' `min_vruntime` (its group's runqueue on each CPU, with groups); from 2.6.33
//!   `dequeue_entity` without a sleep (and `task_waking_fair` for a waking task) subtracts
//!   the old floor and the enqueue on the new CPU adds the new one — the same arithmetic,
//!   moved. So a [`FairMigrant`] holds `vruntime − min_vruntime` of the CPU it left.
//! - A task moved while runnable is queued as it was (`activate_task(rq, p, 0)`: no
//!   placement, so no sleeper credit); one woken onto the new CPU is placed as any wake-up,
//!   from the new floor. Its group's entity, if the group had nothing queued there, joins
//!   the new CPU's root as a wake-up does.
//! - **A child forked onto another CPU.** In 2.6.24 and 2.6.25 `sched_fork` chose the CPU
//!   first and `task_new_fair` then placed the child there as a newcomer (START_DEBIT from
//!   that runqueue's floor); child-runs-first applied only on the parent's CPU. From 2.6.32
//!   `task_fork_fair` places it on the parent's runqueue, from the parent's vruntime, and
//!   the move keeps its distance from the floor.
//! - **EEVDF, 6.6.** No floor is carried: the task keeps its lag (`vlag`, saved as it left
//!   the queue — at its sleep, or at the move), and `place_entity` puts it at the new
//!   runqueue's weighted average minus that lag, with a deadline a full slice away.

use super::{Enqueue, Fair, FairRq, ROOT};
use crate::params::{Era, Grouping};
use crate::pelt::Avg;
use crate::policy::{BalanceQueue, Carried, Migrant, Nanos, QueuedTask, TaskId, Wakeup};
use alloc::vec::Vec;

/// Where a moving fair task is to be placed on its new runqueue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// CFS: this far (wrapping) from the new runqueue's `min_vruntime`.
    FromFloor(i64),
    /// EEVDF: at the new runqueue's average minus this lag.
    Lag(i64),
    /// CFS 2.6.24/25's child on another CPU: placed there as a newcomer.
    Newcomer,
}

/// What a fair task takes to another CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FairMigrant {
    /// Where it goes on the new runqueue.
    pub place: Place,
    /// A child that has not run yet (its arrival is checked as a fork's, WF_FORK).
    pub forked: bool,
    /// Its CPU time so far.
    pub sum_exec_runtime: u64,
    /// 6.6: its load-tracking averages, detached from the old CPU's queue and attached to
    /// the new one's at its enqueue there.
    pub avg: Avg,
    /// 2.6.32's ADAPTIVE_GRAN record (see `adaptive_gran`).
    pub avg_wakeup: u64,
    /// See `avg_wakeup`.
    pub last_wakeup: u64,
    /// See `avg_wakeup`.
    pub start_runtime: u64,
}

impl Fair {
    /// [`crate::Policy::migrate_out`]: off the queue if queued (not a sleep), and forgotten.
    pub(super) fn migrate_out_fair(&mut self, task: TaskId, now: Nanos) -> Migrant {
        assert_ne!(self.current, Some(task), "the running task does not move");
        let id = self.task_se(task);
        if self.se(id).on_rq {
            self.dequeue_task(task, true, now);
        } else if self.tracks_load() {
            // A sleeping task's averages stay in its queue until it moves (Linux's
            // `remove_entity_load_avg`, done at once: see `load_avg`).
            self.detach_from(self.se(id).rq, id, now);
        }
        self.carry_away(task, false)
    }

    /// The record of `task`, whose entity is not queued, as it leaves this CPU; the entity
    /// is freed.
    fn carry_away(&mut self, task: TaskId, forked: bool) -> Migrant {
        let id = self.task_se(task);
        let se = self.se(id);
        let place = if self.eevdf() {
            Place::Lag(se.vlag)
        } else {
            Place::FromFloor(se.vruntime.wrapping_sub(self.rq(se.rq).min_vruntime) as i64)
        };
        let migrant = Migrant {
            uid: se.uid,
            nice: se.nice,
            carried: Carried::new(FairMigrant {
                place,
                forked,
                sum_exec_runtime: se.sum_exec_runtime,
                avg: se.avg,
                avg_wakeup: se.avg_wakeup,
                last_wakeup: se.last_wakeup,
                start_runtime: se.start_runtime,
            }),
        };
        self.free_task_entity(task);
        migrant
    }

    /// [`crate::Policy::fork_away`]: the child set up as this CPU's fork sets it up, then
    /// carried away; whether the parent must give way (a child-runs-first swap).
    pub(super) fn fork_away_fair(
        &mut self,
        parent: TaskId,
        child: TaskId,
        now: Nanos,
    ) -> (Migrant, bool) {
        let (uid, nice) = {
            let p = self.se(self.task_se(parent));
            (p.uid, p.nice)
        };
        let id = self.new_task_entity(child, uid, nice);
        self.init_avg_wakeup(id);
        if self.tracks_load() {
            self.init_task_load(id);
        }
        let mut resched = false;
        if self.eevdf() {
            // 6.6's enqueue on the new CPU places the child again, with lag 0: what
            // `task_fork_fair` placed here does not survive (see `fork_eevdf`).
            self.se_mut(id).vlag = 0;
        } else if self.params.era >= Era::V2_6_32 {
            resched = self.place_child_cfs(id, now);
        }
        let mut migrant = self.carry_away(child, true);
        if let Some(f) = migrant.carried.record_mut::<FairMigrant>()
            && !self.eevdf()
            && self.params.era < Era::V2_6_32
        {
            f.place = Place::Newcomer;
        }
        if resched {
            self.resched();
        }
        (migrant, resched)
    }

    /// [`crate::Policy::migrate_in`].
    pub(super) fn migrate_in_fair(
        &mut self,
        task: TaskId,
        migrant: Migrant,
        woken: Option<Wakeup>,
        now: Nanos,
    ) -> bool {
        let Some(f) = migrant.carried.into_record::<FairMigrant>() else {
            panic!("task {task} comes from another kind of policy");
        };
        let id = self.new_task_entity(task, migrant.uid, migrant.nice);
        let rq = self.se(id).rq;
        let floor = self.rq(rq).min_vruntime;
        let se = self.se_mut(id);
        se.sum_exec_runtime = f.sum_exec_runtime;
        se.prev_sum_exec_runtime = f.sum_exec_runtime;
        se.avg_wakeup = f.avg_wakeup;
        se.last_wakeup = f.last_wakeup;
        se.start_runtime = f.start_runtime;
        se.avg = f.avg;
        if f.forked && self.tracks_load() {
            // `post_init_entity_util_avg` runs where the child lands.
            self.init_task_load(id);
        }
        let se = self.se_mut(id);
        match f.place {
            Place::FromFloor(distance) => se.vruntime = floor.wrapping_add(distance as u64),
            Place::Lag(lag) => se.vlag = lag,
            Place::Newcomer => {
                self.update_curr(rq, now);
                self.place_entity_cfs(rq, id, true, false);
            }
        }
        let how = match (woken, f.place) {
            (Some(w), _) => Enqueue::Wakeup {
                vfork_parent: w.vfork_parent,
            },
            (None, Place::Newcomer) => Enqueue::Initial,
            (None, _) => Enqueue::Requeue,
        };
        self.enqueue_task(task, how, now);
        if let Some(w) = woken {
            self.note_wakeup(task, w);
        }
        // 2.6.24's `task_new_fair` ends by rescheduling the child's CPU, whichever it is.
        if f.place == Place::Newcomer {
            self.resched();
        }
        self.check_preempt(task, now, f.forked)
    }

    /// The leaf runqueues, which queue tasks, the newest group first: every group's with
    /// groups, the root's without.
    pub(super) fn leaves(&self) -> impl Iterator<Item = &FairRq> {
        let grouped = self.params.grouping != Grouping::None;
        let leaves = match grouped {
            true => ROOT + 1..self.runqueues.len(),
            false => ROOT..ROOT + 1,
        };
        leaves.rev().map(|rq| self.rq(rq))
    }

    /// [`crate::Policy::balance_queues`]: the runqueues whose entities are tasks — each
    /// uid's, newest first, with groups; the root's without — with their waiting tasks in
    /// timeline order.
    pub(super) fn balance_queues_fair(&self) -> Vec<BalanceQueue> {
        self.leaves()
            .map(|q| {
                let tasks = q.iter().chain(q.curr.filter(|&c| self.se(c).on_rq));
                let best_nice = tasks.map(|id| self.se(id).nice).min();
                BalanceQueue {
                    uid: q.owner.map(|g| self.se(g).uid),
                    load: q.load,
                    waiting: q
                        .iter()
                        .map(|id| {
                            let se = self.se(id);
                            QueuedTask {
                                task: se.task.expect("a leaf queues tasks"),
                                weight: se.weight,
                                prio: (120 + i32::from(se.nice)) as u32,
                                h_load: self.h_load_of(id),
                                util: se.avg.util_avg,
                            }
                        })
                        .collect(),
                    best_prio: best_nice.map_or(140, |n| (120 + i32::from(n)) as u32),
                    entity_weight: q.owner.map(|g| self.se(g).weight),
                }
            })
            .collect()
    }
}
