//! Unit tests of the fair class against the worked numbers of docs/scheduler.md.

use super::*;
use crate::params::{Era, FairParams, Feature, Grouping};
use crate::policy::{Policy, Wakeup};
use crate::task_id::t;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn flat(era: Era) -> Fair {
    let mut p = FairParams::preset(era);
    p.grouping = Grouping::None;
    Fair::new(p)
}

/// Spawns `n` nice-0 tasks (ids 0..n) at time 0 and returns each one's slice.
fn slices(era: Era, n: usize) -> Vec<u64> {
    let mut f = flat(era);
    for task in (0..n).map(t) {
        f.spawn(task, 1, 0, 0);
    }
    (0..n)
        .map(|i| f.task_info(t(i)).unwrap().slice_ns)
        .collect()
}

#[test]
fn slices_per_era_for_nice_0_tasks() {
    // (era, n, expected slice)
    let cases = [
        (Era::V2_6_24, 1, 20 * MS),
        (Era::V2_6_24, 4, 5 * MS),
        (Era::V2_6_24, 5, 4 * MS),
        (Era::V2_6_24, 10, 4 * MS), // period 40 ms = 20 ms × 10 / 5
        (Era::V2_6_32, 5, MS),
        (Era::V2_6_32, 2, 2_500_000),
        (Era::V2_6_32, 8, MS),
        (Era::V2_6_35, 3, 2 * MS),
        (Era::V2_6_35, 6, 2 * MS),
        (Era::V2_6_36, 8, 750 * US),
        (Era::V2_6_36, 4, 1_500_000),
        (Era::V2_6_36, 10, 750 * US),
    ];
    for (era, n, expected) in cases {
        for slice in slices(era, n) {
            assert_eq!(slice, expected, "era {era}, {n} tasks");
        }
    }
}

#[test]
fn slices_follow_weights() {
    let mut f = flat(Era::V2_6_36);
    f.spawn(t(0), 1, 0, 0);
    f.spawn(t(1), 1, 5, 0);
    // 6 ms × 1024 / 1359 and × 335 / 1359.
    assert_eq!(f.task_info(t(0)).unwrap().slice_ns, 4_520_971);
    assert_eq!(f.task_info(t(1)).unwrap().slice_ns, 1_479_028);
}

#[test]
fn hierarchical_slices_multiply_down_the_groups() {
    // 2.6.36 with per-uid groups: uid 1 has one task, uid 2 has three. Each group gets half
    // the 6 ms period; uid 2's tasks split their half (period counted at the leaf level).
    let mut p = FairParams::preset(Era::V2_6_36);
    p.grouping = Grouping::Uid;
    let mut f = Fair::new(p);
    f.spawn(t(0), 1, 0, 0);
    for task in (1..4).map(t) {
        f.spawn(task, 2, 0, 0);
    }
    assert_eq!(f.task_info(t(0)).unwrap().slice_ns, 3 * MS);
    assert_eq!(f.task_info(t(1)).unwrap().slice_ns, MS);
    // 2.6.24 computes per level: a task's slice is its share of its own group's queue only.
    let mut f = Fair::new(FairParams::preset(Era::V2_6_24));
    f.spawn(t(0), 1, 0, 0);
    for task in (1..4).map(t) {
        f.spawn(task, 2, 0, 0);
    }
    assert_eq!(f.task_info(t(0)).unwrap().slice_ns, 20 * MS);
    assert_eq!(f.task_info(t(1)).unwrap().slice_ns, 20 * MS / 3);
}

/// Runs task 0 alone for 1 s, then wakes task 1 (which slept from the start) and returns
/// how far before min_vruntime it was placed.
fn sleeper_credit(era: Era) -> i64 {
    let mut f = flat(era);
    f.spawn(t(0), 1, 0, 0);
    f.spawn(t(1), 1, 0, 0);
    f.dequeue(t(1), 0);
    assert_eq!(f.pick_next(0), Some(t(0)));
    f.tick(1_000 * MS);
    f.enqueue(t(1), Wakeup::default(), 1_000 * MS);
    let min = f.rq(ROOT).min_vruntime;
    crate::weights::vdiff(min, f.task_info(t(1)).unwrap().vruntime)
}

#[test]
fn sleeper_credit_per_era() {
    assert_eq!(sleeper_credit(Era::V2_6_24), 20 * MS as i64);
    assert_eq!(sleeper_credit(Era::V2_6_25), 20 * MS as i64);
    assert_eq!(sleeper_credit(Era::V2_6_32), 2_500_000);
    assert_eq!(sleeper_credit(Era::V2_6_35), 3 * MS as i64);
    assert_eq!(sleeper_credit(Era::V2_6_36), 3 * MS as i64);
}

#[test]
fn a_vfork_parent_can_be_denied_sleeper_credit() {
    let credit = |vfork_credit: bool| {
        let mut p = FairParams::preset(Era::V2_6_36);
        p.features.set(Feature::VforkSleeperCredit, vfork_credit);
        let mut f = Fair::new(p);
        f.spawn(t(0), 1, 0, 0);
        f.spawn(t(1), 1, 0, 0);
        f.dequeue(t(1), 0);
        f.pick_next(0);
        f.tick(100 * MS);
        let vfork_parent = Wakeup {
            vfork_parent: true,
            ..Wakeup::default()
        };
        f.enqueue(t(1), vfork_parent, 100 * MS);
        crate::weights::vdiff(f.rq(ROOT).min_vruntime, f.task_info(t(1)).unwrap().vruntime)
    };
    assert_eq!(credit(true), 3 * MS as i64);
    assert_eq!(credit(false), 0);
}

/// Task 0 runs 10 ms, then task 1 is spawned: returns its distance right of min_vruntime.
fn start_debit(era: Era, debit: bool) -> i64 {
    let mut p = FairParams::preset(era);
    p.grouping = Grouping::None;
    p.features.set(Feature::StartDebit, debit);
    let mut f = Fair::new(p);
    f.spawn(t(0), 1, 0, 0);
    f.pick_next(0);
    f.tick(10 * MS);
    f.spawn(t(1), 1, 0, 10 * MS);
    crate::weights::vdiff(f.task_info(t(1)).unwrap().vruntime, f.rq(ROOT).min_vruntime)
}

#[test]
fn start_debit_is_one_virtual_slice_of_the_newcomer() {
    // 2.6.24: period(2) × 1024 / (1024 + 1024) = 10 ms.
    assert_eq!(start_debit(Era::V2_6_24, true), 10 * MS as i64);
    // 2.6.36: the newcomer's slice among two, 6 ms / 2 = 3 ms.
    assert_eq!(start_debit(Era::V2_6_36, true), 3 * MS as i64);
    assert_eq!(start_debit(Era::V2_6_36, false), 0);
}

#[test]
fn wakeup_granularity_is_scaled_by_the_eras_weight() {
    let gran = |era: Era, curr_nice: i8, wakee_nice: i8| {
        let mut f = flat(era);
        f.spawn(t(0), 1, curr_nice, 0);
        f.spawn(t(1), 1, wakee_nice, 0);
        f.wakeup_gran(f.task_se(t(0)), f.task_se(t(1)))
    };
    // 2.6.36: the wakee's weight. 1 ms; nice 19 → 68 ms; nice −20 → 11.5 µs.
    assert_eq!(gran(Era::V2_6_36, 0, 0), MS);
    assert_eq!(gran(Era::V2_6_36, 0, 19), 68_266_666);
    assert_eq!(gran(Era::V2_6_36, 0, -20), 11_536);
    // 2.6.24: the current task's weight whenever it is not nice 0.
    assert_eq!(gran(Era::V2_6_24, 5, 0), 10 * MS * 1024 / 335);
    assert_eq!(gran(Era::V2_6_24, 0, 19), 10 * MS);
    // 2.6.25: only when the current task is heavier than nice 0.
    assert_eq!(gran(Era::V2_6_25, 5, 0), 5 * MS);
    assert_eq!(gran(Era::V2_6_25, -5, 0), 5 * MS * 1024 / 3121);
}

#[test]
fn wakeup_preemption_needs_a_lead_of_more_than_the_granularity() {
    // 2.6.36, two nice-0 tasks: task 1 slept from the start; task 0 ran 10 ms. Task 1 is
    // placed 3 ms before min_vruntime (gentle sleeper credit), 3 ms > 1 ms: preempt.
    let mut f = flat(Era::V2_6_36);
    f.spawn(t(0), 1, 0, 0);
    f.spawn(t(1), 1, 0, 0);
    f.dequeue(t(1), 0);
    f.pick_next(0);
    f.tick(10 * MS);
    f.enqueue(t(1), Wakeup::default(), 10 * MS);
    assert!(f.check_preempt_wakeup(t(1), 10 * MS));
    // Without sleeper credit it lands on min_vruntime, 0 ahead: no preemption.
    let mut p = FairParams::preset(Era::V2_6_36);
    p.grouping = Grouping::None;
    p.features.set(Feature::FairSleepers, false);
    let mut f = Fair::new(p);
    f.spawn(t(0), 1, 0, 0);
    f.spawn(t(1), 1, 0, 0);
    f.dequeue(t(1), 0);
    f.pick_next(0);
    f.tick(10 * MS);
    f.enqueue(t(1), Wakeup::default(), 10 * MS);
    assert!(!f.check_preempt_wakeup(t(1), 10 * MS));
}

#[test]
fn dyn_granularity_keeps_the_period_at_latency() {
    let mut p = FairParams::preset(Era::V2_6_35);
    p.grouping = Grouping::None;
    let f = Fair::new(p.clone());
    assert_eq!(f.sched_period(10), 20 * MS);
    p.features.set(Feature::DynGranularity, true);
    let f = Fair::new(p);
    assert_eq!(f.sched_period(3), 6 * MS);
    assert_eq!(f.sched_period(10), 6 * MS);
    // The 100 µs floor: 6 ms / 100 tasks = 60 µs → 100 µs × 100.
    assert_eq!(f.sched_period(100), 10 * MS);
}

#[test]
fn min_vruntime_starts_below_the_wrap_and_survives_it() {
    let mut f = flat(Era::V2_6_36);
    assert_eq!(f.rq(ROOT).min_vruntime, runqueue::INITIAL_MIN_VRUNTIME);
    f.spawn(t(0), 1, 0, 0);
    f.spawn(t(1), 1, 0, 0);
    let mut now = 0;
    let mut last_min = f.rq(ROOT).min_vruntime;
    let mut current = f.pick_next(0).unwrap();
    // 100 ms of ticks crosses the wrap (it is 1.05 ms away) many times over in u64 terms.
    for _ in 0..100 {
        now += MS;
        if f.tick(now) {
            f.put_prev(current, now);
            current = f.pick_next(now).unwrap();
        }
        let min = f.rq(ROOT).min_vruntime;
        assert!(
            crate::weights::vdiff(min, last_min) >= 0,
            "min_vruntime went back"
        );
        last_min = min;
    }
    // Fair shares despite the wrap: they alternate, each running its 3 ms slice plus the
    // tick that notices it is over, so they differ by at most one such turn.
    let (a, b) = (
        f.task_info(t(0)).unwrap().sum_exec_runtime,
        f.task_info(t(1)).unwrap().sum_exec_runtime,
    );
    assert!(a.abs_diff(b) <= 4 * MS, "{a} vs {b}");
}

/// The worked example of docs/scheduler.md §6.5 (2.6.24, FAIR_USER_SCHED, one CPU): uid 2 runs
/// two hogs, uid 1 a task that slept 100 ms. Without group sleeper credit the waking task's
/// group is placed at min_vruntime and cannot preempt; it waits until uid 2's group has had
/// its top-level slice, period(2) × 1024 / 2048 = 10 ms, noticed by the first tick after it
/// (Linux preempts when the run time *exceeds* the slice): 11 ms at HZ=1000. With the
/// credit it preempts at once.
fn worked_example_wait(group_credit: bool) -> u64 {
    let mut p = FairParams::preset(Era::V2_6_24);
    p.features.set(Feature::GroupSleeperCredit, group_credit);
    let mut f = Fair::new(p);
    f.spawn(t(0), 2, 0, 0);
    f.spawn(t(1), 2, 0, 0);
    f.spawn(t(2), 1, 0, 0);
    f.dequeue(t(2), 0);
    let tick = MS;
    let mut now = 0;
    let mut current = f.pick_next(0).unwrap();
    let mut woken_at = None;
    loop {
        // Wake the sleeper right after uid 2's group was (re)picked, past 100 ms.
        let mut resched = false;
        if woken_at.is_none() && now >= 100 * MS && f.se(f.task_se(current)).ran_since_pick() == 0 {
            f.enqueue(t(2), Wakeup::default(), now);
            woken_at = Some(now);
            resched = f.check_preempt_wakeup(t(2), now);
        }
        if !resched {
            now += tick;
            resched = f.tick(now);
        }
        if resched {
            f.put_prev(current, now);
            current = f.pick_next(now).unwrap();
            if current == t(2) {
                return now - woken_at.unwrap();
            }
        }
        assert!(now < 10_000 * MS, "the sleeper never ran");
    }
}

#[test]
fn fair_user_sched_worked_example() {
    assert_eq!(worked_example_wait(false), 11 * MS);
    assert_eq!(worked_example_wait(true), 0);
}

/// The runqueue sections and the task rows, in 6.1's layout: the field names and the
/// columns of Linux's `print_cfs_rq` and `print_task`, weights on 64-bit Linux's scale.
#[test]
fn the_debug_text_shows_every_queue_and_task_as_linux_does() {
    let mut f = Fair::new(FairParams::preset(Era::V2_6_24));
    f.spawn(t(0), 1, 0, 0);
    f.spawn(t(1), 2, 3, 0);
    f.pick_next(0);
    let mut out = alloc::string::String::new();
    f.write_debug_runqueues(0, &mut out).unwrap();
    for section in [
        "cfs_rq[0]:/\n",
        "cfs_rq[0]:/uids/1\n",
        "cfs_rq[0]:/uids/2\n",
    ] {
        assert!(out.contains(section), "{section} in {out}");
    }
    // The root holds the two group entities; each group one task. Task 1 waits, so it is
    // both ends of its queue's timeline: its spread is zero.
    assert!(
        out.contains(
            "  .nr_running                    : 2\n  .h_nr_running                  : 2\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("  .load                          : 2097152\n"),
        "{out}"
    );
    assert!(
        out.contains("  .se->load.weight               : 1048576\n"),
        "{out}"
    );
    let row = |task: TaskId, running| {
        let mut line = alloc::string::String::new();
        let row = crate::debug_layout::TaskRow {
            running,
            state: 'R',
            comm: "hog",
            pid: task.index() as i64 + 1,
            switches: 3,
            prio: 123,
            wait_ns: 1_500_000,
            sleep_ns: 0,
        };
        f.write_debug_task(task, &row, &mut line).unwrap();
        line
    };
    assert!(
        row(t(0), true).starts_with(">R             hog     1 "),
        "{}",
        row(t(0), true)
    );
    let waiting = row(t(1), false);
    let words: alloc::vec::Vec<&str> = waiting.split_whitespace().collect();
    assert_eq!(words[..3], ["R", "hog", "2"], "{waiting}");
    assert_eq!(words[4..7], ["3", "123", "1.500000"], "{waiting}");
    assert_eq!(words.last(), Some(&"/uids/2"), "{waiting}");
}

/// 2.6.36 with nine hogs (≥ nr_latency 8, so buddies engage) and a sleeper: the hog a wake-up
/// preempts becomes the last buddy and gets the CPU back once the sleeper sleeps again, even
/// though another hog is further left — unless LAST_BUDDY is off.
fn pick_after_wakee_sleeps(last_buddy: bool) -> (TaskId, TaskId, TaskId) {
    let mut p = FairParams::preset(Era::V2_6_36);
    p.grouping = Grouping::None;
    p.features.set(Feature::LastBuddy, last_buddy);
    let mut f = Fair::new(p);
    for task in (0..9).map(t) {
        f.spawn(task, 1, 0, 0);
    }
    f.spawn(t(9), 1, 0, 0);
    f.dequeue(t(9), 0);
    let mut now = 0;
    let mut current = f.pick_next(0).unwrap();
    // Let the hogs take turns for a while, then stop right after a switch.
    loop {
        now += MS;
        if f.tick(now) {
            f.put_prev(current, now);
            current = f.pick_next(now).unwrap();
            if now >= 100 * MS {
                break;
            }
        }
    }
    // The current hog runs half a millisecond, then the sleeper wakes and preempts it.
    now += 500 * US;
    f.enqueue(t(9), Wakeup::default(), now);
    assert!(
        f.check_preempt_wakeup(t(9), now),
        "the sleeper should preempt"
    );
    let preempted = current;
    f.put_prev(preempted, now);
    assert_eq!(f.pick_next(now), Some(t(9)));
    // The sleeper runs 100 µs and sleeps again.
    now += 100 * US;
    f.dequeue(t(9), now);
    f.put_prev(t(9), now);
    let leftmost = f.rq(ROOT).leftmost().and_then(|id| f.se(id).task).unwrap();
    (preempted, leftmost, f.pick_next(now).unwrap())
}

#[test]
fn last_buddy_returns_the_cpu_to_the_preempted_task() {
    let (preempted, leftmost, picked) = pick_after_wakee_sleeps(true);
    assert_ne!(
        preempted, leftmost,
        "the scenario needs another hog further left"
    );
    assert_eq!(picked, preempted);
    let (_, leftmost, picked) = pick_after_wakee_sleeps(false);
    assert_eq!(picked, leftmost);
}
