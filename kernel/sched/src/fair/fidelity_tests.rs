//! Worked numbers for the places where cfslab once differed from Linux's own source:
//! EEVDF's placement of a new task, its tie rule and its wake-up check (6.6), the early
//! return of CFS's wake-up check when a reschedule is already pending (2.6.32–36), and a
//! yield that touches the task's own level only.

use super::*;
use crate::params::{Era, FairParams, Grouping};
use crate::policy::{Policy, Wakeup};
use crate::task_id::t;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

#[test]
fn eevdf_new_tasks_get_lag_0_and_a_full_slice_deadline() {
    let mut f = Fair::new(FairParams::preset(Era::V6_6));
    f.spawn(t(0), 1, 0, 0);
    let info = f.task_info(t(0)).unwrap();
    // `task_fork_fair` placed it with a half-slice deadline (PLACE_DEADLINE_INITIAL), but
    // `wake_up_new_task`'s enqueue placed it again without ENQUEUE_INITIAL: a full slice.
    assert_eq!(info.deadline.unwrap().wrapping_sub(info.vruntime), 750 * US);
    f.pick_next(0);
    f.tick(2 * MS);
    // Task 0 passed its deadline (vruntime 2 ms) and got a new one, a slice on: 2.75 ms.
    let info = f.task_info(t(0)).unwrap();
    assert_eq!(info.deadline.unwrap().wrapping_sub(info.vruntime), 750 * US);
    f.spawn(t(1), 1, 0, 2 * MS);
    // Task 1 is placed at V = task 0's vruntime with lag 0, its deadline a full slice on:
    // 2.75 ms, equal to task 0's. Both are eligible; on equal deadlines the running task
    // stays, so the newcomer does not preempt (with the half slice it would have).
    let (rq, se0, se1) = (ROOT, f.task_se(t(0)), f.task_se(t(1)));
    assert_eq!(f.se(se1).vruntime, f.se(se0).vruntime);
    assert_eq!(f.se(se1).deadline, f.se(se0).deadline);
    assert!(f.entity_eligible(rq, se0) && f.entity_eligible(rq, se1));
    assert!(!f.check_preempt_wakeup(t(1), 2 * MS));
    assert_eq!(f.pick_eevdf(rq), Some(se0));
    // At 3 ms task 0 has passed its deadline again, with someone waiting: it must go, and it
    // is ahead of V (the average of 3 ms and 2 ms), so no longer eligible.
    assert!(f.tick(3 * MS));
    assert!(!f.entity_eligible(rq, se0));
    assert!(f.entity_eligible(rq, se1));
    // A heavier task's deadline is nearer in virtual time: slice × 1024 / weight.
    let mut f = Fair::new(FairParams::preset(Era::V6_6));
    f.spawn(t(0), 1, -5, 0);
    let info = f.task_info(t(0)).unwrap();
    assert_eq!(
        info.deadline.unwrap().wrapping_sub(info.vruntime),
        750 * US * 1024 / 3121
    );
}

/// Two uids under EEVDF, each with a hog and a sleeper. Returns the scheduler right after
/// the other uid's sleeper woke at 1 ms, the current task's id and the result of the check.
fn eevdf_wakeup_across_groups() -> (Fair, TaskId, bool) {
    let mut p = FairParams::preset(Era::V6_6);
    p.grouping = Grouping::Uid;
    let mut f = Fair::new(p);
    // Tasks 0, 1: uid 1's hog and sleeper; tasks 2, 3: uid 2's.
    for (task, uid) in [(0, 1), (1, 1), (2, 2), (3, 2)] {
        f.spawn(t(task), uid, 0, 0);
    }
    f.dequeue(t(1), 0);
    f.dequeue(t(3), 0);
    let current = f.pick_next(0).unwrap();
    let sleeper = if f.se(f.task_se(current)).uid == 1 {
        3
    } else {
        1
    };
    f.enqueue(t(sleeper), Wakeup::default(), MS);
    let preempt = f.check_preempt_wakeup(t(sleeper), MS);
    (f, current, preempt)
}

#[test]
fn eevdf_wakeup_check_charges_the_level_the_tasks_share() {
    // The wakee's group is already queued at the root (its hog), so its enqueue stopped in
    // its own group; the two tasks meet at the root, where the running entity is the current
    // task's *group*. 6.6 charges that level before asking pick_eevdf: the group entity has
    // been charged the 1 ms its task ran.
    let (f, current, _) = eevdf_wakeup_across_groups();
    let group = f.se(f.task_se(current)).parent.unwrap();
    assert_eq!(f.se(group).sum_exec_runtime, MS);
    assert_eq!(f.se(group).exec_start, MS);
}

#[test]
fn eevdf_a_pending_reschedule_survives_a_wakeup_that_would_not_preempt() {
    // Task 0 passes its deadline at 1 ms with task 1 waiting: the tick asks for a switch.
    // Task 2 then wakes with lag 0 and a deadline a slice after V — later than task 1's, so
    // it would not preempt on its own. 6.6 returns early (need_resched is set) and the
    // switch stays asked for.
    let mut f = Fair::new(FairParams::preset(Era::V6_6));
    for task in 0..3 {
        f.spawn(t(task), 1, 0, 0);
    }
    f.dequeue(t(2), 0);
    assert_eq!(f.pick_next(0), Some(t(0)));
    assert!(f.tick(MS));
    f.enqueue(t(2), Wakeup::default(), MS);
    assert!(f.check_preempt_wakeup(t(2), MS));
    f.put_prev(t(0), MS);
    assert!(!f.need_resched, "switching out clears it");
}

/// 2.6.36, nine hogs and a sleeper (≥ nr_latency 8, so buddies engage). The running hog's
/// slice ends at a tick; before the switch, the sleeper wakes. Returns the root's last buddy.
fn last_buddy_after_a_wakeup_with_resched_pending() -> Option<EntityId> {
    let mut p = FairParams::preset(Era::V2_6_36);
    p.grouping = Grouping::None;
    let mut f = Fair::new(p);
    for task in (0..10).map(t) {
        f.spawn(task, 1, 0, 0);
    }
    f.dequeue(t(9), 0);
    let mut current = f.pick_next(0).unwrap();
    let mut now = 0;
    for _ in 0..100 {
        now += MS;
        if f.tick(now) {
            f.put_prev(current, now);
            current = f.pick_next(now).unwrap();
        }
    }
    // Run the current hog to the end of its slice: the tick asks for a reschedule.
    loop {
        now += MS;
        if f.tick(now) {
            break;
        }
    }
    f.enqueue(t(9), Wakeup::default(), now);
    assert!(f.check_preempt_wakeup(t(9), now), "a reschedule is pending");
    f.rq(ROOT).last_buddy
}

#[test]
fn cfs_wakeup_check_sets_no_last_buddy_when_a_reschedule_is_pending() {
    // 2.6.36's check_preempt_wakeup returns before LAST_BUDDY when the current task already
    // has need_resched: the hog whose slice ended is not handed the CPU back.
    assert_eq!(last_buddy_after_a_wakeup_with_resched_pending(), None);
}

/// Task 0 (uid 1) runs 30 ms alone and sleeps; task 1 (uid 2) then runs 10 ms, so uid 2's
/// queue's clock stands at 10 ms. Task 0 moves to uid 2 while asleep. Returns its vruntime
/// relative to uid 2's `min_vruntime` after the move.
fn vruntime_after_setuid(era: Era) -> i64 {
    let mut p = FairParams::preset(era);
    p.grouping = Grouping::Uid;
    p.features.set(crate::params::Feature::StartDebit, false);
    let mut f = Fair::new(p);
    f.spawn(t(0), 1, 0, 0);
    assert_eq!(f.pick_next(0), Some(t(0)));
    f.dequeue(t(0), 30 * MS);
    f.put_prev(t(0), 30 * MS);
    f.spawn(t(1), 2, 0, 30 * MS);
    assert_eq!(f.pick_next(30 * MS), Some(t(1)));
    f.put_prev(t(1), 40 * MS);
    let before = f.se(f.task_se(t(0))).vruntime;
    f.set_uid(t(0), 2, 40 * MS);
    let after = f.se(f.task_se(t(0))).vruntime;
    if era <= Era::V2_6_25 {
        assert_eq!(after, before, "{era}: the vruntime must not change");
    }
    crate::weights::vdiff(after, f.rq(f.se(f.task_se(t(1))).rq).min_vruntime)
}

#[test]
fn setuid_keeps_the_absolute_vruntime_in_2_6_24_and_renormalises_later() {
    // 2.6.24: the vruntime stays at 30 ms, 20 ms right of uid 2's clock (10 ms): the moved
    // task waits until uid 2's task has caught up. 2.6.32: it keeps its distance from its old
    // queue's min_vruntime (0: it was alone there) and lands on uid 2's clock.
    assert_eq!(vruntime_after_setuid(Era::V2_6_24), 20 * MS as i64);
    assert_eq!(vruntime_after_setuid(Era::V2_6_32), 0);
}

/// `yield_task_fair` (2.6.36 and 6.6) touches the yielding task's own entity and queue only.
/// Under EEVDF with per-uid groups the task is charged and its deadline moves one slice on,
/// while its group's entity keeps its deadline and is charged only when the task is put
/// back; the task's buddy marks are cleared at every level.
#[test]
fn yield_touches_only_the_tasks_own_entity_and_queue() {
    let mut p = FairParams::preset(Era::V6_6);
    p.grouping = Grouping::Uid;
    let mut f = Fair::new(p);
    for (task, uid) in [(0, 1), (1, 1), (2, 2)] {
        f.spawn(t(task), uid, 0, 0);
    }
    let current = f.pick_next(0).unwrap();
    let se = f.task_se(current);
    let group = f.se(se).parent.expect("a task of a uid group");
    let (group_v, group_d) = (f.se(group).vruntime, f.se(group).deadline);
    let (v, d) = (f.se(se).vruntime, f.se(se).deadline);
    f.set_buddy(se, buddies::Buddy::Next);
    assert!(f.yield_now(100 * US), "task 1 and uid 2 wait");
    // Nice 0: 100 µs of wall time is 100 µs of virtual time; the slice is 750 µs.
    assert_eq!(f.se(se).vruntime, v.wrapping_add(100 * US));
    assert_eq!(f.se(se).deadline, d.wrapping_add(750 * US));
    assert_eq!(f.se(group).vruntime, group_v, "not charged by the yield");
    assert_eq!(
        f.se(group).deadline,
        group_d,
        "no deadline push for the group"
    );
    assert_eq!(f.rq(f.se(se).rq).next_buddy, None);
    assert_eq!(f.rq(ROOT).next_buddy, None);
    f.put_prev(current, 100 * US);
    assert!(
        crate::weights::vdiff(f.se(group).vruntime, group_v) > 0,
        "charged when the task is put back"
    );
}
