//! The fair class as a [`Policy`]: the kernel-facing operations, each a short walk over the
//! machinery of the parent module (Linux's `fair_sched_class` table of functions).

use super::load_avg::Track;
use super::{Enqueue, Fair, ROOT};
use crate::debug_layout::TaskRow;
use crate::knobs::{KnobError, Tunable};
use crate::params::{FairParams, Feature};
use crate::policy::{
    ForkKind, LoadAvg, Migrant, Nanos, Policy, RunqueueInfo, TaskId, TaskInfo, Uid, Wakeup,
};
use crate::weights::{Nice, calc_delta_fair};
use alloc::vec::Vec;
use core::fmt;

impl Fair {
    /// Runs `f` on every level of the running task's hierarchy, bottom up, after charging it.
    fn for_each_running_level(&mut self, now: Nanos, mut f: impl FnMut(&mut Self, usize, usize)) {
        let Some(task) = self.current else { return };
        for id in self.hierarchy(self.task_se(task)) {
            let rq = self.se(id).rq;
            self.update_curr(rq, now);
            f(self, rq, id);
        }
    }

    /// Whether a task other than the one of entity `id` could run: some queue on the way
    /// up from it holds another entity (`yield_task_fair`'s `nr_running == 1` check, asked
    /// of every level as a group's own queue may hold the task alone). A plain walk up the
    /// parents: a yield with no one else to run is a system call of its own in `make bench`.
    fn others_waiting(&self, id: usize) -> bool {
        let mut level = Some(id);
        while let Some(at) = level {
            let se = self.se(at);
            if self.rq(se.rq).nr_running > 1 {
                return true;
            }
            level = se.parent;
        }
        false
    }
}

impl Fair {
    /// Wake-up preemption check; `fork` for a new child (`check_preempt_curr(.., WF_FORK)`).
    /// Returns whether the current task must go, for this wake-up or an earlier reason.
    pub(super) fn check_preempt(&mut self, woken: TaskId, now: Nanos, fork: bool) -> bool {
        let Some(curr) = self.current else {
            return true;
        };
        if curr == woken || !self.se(self.task_se(woken)).on_rq {
            return self.need_resched;
        }
        let preempt = if self.eevdf() {
            self.check_preempt_wakeup_eevdf(curr, woken, now)
        } else {
            self.check_preempt_wakeup_cfs(curr, woken, now, fork)
        };
        if preempt {
            self.resched();
        }
        self.need_resched
    }

    /// `task_fork_fair` of 6.6: update the parent's level, then place the newcomer with
    /// ENQUEUE_INITIAL (a half-slice deadline under PLACE_DEADLINE_INITIAL). The enqueue that
    /// follows places it again without the flag — lag 0 and a full-slice deadline, which is
    /// what sticks in 6.6 (the first placement's half slice never survives).
    fn fork_eevdf(&mut self, id: super::entity::EntityId, now: Nanos) {
        let rq = self.se(id).rq;
        self.update_curr(rq, now);
        self.place_entity_eevdf(rq, id, true);
    }
}

impl Policy for Fair {
    fn name(&self) -> &'static str {
        if self.eevdf() { "eevdf" } else { "cfs" }
    }

    fn spawn(&mut self, task: TaskId, uid: Uid, nice: Nice, now: Nanos) -> bool {
        let id = self.new_task_entity(task, uid, nice);
        self.init_avg_wakeup(id);
        if self.eevdf() {
            self.init_task_load(id);
            self.fork_eevdf(id, now);
        } else {
            let rq = self.se(id).rq;
            self.update_curr(rq, now);
            self.place_entity_cfs(rq, id, true, false);
        }
        self.enqueue_task(task, Enqueue::Initial, now);
        self.check_preempt(task, now, true)
    }

    /// `kind` does not change placement: a vfork parent is dequeued by the kernel right after
    /// the fork, and woken later with [`Wakeup::vfork_parent`].
    fn fork(&mut self, parent: TaskId, child: TaskId, _kind: ForkKind, now: Nanos) -> bool {
        let (uid, nice) = {
            let p = self.se(self.task_se(parent));
            (p.uid, p.nice)
        };
        let id = self.new_task_entity(child, uid, nice);
        self.init_avg_wakeup(id);
        if self.eevdf() {
            self.init_task_load(id);
            self.fork_eevdf(id, now);
            self.enqueue_task(child, Enqueue::Initial, now);
            return self.check_preempt(child, now, true);
        }
        if self.fork_cfs(id, now) {
            self.resched();
        }
        if self.params.era >= crate::params::Era::V2_6_32 {
            self.check_preempt(child, now, true);
        }
        self.need_resched
    }

    fn enqueue(&mut self, task: TaskId, wakeup: Wakeup, now: Nanos) {
        self.enqueue_task(
            task,
            Enqueue::Wakeup {
                vfork_parent: wakeup.vfork_parent,
            },
            now,
        );
        self.note_wakeup(task, wakeup);
    }

    fn dequeue(&mut self, task: TaskId, now: Nanos) {
        self.dequeue_task(task, false, now);
        self.note_sleep(task);
    }

    fn exit(&mut self, task: TaskId, now: Nanos) {
        let id = self.task_se(task);
        if self.se(id).on_rq {
            self.dequeue_task(task, false, now);
        }
        if self.tracks_load() {
            // `task_dead_fair`: its load leaves its queue.
            self.detach_from(self.se(id).rq, id, now);
        }
        self.se_mut(id).dead = true;
        if self.current != Some(task) {
            self.free_task_entity(task);
        }
    }

    fn migrate_out(&mut self, task: TaskId, now: Nanos) -> Migrant {
        self.migrate_out_fair(task, now)
    }

    fn migrate_in(
        &mut self,
        task: TaskId,
        migrant: Migrant,
        woken: Option<Wakeup>,
        now: Nanos,
    ) -> bool {
        self.migrate_in_fair(task, migrant, woken, now)
    }

    fn fork_away(&mut self, parent: TaskId, child: TaskId, now: Nanos) -> (Migrant, bool) {
        self.fork_away_fair(parent, child, now)
    }

    fn check_preempt_wakeup(&mut self, woken: TaskId, now: Nanos) -> bool {
        self.check_preempt(woken, now, false)
    }

    fn put_prev(&mut self, task: TaskId, now: Nanos) {
        debug_assert_eq!(
            self.current,
            Some(task),
            "put_prev of a task that is not running"
        );
        let se = self.task_se(task);
        for id in self.hierarchy(se) {
            self.put_prev_entity(self.se(id).rq, id, now);
        }
        self.current = None;
        self.need_resched = false;
        if self.se(se).dead {
            self.free_task_entity(task);
        }
    }

    fn pick_next(&mut self, now: Nanos) -> Option<TaskId> {
        debug_assert!(self.current.is_none(), "pick_next while a task is current");
        if self.rq(ROOT).nr_running == 0 {
            return None;
        }
        let mut rq = ROOT;
        loop {
            let id = if self.eevdf() {
                self.pick_eevdf(rq)
            } else {
                self.pick_next_entity_cfs(rq)
            }
            .expect("a runqueue with nr_running > 0 has an entity");
            self.set_next_entity(rq, id, now);
            match self.se(id).my_q {
                Some(q) => rq = q,
                None => {
                    self.current = self.se(id).task;
                    return self.current;
                }
            }
        }
    }

    fn tick(&mut self, now: Nanos) -> bool {
        let (cfs, tracks_load) = (!self.eevdf(), self.tracks_load());
        self.for_each_running_level(now, |s, rq, id| {
            if tracks_load {
                s.update_load_avg(rq, id, now, Track::Update);
                s.update_cfs_group(id, now);
            }
            if cfs {
                s.entity_tick_cfs(rq, id);
            }
        });
        self.need_resched
    }

    /// `yield_task_fair`: the task's own queue is charged and its buddy marks cleared. CFS
    /// (2.6.2x without `compat_yield`) then leaves it where it is, so it runs on if it is
    /// still leftmost; EEVDF moves its deadline one slice later. Only the task's own entity
    /// and queue, as Linux touches `curr->se` and `task_cfs_rq(curr)` alone: the levels above
    /// are charged when the task is put back. Returns whether anyone else could run (Linux
    /// returns early when the task is alone; the kernel then does not reschedule).
    fn yield_now(&mut self, now: Nanos) -> bool {
        let Some(task) = self.current else {
            return false;
        };
        let id = self.task_se(task);
        if !self.others_waiting(id) {
            return false;
        }
        let rq = self.se(id).rq;
        self.clear_buddies(rq, id);
        self.update_curr(rq, now);
        if self.eevdf() {
            let se = self.se_mut(id);
            se.deadline = se
                .deadline
                .wrapping_add(calc_delta_fair(se.slice, se.weight));
        }
        true
    }

    fn set_nice(&mut self, task: TaskId, nice: Nice, now: Nanos) {
        self.renice(task, nice, now);
    }

    fn set_uid(&mut self, task: TaskId, uid: Uid, now: Nanos) {
        self.move_to_group(task, uid, now);
    }

    fn current(&self) -> Option<TaskId> {
        self.current
    }

    fn task_info(&self, task: TaskId) -> Option<TaskInfo> {
        let id = self.tasks.get(task.index()).copied().flatten()?;
        let se = self.se(id);
        Some(TaskInfo {
            vruntime: se.vruntime,
            weight: se.weight,
            slice_ns: if self.eevdf() {
                se.slice
            } else {
                self.sched_slice(se.rq, id)
            },
            deadline: self.eevdf().then_some(se.deadline),
            on_rq: se.on_rq,
            sum_exec_runtime: se.sum_exec_runtime,
            exec_start: se.exec_start,
            h_load: self.h_load_of(id),
            util: se.avg.util_avg,
        })
    }

    fn runqueues(&self) -> Vec<RunqueueInfo> {
        self.runqueues
            .iter()
            .map(|q| RunqueueInfo {
                name: q.name.clone(),
                min_vruntime: q.min_vruntime,
                load: q.load,
                nr_running: q.nr_running,
            })
            .collect()
    }

    fn balance_queues(&self) -> Vec<crate::policy::BalanceQueue> {
        self.balance_queues_fair()
    }

    fn root_load(&self) -> u64 {
        self.rq(ROOT).load
    }

    fn waiting_tasks(&self) -> u32 {
        self.leaves().map(|q| q.iter().count() as u32).sum()
    }

    fn queued_load(&self) -> u64 {
        self.leaves().map(|q| q.load).sum()
    }

    fn nothing_queued(&self) -> bool {
        // A group's entity is on the root while its queue holds a task.
        self.rq(ROOT).nr_running == 0
    }

    fn write_debug_runqueues(&self, cpu: usize, out: &mut dyn fmt::Write) -> fmt::Result {
        self.write_runqueues(cpu, out)
    }

    fn write_debug_task_header(&self, out: &mut dyn fmt::Write) -> fmt::Result {
        self.write_task_header(out)
    }

    fn write_debug_task(
        &self,
        task: TaskId,
        row: &TaskRow<'_>,
        out: &mut dyn fmt::Write,
    ) -> fmt::Result {
        self.write_task(task, row, out)
    }

    fn fair_params(&self) -> Option<&FairParams> {
        Some(&self.params)
    }

    fn set_tunable(&mut self, tunable: Tunable, value: u64) -> Result<(), KnobError> {
        self.write_tunable(tunable, value)
    }

    fn set_feature(&mut self, feature: Feature, on: bool) -> Result<(), KnobError> {
        self.write_feature(feature, on)
    }

    fn group_shares(&self) -> Vec<(Uid, u64)> {
        self.shares_by_uid()
    }

    fn set_group_shares(&mut self, uid: Uid, shares: u64, now: Nanos) -> Result<u64, KnobError> {
        self.reweight_group(uid, shares, now)
    }

    fn set_group_weight_here(&mut self, uid: Uid, weight: u64, now: Nanos) {
        self.set_group_weight_here(uid, weight, now);
    }

    fn load_avg(&self) -> Option<LoadAvg> {
        self.tracks_load().then(|| {
            let a = self.rq(ROOT).avg;
            LoadAvg {
                load: a.load_avg,
                runnable: a.runnable_avg,
                util: a.util_avg,
            }
        })
    }

    fn update_blocked_averages(&mut self, now: Nanos) {
        if self.tracks_load() {
            self.update_blocked_fair(now);
        }
    }

    fn group_load_contribs(&self) -> Vec<(Uid, u64)> {
        if self.tracks_load() {
            self.group_load_contribs()
        } else {
            Vec::new()
        }
    }

    fn set_group_load_elsewhere(&mut self, uid: Uid, load: u64) {
        self.set_group_load_elsewhere(uid, load);
    }
}
