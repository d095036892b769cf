//! A fair task moving between two CPUs' policies, era by era, against the rules of
//! `migrate` (docs/scheduler.md, "Several CPUs"): the distance from the floor kept
//! (CFS), the lag kept (EEVDF), and where a child forked onto another CPU lands.

use super::migrate::{FairMigrant, Place};
use super::*;
use crate::params::{Era, FairParams, Grouping};
use crate::policy::{Migrant, Policy, TaskId, Wakeup};
use crate::task_id::t;

const MS: u64 = 1_000_000;
/// The hog that keeps each CPU busy (and moves its floor).
const HOG: TaskId = t(10);

/// One CPU's policy of `era` without groups, its hog running since 0 and charged up to
/// `now` (one task alone: its vruntime is the floor).
fn busy_cpu(era: Era, now: u64) -> Fair {
    let mut p = FairParams::preset(era);
    p.grouping = Grouping::None;
    let mut f = Fair::new(p);
    f.spawn(HOG, 1, 0, 0);
    assert_eq!(f.pick_next(0), Some(HOG));
    f.tick(now);
    f
}

fn floor(f: &Fair) -> u64 {
    f.rq(ROOT).min_vruntime
}

fn vruntime(f: &Fair, task: TaskId) -> u64 {
    f.task_info(task).unwrap().vruntime
}

fn fair_part(m: &Migrant) -> FairMigrant {
    *m.carried
        .record::<FairMigrant>()
        .expect("a fair task carries the fair class's record")
}

/// Signed distance a − b of two wrapping virtual times.
fn distance(a: u64, b: u64) -> i64 {
    a.wrapping_sub(b) as i64
}

#[test]
fn cfs_a_pulled_task_keeps_its_distance_from_the_floor_in_every_era() {
    for era in [Era::V2_6_24, Era::V2_6_32, Era::V2_6_36] {
        // CPU A: task 0 arrives at 4 ms and waits behind the hog, which has run 30 ms.
        let mut a = busy_cpu(era, 4 * MS);
        a.spawn(t(0), 1, 0, 4 * MS);
        a.tick(30 * MS);
        let (v0, floor_before) = (vruntime(&a, t(0)), floor(&a));
        let m = a.migrate_out(t(0), 30 * MS);
        assert!(a.task_info(t(0)).is_none(), "{era}: CPU A forgets it");
        // The floor the distance is taken from is A's after the task left (Linux's
        // `dequeue_entity` updates min_vruntime before `set_task_cpu` reads it), which
        // 2.6.24 left where the last charge put it.
        if era == Era::V2_6_24 {
            assert_eq!(floor(&a), floor_before);
        }
        let carried = match fair_part(&m).place {
            Place::FromFloor(d) => d,
            other => panic!("{era}: CFS carries a distance, not {other:?}"),
        };
        assert_eq!(carried, distance(v0, floor(&a)), "{era}");
        // CPU B: its hog has run 50 ms; the task is queued at B's floor plus that
        // distance, with no placement (not a wake-up: no sleeper credit, no debit).
        let mut b = busy_cpu(era, 50 * MS);
        b.migrate_in(t(0), m, None, 50 * MS);
        assert_eq!(distance(vruntime(&b, t(0)), floor(&b)), carried, "{era}");
        assert!(b.task_info(t(0)).unwrap().on_rq);
    }
}

#[test]
fn cfs_a_task_woken_onto_another_cpu_gets_its_sleeper_credit_from_the_new_floor() {
    for era in [Era::V2_6_24, Era::V2_6_32, Era::V2_6_36] {
        // Task 0 ran 1 ms at the start, then slept while the hog ran on: by 200 ms it is
        // far behind A's floor. Woken onto B, it lands at B's floor minus the sleeper
        // threshold (sched_latency, halved with GENTLE_FAIR_SLEEPERS) — not at the
        // distance it had on A.
        let mut a = busy_cpu(era, 0);
        a.spawn(t(0), 1, 0, 0);
        a.put_prev(HOG, MS);
        assert_eq!(a.pick_next(MS), Some(t(0)));
        a.dequeue(t(0), 2 * MS);
        a.put_prev(t(0), 2 * MS);
        assert_eq!(a.pick_next(2 * MS), Some(HOG));
        a.tick(200 * MS);
        let m = a.migrate_out(t(0), 200 * MS);
        let Place::FromFloor(carried) = fair_part(&m).place else {
            panic!("{era}: CFS carries a distance");
        };
        let params = a.params().clone();
        let mut thresh = params.tunables.latency_ns as i64;
        if params
            .features
            .has(crate::params::Feature::GentleFairSleepers)
        {
            thresh /= 2;
        }
        assert!(carried < -thresh, "{era}: it slept long ({carried})");
        let mut b = busy_cpu(era, 300 * MS);
        b.migrate_in(t(0), m, Some(Wakeup::default()), 300 * MS);
        assert_eq!(distance(vruntime(&b, t(0)), floor(&b)), -thresh, "{era}");
    }
}

#[test]
fn eevdf_a_pulled_task_keeps_its_lag() {
    // 6.6: A's hog and task 0 share A; at 30 ms task 0 has waited and is owed time (a
    // positive lag V − v). It leaves with that lag, and B places it so that B's average
    // (once it is queued) is that far ahead of it.
    let mut a = busy_cpu(Era::V6_6, 4 * MS);
    a.spawn(t(0), 1, 0, 4 * MS);
    a.tick(30 * MS);
    let lag_on_a = distance(a.avg_vruntime(ROOT), vruntime(&a, t(0)));
    let m = a.migrate_out(t(0), 30 * MS);
    let Place::Lag(lag) = fair_part(&m).place else {
        panic!("EEVDF carries a lag");
    };
    // Saved as it left, clamped to two slices or a tick, whichever is longer (6.6's
    // `update_entity_lag`): it is owed more than that, and takes 4 ms (a tick at HZ 250)
    // with it.
    let params = a.params().clone();
    let limit = (2 * params.tunables.base_slice_ns).max(params.tick_ns) as i64;
    assert!(lag_on_a > limit);
    assert_eq!(lag, limit);
    let mut b = busy_cpu(Era::V6_6, 50 * MS);
    b.migrate_in(t(0), m, None, 50 * MS);
    let lag_on_b = distance(b.avg_vruntime(ROOT), vruntime(&b, t(0)));
    // The placement inflates the lag by (W + w) / W so that inserting the task does not
    // shrink it; the integer division leaves at most a unit either way.
    assert!(
        (lag_on_b - lag).abs() <= 1,
        "lag {lag} on A, {lag_on_b} on B"
    );
}

#[test]
fn a_child_forked_onto_another_cpu_lands_as_its_era_placed_it() {
    // The parent (A's hog) has run 30 ms alone: its vruntime is A's floor. B's hog has run
    // 50 ms.
    // 2.6.24: `task_new_fair` ran on B, so the child starts at B's floor plus START_DEBIT —
    // one virtual slice of period(2) = 20 ms shared by two: 10 ms.
    let mut a = busy_cpu(Era::V2_6_24, 30 * MS);
    let (m, _) = a.fork_away(HOG, t(1), 30 * MS);
    assert!(a.task_info(t(1)).is_none(), "A never queues it");
    assert_eq!(fair_part(&m).place, Place::Newcomer);
    let mut b = busy_cpu(Era::V2_6_24, 50 * MS);
    // Behind B's hog, it would not preempt it; but `task_new_fair` reschedules B anyway.
    assert!(b.migrate_in(t(1), m, None, 50 * MS));
    assert_eq!(distance(vruntime(&b, t(1)), floor(&b)), 10 * MS as i64);
    // 2.6.36: `task_fork_fair` placed it on A — from the parent's vruntime (A's floor),
    // plus one virtual slice of two tasks in 6 ms: 3 ms — and it keeps that distance.
    let mut a = busy_cpu(Era::V2_6_36, 30 * MS);
    let (m, _) = a.fork_away(HOG, t(1), 30 * MS);
    assert_eq!(fair_part(&m).place, Place::FromFloor(3 * MS as i64));
    let mut b = busy_cpu(Era::V2_6_36, 50 * MS);
    b.migrate_in(t(1), m, None, 50 * MS);
    assert_eq!(distance(vruntime(&b, t(1)), floor(&b)), 3 * MS as i64);
    // 6.6: no lag (a new task is owed nothing): it starts at B's average.
    let mut a = busy_cpu(Era::V6_6, 30 * MS);
    let (m, _) = a.fork_away(HOG, t(1), 30 * MS);
    assert_eq!(fair_part(&m).place, Place::Lag(0));
    let mut b = busy_cpu(Era::V6_6, 50 * MS);
    let v_before = b.avg_vruntime(ROOT);
    b.migrate_in(t(1), m, None, 50 * MS);
    assert_eq!(vruntime(&b, t(1)), v_before);
}
