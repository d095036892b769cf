//! Unit tests of the O(1) scheduler against 2.6.11's numbers (docs/scheduler.md §9).

use super::*;
use crate::policy::Policy;
use crate::task_id::t;

const MS: u64 = 1_000_000;

#[test]
fn time_slices_from_static_priority() {
    let o1 = O1::new(MS);
    assert_eq!(o1.task_timeslice(100), 800); // nice −20: 800 ms
    assert_eq!(o1.task_timeslice(119), 420); // nice −1
    assert_eq!(o1.task_timeslice(120), 100); // nice 0
    assert_eq!(o1.task_timeslice(130), 50); // nice +10
    assert_eq!(o1.task_timeslice(139), 5); // nice +19
    // At HZ=100 the same 100 ms is 10 ticks.
    assert_eq!(O1::new(10 * MS).task_timeslice(120), 10);
}

#[test]
fn sleep_raises_the_bonus_and_running_lowers_it() {
    let mut o1 = O1::new(MS);
    o1.spawn(t(0), 1, 0, 0);
    o1.spawn(t(1), 1, 0, 0);
    o1.dequeue(t(1), 0);
    // A fresh task has no bonus: dynamic priority 125 (static 120 + 5).
    assert_eq!(o1.t(t(1)).prio, 125);
    // Sleeping 500 ms (under INTERACTIVE_SLEEP, 799 ms for nice 0) is credited ×10 (bonus 0).
    o1.enqueue(t(1), Wakeup::default(), 500 * MS);
    assert_eq!(o1.t(t(1)).sleep_avg, MAX_SLEEP_AVG_NS);
    assert_eq!((O1::bonus(o1.t(t(1))), o1.t(t(1)).prio), (10, 115));
    assert!(O1::interactive(o1.t(t(1))));
    // Nice 0 needs bonus ≥ 7 to be interactive (DELTA = 2).
    assert_eq!(O1::delta(o1.t(t(1))), 2);
    assert_eq!(O1::interactive_sleep_ns(o1.t(t(1))), 799 * MS);
    // Running 300 ms at bonus 10 costs 30 ms of sleep_avg.
    assert_eq!(o1.pick_next(500 * MS), Some(t(1)));
    o1.put_prev(t(1), 800 * MS);
    assert_eq!(o1.t(t(1)).sleep_avg, MAX_SLEEP_AVG_NS - 30 * MS);
}

#[test]
fn an_expiring_interactive_task_stays_in_the_active_array() {
    let mut o1 = O1::new(MS);
    o1.spawn(t(0), 1, 0, 0);
    o1.spawn(t(1), 1, 0, 0);
    // Task 0 is made interactive, task 1 is not.
    o1.t_mut(t(0)).sleep_avg = MAX_SLEEP_AVG_NS;
    o1.t_mut(t(0)).prio = O1::effective_prio(o1.t(t(0)));
    assert_eq!(o1.pick_next(0), Some(t(0)));
    let mut now = 0;
    let mut resched = false;
    // Interactive tasks round-robin at TIMESLICE_GRANULARITY (10 ms at bonus 10), but task 0
    // is alone at its priority: it keeps going until its 100 ms slice is used up.
    while !resched || o1.t(t(0)).time_slice != 100 {
        now += MS;
        resched = o1.tick(now);
    }
    assert_eq!(now, 100 * MS);
    assert_eq!(
        o1.t(t(0)).in_active,
        Some(true),
        "an interactive task expired"
    );
    o1.put_prev(t(0), now);
    // Task 1 (prio 125) expires into the expired array after its slice.
    o1.t_mut(t(0)).sleep_avg = 0;
    o1.set_nice(t(0), 0, now);
    assert_eq!(o1.pick_next(now), Some(t(0)), "prio 120 before 125");
}

#[test]
fn expired_tasks_starve_until_the_limit() {
    // One interactive task that never loses its bonus (as if it kept sleeping) and one hog:
    // once the hog expires it waits in the expired array until EXPIRED_STARVING, one second
    // per runnable task.
    let mut o1 = O1::new(MS);
    o1.spawn(t(0), 1, 0, 0);
    o1.spawn(t(1), 1, 0, 0);
    let mut now = 0;
    let mut current = o1.pick_next(0).unwrap();
    let mut hog_waits_from = None;
    let mut longest_hog_wait = 0;
    while now < 5_000 * MS {
        // Keep task 0 interactive.
        o1.t_mut(t(0)).sleep_avg = MAX_SLEEP_AVG_NS;
        now += MS;
        if o1.tick(now) {
            o1.put_prev(current, now);
            current = o1.pick_next(now).unwrap();
        }
        if current == t(1) {
            if let Some(since) = hog_waits_from.take() {
                longest_hog_wait = longest_hog_wait.max(now - since);
            }
        } else if hog_waits_from.is_none() {
            hog_waits_from = Some(now);
        }
    }
    // STARVATION_LIMIT × nr_running = 2 s (plus the tick that notices), counted from the
    // first expiry since the last swap — which may be the interactive task's own, up to one
    // of its slices before the hog's: at least a second.
    assert!(
        longest_hog_wait >= 1_000 * MS,
        "the hog waited only {longest_hog_wait}"
    );
    assert!(
        longest_hog_wait <= 2_200 * MS,
        "the hog waited {longest_hog_wait}"
    );
}

#[test]
fn a_forked_child_runs_first_with_half_the_slice() {
    let mut o1 = O1::new(MS);
    o1.spawn(t(0), 1, 0, 0);
    assert_eq!(o1.pick_next(0), Some(t(0)));
    assert!(o1.fork(t(0), t(1), ForkKind::Fork, 0));
    assert_eq!((o1.t(t(0)).time_slice, o1.t(t(1)).time_slice), (50, 50));
    o1.put_prev(t(0), 0);
    assert_eq!(o1.pick_next(0), Some(t(1)), "the child runs first");
}

#[test]
fn the_starvation_limit_counts_the_running_task() {
    // Two runnable tasks, the expired array waiting since t = 0: EXPIRED_STARVING needs
    // STARVATION_LIMIT × nr_running + 1 tick = 2 s + 1 ms, where nr_running (2) still
    // counts the running task whose slice just ran out.
    let mut o1 = O1::new(MS);
    o1.spawn(t(0), 1, 0, 0);
    o1.spawn(t(1), 1, 0, 0);
    o1.expired_timestamp = Some(0);
    let running = o1.t(t(0)).clone();
    let nr_running = o1.nr_running();
    assert_eq!(nr_running, 2);
    assert!(!o1.expired_starving(1_500 * MS, &running, nr_running));
    assert!(!o1.expired_starving(2_000 * MS, &running, nr_running));
    assert!(o1.expired_starving(2_001 * MS, &running, nr_running));
}

#[test]
fn a_long_sleep_sets_sleep_avg_to_the_ceiling_even_downwards() {
    // Over INTERACTIVE_SLEEP (799 ms at nice 0) 2.6.11 assigns MAX_SLEEP_AVG − DEF_TIMESLICE
    // = 900 ms: a task at the 1 s cap comes back at 900 ms (bonus 9, prio 116).
    let mut o1 = O1::new(MS);
    o1.spawn(t(0), 1, 0, 0);
    o1.spawn(t(1), 1, 0, 0);
    o1.dequeue(t(1), 0);
    o1.t_mut(t(1)).sleep_avg = MAX_SLEEP_AVG_NS;
    o1.enqueue(t(1), Wakeup::default(), 900 * MS);
    assert_eq!(o1.t(t(1)).sleep_avg, 900 * MS);
    assert_eq!((O1::bonus(o1.t(t(1))), o1.t(t(1)).prio), (9, 116));
}

#[test]
fn the_task_credited_at_pick_is_the_one_that_runs() {
    // Task 1 woke at 0 and heads the prio-125 list, task 0 behind it. At task 1's pick its
    // 5 ms wait is credited as sleep (×10 at bonus 0: 50 ms, still bonus 0, prio 125) and
    // it is requeued — at the end of the list, behind task 0. 2.6.11 runs it anyway.
    let mut o1 = O1::new(MS);
    o1.spawn(t(0), 1, 0, 0);
    o1.spawn(t(1), 1, 0, 0);
    o1.dequeue(t(0), 0);
    o1.dequeue(t(1), 0);
    o1.enqueue(t(1), Wakeup::default(), 0);
    o1.enqueue(t(0), Wakeup::default(), 0);
    o1.t_mut(t(0)).activated = 0;
    assert_eq!(o1.pick_next(5 * MS), Some(t(1)));
    assert_eq!((o1.t(t(1)).sleep_avg, o1.t(t(1)).prio), (50 * MS, 125));
    assert_eq!(o1.t(t(1)).activated, 0);
}

#[test]
fn going_idle_resets_the_starvation_clock() {
    let mut o1 = O1::new(MS);
    o1.spawn(t(0), 1, 0, 0);
    assert_eq!(o1.pick_next(0), Some(t(0)));
    o1.expired_timestamp = Some(0);
    o1.dequeue(t(0), MS);
    o1.put_prev(t(0), MS);
    assert_eq!(o1.pick_next(MS), None);
    assert_eq!(o1.expired_timestamp, None);
}

#[test]
fn a_pulled_task_keeps_its_array_its_slice_and_its_sleep_avg() {
    // 2.6.11's `pull_task`: an expired task goes into the new CPU's expired array, with
    // what is left of its slice and the sleep_avg its priority comes from.
    let mut a = O1::new(MS);
    a.spawn(t(0), 1, 0, 0);
    a.spawn(t(1), 1, 0, 0);
    assert_eq!(a.pick_next(0), Some(t(0)));
    // Task 0, a hog, uses its 100-tick slice up and expires (task 1 is not interactive).
    let mut now = 0;
    while !a.tick(now + MS) {
        now += MS;
    }
    a.put_prev(t(0), now + MS);
    assert_eq!(a.pick_next(now + MS), Some(t(1)));
    assert_eq!(a.t(t(0)).in_active, Some(false), "task 0 expired");
    let (slice, sleep_avg, prio) = (a.t(t(0)).time_slice, a.t(t(0)).sleep_avg, a.t(t(0)).prio);
    let m = a.migrate_out(t(0), now + MS);
    assert!(a.task_info(t(0)).is_none());
    let mut b = O1::new(MS);
    b.spawn(t(2), 1, 0, 0);
    assert_eq!(b.pick_next(0), Some(t(2)));
    assert!(
        !b.migrate_in(t(0), m, None, now + MS),
        "it does not preempt an equal task"
    );
    let t = b.t(t(0));
    assert_eq!(t.in_active, Some(false), "expired on B too");
    assert_eq!(
        (t.time_slice, t.sleep_avg, t.prio),
        (slice, sleep_avg, prio)
    );
}

#[test]
fn a_nice_change_on_the_way_is_kept() {
    // `renice` while the task is between two CPUs writes the migrant's nice: it arrives
    // with the static priority of its new nice (+10: 130).
    let mut a = O1::new(MS);
    a.spawn(t(0), 1, 0, 0);
    a.spawn(t(1), 1, 0, 0);
    let mut m = a.migrate_out(t(1), 0);
    m.nice = 10;
    let mut b = O1::new(MS);
    b.migrate_in(t(1), m, None, 0);
    assert_eq!(b.t(t(1)).static_prio, 130);
    assert_eq!(b.t(t(1)).prio, O1::effective_prio(b.t(t(1))));
}
