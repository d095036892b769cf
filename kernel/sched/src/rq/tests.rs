//! The protocol's rules, each checked on the calls an [`Rq`] makes into a recording policy.

use super::*;
use crate::policy::{Migrant, RunqueueInfo, TaskInfo};
use crate::task_id::t;
use crate::{Era, Fair, FairParams};
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

/// A policy that records each call it gets, then passes it on to CFS.
pub(super) struct Recorder {
    inner: Fair,
    calls: Vec<String>,
}

impl Recorder {
    fn log(&mut self, call: fmt::Arguments) {
        self.calls.push(alloc::format!("{call}"));
    }
}

impl Policy for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn spawn(&mut self, task: TaskId, uid: Uid, nice: Nice, now: Nanos) -> bool {
        self.log(format_args!("spawn {task}"));
        self.inner.spawn(task, uid, nice, now)
    }
    fn fork(&mut self, parent: TaskId, child: TaskId, kind: ForkKind, now: Nanos) -> bool {
        self.log(format_args!("fork {parent} {child}"));
        self.inner.fork(parent, child, kind, now)
    }
    fn enqueue(&mut self, task: TaskId, wakeup: Wakeup, now: Nanos) {
        self.log(format_args!("enqueue {task}"));
        self.inner.enqueue(task, wakeup, now)
    }
    fn dequeue(&mut self, task: TaskId, now: Nanos) {
        self.log(format_args!("dequeue {task}"));
        self.inner.dequeue(task, now)
    }
    fn exit(&mut self, task: TaskId, now: Nanos) {
        self.log(format_args!("exit {task}"));
        self.inner.exit(task, now)
    }
    fn migrate_out(&mut self, task: TaskId, now: Nanos) -> Migrant {
        self.log(format_args!("migrate_out {task}"));
        self.inner.migrate_out(task, now)
    }
    fn migrate_in(&mut self, task: TaskId, m: Migrant, woken: Option<Wakeup>, now: Nanos) -> bool {
        self.log(format_args!("migrate_in {task} woken={}", woken.is_some()));
        self.inner.migrate_in(task, m, woken, now)
    }
    fn fork_away(&mut self, parent: TaskId, child: TaskId, now: Nanos) -> (Migrant, bool) {
        self.log(format_args!("fork_away {parent} {child}"));
        self.inner.fork_away(parent, child, now)
    }
    fn check_preempt_wakeup(&mut self, woken: TaskId, now: Nanos) -> bool {
        self.log(format_args!("check_preempt {woken}"));
        self.inner.check_preempt_wakeup(woken, now)
    }
    fn put_prev(&mut self, task: TaskId, now: Nanos) {
        self.log(format_args!("put_prev {task}"));
        self.inner.put_prev(task, now)
    }
    fn pick_next(&mut self, now: Nanos) -> Option<TaskId> {
        let next = self.inner.pick_next(now);
        self.log(format_args!("pick {next:?}"));
        next
    }
    fn tick(&mut self, now: Nanos) -> bool {
        self.log(format_args!("tick"));
        self.inner.tick(now)
    }
    fn yield_now(&mut self, now: Nanos) -> bool {
        self.log(format_args!("yield"));
        self.inner.yield_now(now)
    }
    fn set_nice(&mut self, task: TaskId, nice: Nice, now: Nanos) {
        self.inner.set_nice(task, nice, now)
    }
    fn set_uid(&mut self, task: TaskId, uid: Uid, now: Nanos) {
        self.inner.set_uid(task, uid, now)
    }
    fn current(&self) -> Option<TaskId> {
        self.inner.current()
    }
    fn task_info(&self, task: TaskId) -> Option<TaskInfo> {
        self.inner.task_info(task)
    }
    fn balance_queues(&self) -> Vec<crate::policy::BalanceQueue> {
        self.inner.balance_queues()
    }
    fn runqueues(&self) -> Vec<RunqueueInfo> {
        self.inner.runqueues()
    }
    fn fair_params(&self) -> Option<&FairParams> {
        self.inner.fair_params()
    }
    fn write_debug_runqueues(&self, cpu: usize, out: &mut dyn fmt::Write) -> fmt::Result {
        self.inner.write_debug_runqueues(cpu, out)
    }
    fn write_debug_task_header(&self, out: &mut dyn fmt::Write) -> fmt::Result {
        self.inner.write_debug_task_header(out)
    }
    fn write_debug_task(
        &self,
        task: TaskId,
        row: &crate::debug_layout::TaskRow<'_>,
        out: &mut dyn fmt::Write,
    ) -> fmt::Result {
        self.inner.write_debug_task(task, row, out)
    }
}

pub(super) const IDLE: TaskId = t(99);
pub(super) const MS: Nanos = 1_000_000;

/// A runqueue on CPU 0 whose boot task 0 runs.
pub(super) fn booted() -> Rq<Recorder> {
    let inner = Fair::new(FairParams::preset(Era::V2_6_24));
    let mut rq = Rq::new(
        0,
        Box::new(Recorder {
            inner,
            calls: vec![],
        }),
        IDLE,
    );
    rq.run_boot_task(t(0), 0, 0, 0);
    rq.take_calls();
    rq
}

impl Rq<Recorder> {
    pub(super) fn take_calls(&mut self) -> Vec<String> {
        core::mem::take(&mut self.policy.calls)
    }
}

#[test]
fn a_wake_up_of_a_task_that_is_not_asleep_does_nothing() {
    let mut rq = booted();
    rq.spawn(t(1), 0, 0, MS);
    rq.take_calls();
    // Running (task 0) and runnable (task 1): neither is asleep.
    assert!(!rq.wake(t(0), Wakeup::default(), 2 * MS));
    assert!(!rq.wake(t(1), Wakeup::default(), 2 * MS));
    assert_eq!(rq.take_calls(), Vec::<String>::new());
    assert_eq!(rq.state(t(1)), State::Runnable);
}

#[test]
fn a_sleeper_leaves_the_queue_at_once_and_the_cpu_at_the_pick() {
    let mut rq = booted();
    rq.block_current(MS);
    assert_eq!(rq.current(), t(0), "still current until the pick");
    assert!(rq.need_resched());
    let pick = rq.pick(|| 2 * MS);
    assert_eq!(rq.take_calls(), ["dequeue 0", "put_prev 0", "pick None"]);
    assert_eq!((pick.prev, pick.next), (t(0), IDLE));
    assert_eq!(pick.prev_state, PrevState::Sleeping);
    assert_eq!(rq.stats(t(0)).voluntary_switches, 1);
    assert_eq!(rq.stats(t(0)).cpu_ns, 2 * MS);
}

#[test]
fn a_wake_up_read_before_the_sleep_began_counts_no_sleep() {
    // On several CPUs a timer's wake-up reads the clock, then takes the lock after another
    // CPU has woken the task and it has slept again (at 3 ms): the wake-up's `now` (2 ms)
    // predates that sleep. The task wakes, and the sleep counts 0 ns, not a wrapped number.
    let mut rq = booted();
    rq.block_current(3 * MS);
    rq.pick(|| 3 * MS);
    assert!(rq.wake(t(0), Wakeup::default(), 2 * MS));
    assert_eq!(rq.state(t(0)), State::Runnable);
    assert_eq!(rq.stats(t(0)).sleep_ns, 0);
}

#[test]
fn the_idle_task_gives_way_to_a_woken_task_without_asking_the_policy() {
    let mut rq = booted();
    rq.block_current(MS);
    rq.pick(|| MS);
    rq.take_calls();
    assert!(rq.wake(t(0), Wakeup::default(), 5 * MS));
    // No `check_preempt`: the idle task is not the policy's to weigh.
    assert_eq!(rq.take_calls(), ["enqueue 0"]);
    assert!(rq.need_resched());
    let pick = rq.pick(|| 7 * MS);
    assert_eq!((pick.prev, pick.next), (IDLE, t(0)));
    // The wake-up latency runs from the wake-up (5 ms) to the switch in (7 ms).
    let waited = Waited {
        ns: 2 * MS,
        woken: true,
    };
    assert_eq!(pick.waited, Some(waited));
    assert_eq!(rq.stats(t(0)).wake_latency_max_ns, 2 * MS);
    assert_eq!(
        rq.take_calls(),
        ["pick Some(0)"],
        "the idle task is not put back"
    );
}

#[test]
fn a_vfork_parent_sleeps_until_its_child_releases_it() {
    let mut rq = booted();
    rq.fork(t(1), ForkKind::Vfork, MS);
    rq.block_current(MS);
    assert_eq!(rq.state(t(0)), State::Sleeping);
    assert_eq!(rq.take_calls(), ["fork 0 1", "dequeue 0"]);
    let pick = rq.pick(|| MS);
    assert_eq!(pick.next, t(1));
    let released = Wakeup {
        vfork_parent: true,
        ..Wakeup::default()
    };
    assert!(rq.wake(t(0), released, 2 * MS));
    assert_eq!(rq.state(t(0)), State::Runnable);
}

#[test]
fn an_exited_task_leaves_once_and_is_forgotten() {
    let mut rq = booted();
    rq.spawn(t(1), 0, 0, MS);
    rq.exit_current(2 * MS);
    let pick = rq.pick(|| 2 * MS);
    assert_eq!(pick.prev_state, PrevState::Dead);
    assert_eq!(pick.next, t(1));
    assert_eq!(rq.remove(t(0)).state, State::Exited);
    assert!(rq.get(t(0)).is_none());
    assert_eq!(rq.nr_switches(), 1);
}

#[test]
fn a_yield_s_pick_reuses_the_yield_s_clock() {
    let mut rq = booted();
    rq.spawn(t(1), 0, 0, MS);
    rq.tick(4 * MS, true);
    rq.yield_current(5 * MS);
    let pick = rq.pick(|| panic!("the clock is not read after a yield"));
    assert_eq!(pick.now, 5 * MS);
    assert_eq!(pick.prev_state, PrevState::Yielded);
    assert_eq!(rq.stats(t(0)).user_ticks, 1);
}

#[test]
#[should_panic(expected = "not runnable")]
fn a_pick_of_a_task_that_is_not_runnable_panics() {
    let mut rq = booted();
    rq.spawn(t(1), 0, 0, MS);
    // Task 1 marked asleep behind the policy's back: the policy still has it queued.
    rq.task_mut(t(1)).state = State::Sleeping;
    rq.block_current(MS);
    rq.pick(|| MS);
}

/// A runqueue on CPU `cpu` that has run nothing but its idle task.
pub(super) fn idle_cpu(cpu: usize) -> Rq<Recorder> {
    let inner = Fair::new(FairParams::preset(Era::V2_6_24));
    let recorder = Recorder {
        inner,
        calls: vec![],
    };
    Rq::new(cpu, Box::new(recorder), IDLE)
}

/// A fresh policy instance, of another era than [`idle_cpu`]'s.
fn fresh_policy() -> Box<Recorder> {
    let inner = Fair::new(FairParams::preset(Era::V2_6_36));
    Box::new(Recorder {
        inner,
        calls: vec![],
    })
}

#[test]
fn an_idle_cpu_s_policy_is_replaced() {
    let mut rq = idle_cpu(1);
    rq.replace_idle_policy(fresh_policy());
    assert_eq!((rq.cpu(), rq.current()), (1, IDLE));
    assert_eq!(rq.policy().fair_params().unwrap().era, Era::V2_6_36);
}

#[test]
#[should_panic(expected = "a CPU with tasks keeps its policy")]
fn a_cpu_with_a_task_keeps_its_policy() {
    // The task would be lost from the policy that holds it.
    let mut rq = idle_cpu(1);
    rq.spawn(t(1), 0, 0, MS);
    rq.replace_idle_policy(fresh_policy());
}

#[test]
fn a_sleeper_moves_to_another_cpu_and_wakes_there() {
    let mut from = booted();
    from.spawn(t(1), 0, 0, MS);
    from.block_current(2 * MS);
    from.pick(|| 2 * MS);
    assert_eq!(from.current(), t(1), "task 0 has left the CPU");
    from.take_calls();
    let moved = from.detach(t(0), 3 * MS);
    // The old policy lets it go: nothing else.
    assert_eq!(from.take_calls(), ["migrate_out 0"]);
    assert!(from.get(t(0)).is_none());
    let mut to = idle_cpu(1);
    to.attach(t(0), moved, Wakeup::default(), 5 * MS);
    assert_eq!(to.take_calls(), ["migrate_in 0 woken=true"]);
    assert_eq!(to.state(t(0)), State::Runnable);
    // Its sleep (2 ms to 5 ms) is counted, and the move is its wake-up: the idle CPU
    // is asked to switch to it.
    assert_eq!(to.stats(t(0)).sleep_ns, 3 * MS);
    assert!(to.stats(t(0)).woken && to.need_resched());
    let pick = to.pick(|| 6 * MS);
    assert_eq!((pick.prev, pick.next), (IDLE, t(0)));
}

#[test]
fn a_child_forked_away_waits_on_its_own_cpu() {
    let mut parent_cpu = booted();
    let moved = parent_cpu.fork_away(t(1), MS);
    assert!(
        parent_cpu.get(t(1)).is_none(),
        "the parent's CPU never queued it"
    );
    let mut to = idle_cpu(1);
    to.take_calls();
    to.attach(t(1), moved, Wakeup::default(), 2 * MS);
    assert_eq!(to.take_calls(), ["migrate_in 1 woken=false"]);
    assert!(to.need_resched(), "the idle CPU switches to it");
    assert_eq!(to.pick(|| 3 * MS).next, t(1));
}

#[test]
#[should_panic(expected = "a task leaves its CPU before it moves")]
fn the_running_task_is_not_detached() {
    let mut rq = booted();
    rq.detach(t(0), MS);
}

#[test]
fn a_handle_on_need_resched_reads_what_the_runqueue_decides() {
    // The kernel's interrupt return and idle loop read the flag through a handle, without
    // the runqueue: it must see each set and each clear the runqueue makes.
    let mut rq = booted();
    let flag = rq.resched_flag();
    assert!(
        !flag.is_set(),
        "nothing asked after the boot task's first pick"
    );
    rq.block_current(MS);
    assert!(flag.is_set(), "a sleep asks for the switch");
    rq.pick(|| MS);
    assert!(!flag.is_set(), "the pick answers it");
    rq.wake(t(0), Wakeup::default(), 2 * MS);
    assert!(
        flag.is_set(),
        "a task woken beside the idle task asks for it"
    );
}
