//! The stop class's rules, on the calls an [`Rq`] makes into a recording policy (the
//! helpers are `rq/tests.rs`'s).

use super::super::tests::{IDLE, MS, booted, idle_cpu};
use crate::policy::TaskId;
use crate::policy::Wakeup;
use crate::rq::PrevState;
use crate::task_id::t;
use alloc::string::String;
use alloc::vec::Vec;

const STOPPER: TaskId = t(98);

#[test]
fn the_stopper_preempts_the_running_task_which_then_moves_as_a_waiting_one() {
    // Linux's order for moving a running task: the stopper is woken and preempts it
    // whatever the policy says; the task is put back, queued; the stopper takes it off
    // this CPU's policy like any waiting task; then the policy picks again.
    let mut from = booted();
    from.install_stopper(STOPPER, 0);
    from.take_calls();
    assert!(from.wake_stopper(MS));
    assert!(from.need_resched(), "a stopper with work always preempts");
    assert!(!from.wake_stopper(MS), "a second wake-up finds it runnable");
    let pick = from.pick(|| 2 * MS);
    // The policy is asked for no task: the stopper goes first.
    assert_eq!(from.take_calls(), ["put_prev 0"]);
    assert_eq!((pick.prev, pick.next), (t(0), STOPPER));
    assert_eq!(pick.prev_state, PrevState::Preempted);
    assert!(!from.runs_policy_task());
    // While it runs, the tick charges the policy nothing and a wake-up preempts nothing.
    from.tick(2 * MS, false);
    assert_eq!(from.take_calls(), Vec::<String>::new());
    let moved = from.detach(t(0), 2 * MS);
    assert_eq!(from.take_calls(), ["migrate_out 0"]);
    from.stopper_sleeps(2 * MS);
    assert!(from.need_resched(), "its turn ends at once");
    let pick = from.pick(|| 3 * MS);
    assert_eq!(from.take_calls(), ["pick None"]);
    assert_eq!((pick.prev, pick.next), (STOPPER, IDLE));
    let mut to = idle_cpu(1);
    to.attach(t(0), moved, Wakeup::default(), 4 * MS);
    assert_eq!(to.take_calls(), ["migrate_in 0 woken=false"]);
    // Not a wake-up: its wait since it was preempted (2 ms) goes on, and ends at the pick.
    assert!(!to.stats(t(0)).woken);
    let pick = to.pick(|| 5 * MS);
    assert_eq!(pick.next, t(0));
    assert_eq!(pick.waited.map(|w| (w.ns, w.woken)), Some((3 * MS, false)));
}

#[test]
#[should_panic(expected = "the stopper never moves")]
fn the_stopper_is_not_detached() {
    let mut rq = booted();
    rq.install_stopper(STOPPER, 0);
    rq.detach(STOPPER, MS);
}

#[test]
fn a_stopper_switched_away_from_before_it_sleeps_is_picked_again_at_once() {
    // An interrupt may end with a switch while the stopper runs (its round runs with
    // interrupts on between two looks at its work): it must be picked again before any
    // task of the policy's, and nothing that arrives meanwhile may preempt it.
    let mut rq = booted();
    rq.install_stopper(STOPPER, 0);
    rq.wake_stopper(MS);
    assert_eq!(rq.pick(|| MS).next, STOPPER);
    // A task arrives while it runs: a policy with no current task would say "preempt".
    rq.spawn(t(1), 0, 0, 2 * MS);
    assert!(!rq.need_resched(), "nothing preempts the stopper");
    // Switched away from all the same (a reschedule asked before it ran): it runs again.
    let pick = rq.pick(|| 3 * MS);
    assert_eq!((pick.prev, pick.next), (STOPPER, STOPPER));
    // Once it sleeps, the policy's tasks run again.
    rq.stopper_sleeps(4 * MS);
    assert!(!rq.stopper_runnable());
    assert_ne!(rq.pick(|| 4 * MS).next, STOPPER);
}

#[test]
fn a_cpu_is_about_to_idle_only_with_no_stopper_to_run_and_nothing_queued() {
    // Only then does a CPU balance newly-idle before its pick: a runnable stopper is picked
    // before the policy is even asked, so a CPU whose stopper has work is not about to idle.
    let mut rq = idle_cpu(1);
    rq.install_stopper(STOPPER, 0);
    assert!(rq.about_to_idle());
    rq.wake_stopper(MS);
    assert!(!rq.about_to_idle(), "its stopper runs next");
    assert_eq!(rq.pick(|| MS).next, STOPPER);
    rq.stopper_sleeps(2 * MS);
    assert!(rq.about_to_idle());
    rq.spawn(t(1), 0, 0, 2 * MS);
    assert!(!rq.about_to_idle(), "a task is queued");
}
