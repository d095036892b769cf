//! Which tasks a pass pulls, against worked numbers.

use super::*;
use crate::task_id::t;

const MS: u64 = 1_000_000;

fn nice0(task: usize, last_ran: u64) -> Candidate {
    Candidate {
        task: t(task),
        weight: 1024,
        prio: 120,
        allowed: CpuSet::first(2),
        last_ran,
        running: false,
        util: 0,
    }
}

fn env(failed: u64) -> Env {
    Env {
        this_cpu: 1,
        now: 100 * MS,
        nr_balance_failed: failed,
        cache_nice_tries: 1,
        favour_best_prio: true,
        repeat_look: false,
        dst_group: CpuSet::EMPTY,
    }
}

fn fair(groups: &[GroupQueues], max_load: u64, env: &Env) -> Pulled {
    let mut pulled = Pulled::default();
    load_balance_fair(groups, max_load, env, &mut pulled);
    pulled
}

fn flat(tasks: &[Candidate], max_load: u64, env: &Env) -> Pulled {
    let load: u64 = tasks.iter().map(|c| c.weight).sum();
    let group = GroupQueues {
        busiest: tasks.to_vec(),
        busiest_load: load,
        this_load: 0,
        this_best_prio: MAX_PRIO,
    };
    fair(&[group], max_load, env)
}

#[test]
fn the_most_owed_cold_tasks_are_pulled_up_to_the_imbalance() {
    // Three waiting tasks, cold, the most owed first. With one task's weight to move,
    // the first is pulled and the pass stops (nothing left to move).
    let tasks = [nice0(3, 10 * MS), nice0(4, 20 * MS), nice0(5, 30 * MS)];
    let p = flat(&tasks, 1024, &env(0));
    assert_eq!(p.tasks, [t(3)]);
    assert_eq!(p.load, 1024);
    assert!(!p.all_pinned);
    let p = flat(&tasks, 1536, &env(0));
    assert_eq!(
        p.tasks,
        [t(3), t(4)],
        "1536 − 1024 = 512 left: a second task goes"
    );
}

#[test]
fn a_hot_task_stays_until_the_domain_has_failed_enough() {
    // Task 3 ran 0.2 ms ago: hot. cache_nice_tries 1: from the second failure on it
    // may go.
    let tasks = [nice0(3, 100 * MS - 200_000), nice0(4, 10 * MS)];
    assert_eq!(flat(&tasks, 1024, &env(0)).tasks, [t(4)]);
    assert_eq!(flat(&tasks, 1024, &env(1)).tasks, [t(4)]);
    assert_eq!(flat(&tasks, 1024, &env(2)).tasks, [t(3)]);
}

#[test]
fn the_running_task_and_pinned_tasks_stay() {
    let mut running = nice0(3, 0);
    running.running = true;
    let mut pinned = nice0(4, 0);
    pinned.allowed = CpuSet::one(0);
    let p = flat(&[running, pinned], 1024, &env(0));
    assert!(p.tasks.is_empty());
    // The running task's affinity allowed CPU 1: not all pinned.
    assert!(!p.all_pinned);
    let p = flat(&[pinned], 1024, &env(0));
    assert!(
        p.tasks.is_empty() && p.all_pinned,
        "every task looked at is pinned"
    );
}

#[test]
fn no_load_to_move_is_not_all_pinned() {
    // An imbalance of 0 (find_busiest_group's "moving a task would not help"), or no
    // group heavier on the busiest CPU: nothing looked at, nothing pinned — the caller
    // counts a failure, not a pinned CPU.
    let mut pinned = nice0(3, 0);
    pinned.allowed = CpuSet::one(0);
    let p = flat(&[pinned], 0, &env(0));
    assert!(p.tasks.is_empty() && !p.all_pinned);
    let even = GroupQueues {
        busiest: alloc::vec![pinned],
        busiest_load: 1024,
        this_load: 1024,
        this_best_prio: 120,
    };
    assert!(!fair(&[even], 1024, &env(0)).all_pinned);
}

#[test]
fn a_heavy_task_goes_only_if_it_would_lead_here() {
    // Nice −10 (9548) when 1024 is to move: too heavy by the half-weight rule, but on
    // an idle CPU it would be the best priority there, so it goes.
    let heavy = Candidate {
        weight: 9548,
        prio: 110,
        ..nice0(3, 0)
    };
    let group = |best| GroupQueues {
        busiest: alloc::vec![heavy],
        busiest_load: 9548 + 1024,
        this_load: 0,
        this_best_prio: best,
    };
    assert_eq!(fair(&[group(MAX_PRIO)], 1024, &env(0)).tasks, [t(3)]);
    // Beside a task of priority 100 here it would not lead: it stays.
    assert!(fair(&[group(100)], 1024, &env(0)).tasks.is_empty());
}

#[test]
fn without_groups_the_whole_imbalance_is_looked_for_at_once() {
    // The same tasks as one group's: that group weighs as much here as there, and
    // gives nothing; without group scheduling the pass looks for the imbalance in the
    // one runqueue and pulls a task.
    let q = GroupQueues {
        busiest: alloc::vec![nice0(3, 0), nice0(4, 0)],
        busiest_load: 2048,
        this_load: 2048,
        this_best_prio: 120,
    };
    assert!(
        move_tasks(&Queues::Groups(alloc::vec![q.clone()]), 1024, &env(0))
            .tasks
            .is_empty()
    );
    assert_eq!(move_tasks(&Queues::Flat(q), 1024, &env(0)).tasks, [t(3)]);
}

#[test]
fn each_group_gives_half_its_difference() {
    // 2.6.24's per-uid balancing: uid 1 has 3 tasks on the busiest CPU and 1 here —
    // half the difference (1024) moves; uid 2 has 1 task there and 1 here: none.
    let uid1 = GroupQueues {
        busiest: alloc::vec![nice0(3, 0), nice0(4, 0)],
        busiest_load: 3072,
        this_load: 1024,
        this_best_prio: 120,
    };
    let uid2 = GroupQueues {
        busiest: alloc::vec![nice0(5, 0)],
        busiest_load: 1024,
        this_load: 1024,
        this_best_prio: 120,
    };
    let p = fair(&[uid2, uid1], 4096, &env(0));
    assert_eq!(p.tasks, [t(3)]);
}

#[test]
fn with_split_shares_a_pull_is_scaled_by_the_groups_part_of_the_cpu() {
    // The busiest CPU weighs 1280: uid 1's running hog (its group's share 1024) and
    // one waiting hog of uid 2, whose group holds 256 here. uid 2 stands for
    // 1280 × 256 / 1281 = 255 of the CPU, so an imbalance of 256 is
    // 256 × 1024 / 256 = 1024 in its units: its hog goes, which is
    // 1024 × 255 / 1025 = 254 of the root's load.
    let mut running = nice0(3, 0);
    running.running = true;
    let group = |tasks: &[Candidate]| GroupQueues {
        busiest: tasks.to_vec(),
        busiest_load: 1024,
        this_load: 0,
        this_best_prio: MAX_PRIO,
    };
    let queues = Queues::Split {
        groups: alloc::vec![group(&[nice0(4, 0)]), group(&[running])],
        shares: alloc::vec![256, 1024],
        root_load: 1280,
    };
    let env = Env {
        favour_best_prio: false,
        repeat_look: true,
        ..env(0)
    };
    let p = move_tasks(&queues, 256, &env);
    assert_eq!((p.tasks.as_slice(), p.load), ([t(4)].as_slice(), 254));
    // An imbalance of 100 is 400 in uid 2's units: a 1024 task is more than twice
    // that, and from 2.6.27 no slack or priority lets it go.
    assert!(move_tasks(&queues, 100, &env).tasks.is_empty());
}
