//! The O(1) scheduler of Linux 2.6.11 (kernel/sched.c), the kernel of seed 002's
//! multi-second stalls (docs/scheduler.md §9).
//!
//! Two priority arrays, *active* and *expired*, each a FIFO list per priority (140 levels,
//! normal tasks use 100–139 = 120 + nice) with a bitmap of the non-empty ones. The CPU goes to
//! the first task of the best non-empty list of the active array. A task whose time slice
//! runs out goes to the expired array — unless it counts as *interactive*, in which case it
//! goes back to the end of the active array. When the active array is empty the two swap.
//!
//! Interactivity comes from `sleep_avg`: time slept (and time waited on the runqueue after a
//! wake-up) raises it, time run lowers it; its bonus moves the dynamic priority ±5 levels.
//! The flaw seed 002 hit: a task credited with enough sleep stays interactive and keeps
//! returning to the active array, while an expired task waits for the arrays to swap — or
//! for the starvation limit, one second per runnable task.
//!
//! Everything is counted in ticks, as 2.6.11 did; the tick rate is a parameter. There are
//! no groups. cfslab's simplifications: all wake-ups count as from interrupt context (timer
//! wake-ups are; they get the full runqueue-wait credit), and `sched_exit` returns a dead
//! child's unused first slice but not its sleep_avg penalty.

mod arrays;
mod debug;
mod migrate;
mod priority;
mod task;
#[cfg(test)]
mod tests;

use crate::debug_layout::TaskRow;
use crate::policy::{
    ForkKind, Migrant, Nanos, Policy, RunqueueInfo, TaskId, TaskInfo, Uid, Wakeup,
};
use crate::weights::Nice;
use alloc::vec::Vec;
use arrays::PrioArray;
use core::fmt;
use task::Task;

pub use migrate::O1Migrant;

/// The tick rate of 2.6.11 on x86 (include/asm-i386/param.h): the O(1) era's default.
pub const HZ: u32 = 1000;

const MAX_BONUS: u64 = 10;
const NS_PER_MS: u64 = 1_000_000;
/// MAX_SLEEP_AVG = DEF_TIMESLICE × MAX_BONUS = 1 s.
const MAX_SLEEP_AVG_NS: u64 = 1_000 * NS_PER_MS;
const DEF_TIMESLICE_MS: u64 = 100;
const MIN_TIMESLICE_MS: u64 = 5;
const GRANULARITY_MS: u64 = 10;
const CHILD_PENALTY: u64 = 95;
/// Runqueue waiting after a non-interrupt wake-up counts 30% as sleep.
const ON_RUNQUEUE_WEIGHT: u64 = 30;

/// The 2.6.11 O(1) scheduler for one CPU.
#[derive(Debug, Clone)]
pub struct O1 {
    tick_ns: Nanos,
    tasks: Vec<Option<Task>>,
    arrays: [PrioArray; 2],
    /// Index of the active array in `arrays`.
    active: usize,
    /// When the first task expired since the last array swap (for EXPIRED_STARVING).
    expired_timestamp: Option<Nanos>,
    best_expired_prio: u64,
    current: Option<TaskId>,
    need_resched: bool,
}

impl O1 {
    /// An O(1) scheduler ticking every `tick_ns` (1 / HZ; 2.6.11 on x86 had HZ=1000).
    pub fn new(tick_ns: Nanos) -> Self {
        O1 {
            tick_ns: tick_ns.max(1),
            tasks: Vec::new(),
            arrays: [PrioArray::new(), PrioArray::new()],
            active: 0,
            expired_timestamp: None,
            best_expired_prio: 140,
            current: None,
            need_resched: false,
        }
    }

    fn ticks(&self, ms: u64) -> u64 {
        (ms * NS_PER_MS / self.tick_ns).max(1)
    }

    fn t(&self, id: TaskId) -> &Task {
        self.tasks[id].as_ref().expect("live task")
    }

    fn t_mut(&mut self, id: TaskId) -> &mut Task {
        self.tasks[id].as_mut().expect("live task")
    }

    fn enqueue_in(&mut self, id: TaskId, active: bool) {
        let array = if active { self.active } else { 1 - self.active };
        let prio = self.t(id).prio;
        self.arrays[array].push_back(prio, id);
        self.t_mut(id).in_active = Some(active);
    }

    fn dequeue_from_array(&mut self, id: TaskId) {
        if let Some(active) = self.t_mut(id).in_active.take() {
            let array = if active { self.active } else { 1 - self.active };
            let prio = self.t(id).prio;
            self.arrays[array].remove(prio, id);
        }
    }

    /// `EXPIRED_STARVING`: the expired array has waited a second per runnable task, or
    /// holds a task of better static priority than the running one. `nr_running` is
    /// `rq->nr_running`, which still counts the running task whose slice just ran out
    /// (`scheduler_tick` has taken it off its array, not off the runqueue).
    fn expired_starving(&self, now: Nanos, current: &Task, nr_running: u64) -> bool {
        let starving = self.expired_timestamp.is_some_and(|since| {
            now.saturating_sub(since) >= MAX_SLEEP_AVG_NS * nr_running + self.tick_ns
        });
        starving || current.static_prio > self.best_expired_prio
    }

    /// `rq->nr_running`: every queued task, the running one included (it stays on its array
    /// while it runs).
    fn nr_running(&self) -> u64 {
        (self.arrays[0].len() + self.arrays[1].len()) as u64
    }

    fn preempts_current(&self, id: TaskId) -> bool {
        self.current
            .is_none_or(|c| self.t(id).prio < self.t(c).prio)
    }
}

impl Policy for O1 {
    fn name(&self) -> &'static str {
        "o1"
    }

    fn spawn(&mut self, task: TaskId, _uid: Uid, nice: Nice, now: Nanos) -> bool {
        self.new_task(task, nice, now, None);
        let t = self.t_mut(task);
        t.prio = Self::effective_prio(t);
        self.enqueue_in(task, true);
        self.preempts_current(task)
    }

    /// `sched_fork` + `wake_up_new_task`: the child takes half the parent's remaining slice
    /// and 95% of its bonus; a plain fork's child runs first (queued just before the parent).
    fn fork(&mut self, parent: TaskId, child: TaskId, kind: ForkKind, now: Nanos) -> bool {
        self.forked_child(parent, child, now);
        match (kind, self.t(parent).in_active) {
            (ForkKind::Fork, Some(active)) => {
                let prio = self.t(parent).prio;
                self.t_mut(child).prio = prio;
                let array = if active { self.active } else { 1 - self.active };
                self.arrays[array].insert_before(prio, child, parent);
                self.t_mut(child).in_active = Some(active);
                true
            }
            _ => {
                self.enqueue_in(child, true);
                self.preempts_current(child)
            }
        }
    }

    fn enqueue(&mut self, task: TaskId, _wakeup: Wakeup, now: Nanos) {
        self.recalc_task_prio(task, now);
        let t = self.t_mut(task);
        t.timestamp = now;
        t.activated = 2;
        self.enqueue_in(task, true);
    }

    fn dequeue(&mut self, task: TaskId, _now: Nanos) {
        self.dequeue_from_array(task);
    }

    fn exit(&mut self, task: TaskId, _now: Nanos) {
        self.dequeue_from_array(task);
        // `sched_exit`: an unused first slice goes back to the parent.
        let (parent, first, slice) = {
            let t = self.t(task);
            (t.parent, t.first_time_slice, t.time_slice)
        };
        if let Some(p) = parent.filter(|&p| self.tasks.get(p.index()).is_some_and(Option::is_some))
            && first
        {
            let max = self.task_timeslice(self.t(p).static_prio);
            let pt = self.t_mut(p);
            pt.time_slice = (pt.time_slice + slice).min(max);
        }
        if self.current == Some(task) {
            self.t_mut(task).dead = true;
        } else {
            self.tasks[task] = None;
        }
    }

    fn migrate_out(&mut self, task: TaskId, _now: Nanos) -> Migrant {
        self.migrate_out_o1(task)
    }

    fn migrate_in(&mut self, task: TaskId, m: Migrant, woken: Option<Wakeup>, now: Nanos) -> bool {
        self.migrate_in_o1(task, m, woken, now)
    }

    fn fork_away(&mut self, parent: TaskId, child: TaskId, now: Nanos) -> (Migrant, bool) {
        (self.fork_away_o1(parent, child, now), false)
    }

    fn balance_queues(&self) -> Vec<crate::policy::BalanceQueue> {
        self.balance_queues_o1()
    }

    fn nothing_queued(&self) -> bool {
        self.nr_running() == 0
    }

    fn check_preempt_wakeup(&mut self, woken: TaskId, _now: Nanos) -> bool {
        self.current != Some(woken) && self.preempts_current(woken)
    }

    fn put_prev(&mut self, task: TaskId, now: Nanos) {
        // `schedule()`: the time just run comes off sleep_avg, divided by the bonus.
        let t = self.t_mut(task);
        let ran = now.saturating_sub(t.picked_at);
        t.sum_exec_runtime += ran;
        let run_time = ran.min(MAX_SLEEP_AVG_NS) / Self::bonus(t).max(1);
        t.sleep_avg = t.sleep_avg.saturating_sub(run_time);
        t.timestamp = now;
        self.current = None;
        self.need_resched = false;
        if self.t(task).dead {
            self.tasks[task] = None;
        }
    }

    fn pick_next(&mut self, now: Nanos) -> Option<TaskId> {
        if self.arrays[self.active].is_empty() {
            if self.arrays[1 - self.active].is_empty() {
                // Going idle: 2.6.11's `schedule()` forgets when the expired array started
                // waiting, so a starvation clock never runs across idle time.
                self.expired_timestamp = None;
                return None;
            }
            self.active = 1 - self.active;
            self.expired_timestamp = None;
            self.best_expired_prio = 140;
            for t in self.tasks.iter_mut().flatten() {
                t.in_active = t.in_active.map(|a| !a);
            }
        }
        let next = self.arrays[self.active]
            .first()
            .expect("a non-empty array has a first task");
        // The runqueue wait since the wake-up counts as sleep (100% after an interrupt wake-up).
        if self.t(next).activated > 0 {
            let wait = now.saturating_sub(self.t(next).timestamp);
            let credited = if self.t(next).activated == 1 {
                wait * ON_RUNQUEUE_WEIGHT / 100
            } else {
                wait
            };
            // Requeued at its new priority, but it is still the task that runs: 2.6.11
            // switches to `next` after crediting it, without picking again.
            let since = self.t(next).timestamp;
            self.dequeue_from_array(next);
            self.recalc_task_prio(next, since + credited);
            self.enqueue_in(next, true);
        }
        self.t_mut(next).activated = 0;
        let t = self.t_mut(next);
        t.picked_at = now;
        t.timestamp = now;
        self.current = Some(next);
        Some(next)
    }

    /// `scheduler_tick`.
    fn tick(&mut self, now: Nanos) -> bool {
        let Some(id) = self.current else { return false };
        if self.t(id).in_active != Some(true) {
            return true;
        }
        let t = self.t_mut(id);
        t.time_slice = t.time_slice.saturating_sub(1);
        if t.time_slice == 0 {
            let nr_running = self.nr_running();
            self.dequeue_from_array(id);
            let full = self.task_timeslice(self.t(id).static_prio);
            let t = self.t_mut(id);
            t.prio = Self::effective_prio(t);
            t.time_slice = full;
            t.first_time_slice = false;
            self.expired_timestamp.get_or_insert(now);
            let task = self.t(id).clone();
            if !Self::interactive(&task) || self.expired_starving(now, &task, nr_running) {
                self.enqueue_in(id, false);
                self.best_expired_prio = self.best_expired_prio.min(task.static_prio);
            } else {
                self.enqueue_in(id, true);
            }
            return true;
        }
        // Interactive tasks of equal priority take turns every TIMESLICE_GRANULARITY.
        let task = self.t(id).clone();
        let granularity = self.timeslice_granularity(&task);
        let used = self
            .task_timeslice(task.static_prio)
            .saturating_sub(task.time_slice);
        if Self::interactive(&task)
            && used.is_multiple_of(granularity)
            && task.time_slice >= granularity
        {
            self.dequeue_from_array(id);
            self.enqueue_in(id, true);
            return true;
        }
        core::mem::take(&mut self.need_resched)
    }

    /// 2.6.11 `sys_sched_yield`: a normal task moves to the expired array.
    fn yield_now(&mut self, _now: Nanos) -> bool {
        let Some(id) = self.current else { return false };
        self.dequeue_from_array(id);
        self.enqueue_in(id, false);
        true
    }

    fn set_nice(&mut self, task: TaskId, nice: Nice, _now: Nanos) {
        let queued = self.t(task).in_active;
        self.dequeue_from_array(task);
        let t = self.t_mut(task);
        t.static_prio = (120 + i64::from(nice.clamp(-20, 19))) as u64;
        t.prio = Self::effective_prio(t);
        if let Some(active) = queued {
            self.enqueue_in(task, active);
        }
    }

    /// No groups in 2.6.11: a uid changes nothing for scheduling.
    fn set_uid(&mut self, _task: TaskId, _uid: Uid, _now: Nanos) {}

    fn current(&self) -> Option<TaskId> {
        self.current
    }

    fn task_info(&self, task: TaskId) -> Option<TaskInfo> {
        let t = self.tasks.get(task.index())?.as_ref()?;
        Some(TaskInfo {
            vruntime: 0,
            weight: t.static_prio,
            slice_ns: t.time_slice * self.tick_ns,
            deadline: None,
            on_rq: t.in_active.is_some(),
            sum_exec_runtime: t.sum_exec_runtime,
            exec_start: t.picked_at,
            h_load: t.static_prio,
            util: 0,
        })
    }

    fn runqueues(&self) -> Vec<RunqueueInfo> {
        let names = ["active", "expired"];
        [self.active, 1 - self.active]
            .iter()
            .zip(names)
            .map(|(&i, name)| RunqueueInfo {
                name: name.into(),
                min_vruntime: 0,
                load: self.arrays[i].len() as u64,
                nr_running: self.arrays[i].len() as u32,
            })
            .collect()
    }

    fn write_debug_runqueues(&self, cpu: usize, out: &mut dyn fmt::Write) -> fmt::Result {
        self.write_runqueue(cpu, out)
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
}
