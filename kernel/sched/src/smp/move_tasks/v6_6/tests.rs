//! 6.6's `detach_tasks` against worked numbers.

use super::*;
use crate::smp::cpuset::CpuSet;
use crate::task_id::t;

/// A task of `h_load` and `util`, cold, allowed on CPUs 0 and 1.
fn task(task: usize, h_load: u64, util: u64) -> Candidate {
    Candidate {
        task: t(task),
        weight: h_load,
        prio: 120,
        allowed: CpuSet::first(2),
        last_ran: 0,
        running: false,
        util,
    }
}

fn env(failed: u64) -> Env {
    Env {
        this_cpu: 1,
        now: 10_000_000,
        nr_balance_failed: failed,
        cache_nice_tries: 1,
        favour_best_prio: false,
        repeat_look: false,
        dst_group: CpuSet::EMPTY,
    }
}

#[test]
fn load_moves_while_a_task_fits_and_each_failure_halves_a_task_s_weight() {
    // 1500 to move; tasks of 2048, 1024 and 1024 (the tail first). 2048 is more than is
    // left: it stays; 1024 goes, leaving 476; the next 1024 is too much. After one failed
    // pass a task is compared at half its load: 2048 → 1024 fits, and goes — counted
    // whole, 1500 − 2048 < 0, so nothing is left and the walk stops.
    let tasks = [
        task(1, 2048, 1024),
        task(2, 1024, 1024),
        task(3, 1024, 1024),
    ];
    let pulled = detach_tasks(&tasks, Migration::Load, 1500, 4, IdleType::NotIdle, &env(0));
    assert_eq!(pulled.tasks, [t(2)]);
    let pulled = detach_tasks(&tasks, Migration::Load, 1500, 4, IdleType::NotIdle, &env(1));
    assert_eq!(
        pulled.tasks,
        [t(1)],
        "2048 halved is 1024 ≤ 1500; then nothing is left"
    );
}

#[test]
fn tasks_move_by_count_and_utilisation_by_spare_capacity() {
    let tasks = [task(1, 1024, 900), task(2, 1024, 300), task(3, 1024, 200)];
    let pulled = detach_tasks(&tasks, Migration::Task, 2, 4, IdleType::Idle, &env(0));
    assert_eq!(pulled.tasks, [t(1), t(2)]);
    // 600 of spare capacity: 900 does not fit, 300 and 200 do.
    let pulled = detach_tasks(&tasks, Migration::Util, 600, 4, IdleType::Idle, &env(0));
    assert_eq!(pulled.tasks, [t(2), t(3)]);
}

#[test]
fn an_idle_cpu_never_empties_the_busiest_and_a_newly_idle_one_takes_one() {
    let tasks = [task(1, 1024, 0), task(2, 1024, 0), task(3, 1024, 0)];
    // Three tasks to move from a CPU running three: an idle balancer stops at one left.
    let pulled = detach_tasks(&tasks, Migration::Task, 3, 3, IdleType::Idle, &env(0));
    assert_eq!(pulled.tasks, [t(1), t(2)]);
    // A busy one may take them all.
    let pulled = detach_tasks(&tasks, Migration::Task, 3, 3, IdleType::NotIdle, &env(0));
    assert_eq!(pulled.tasks, [t(1), t(2), t(3)]);
    // A CPU about to go idle takes one.
    let pulled = detach_tasks(&tasks, Migration::Task, 3, 3, IdleType::NewlyIdle, &env(0));
    assert_eq!(pulled.tasks, [t(1)]);
}

#[test]
fn pinned_and_running_tasks_stay() {
    let pinned = Candidate {
        allowed: CpuSet::one(0),
        ..task(1, 1024, 0)
    };
    let running = Candidate {
        running: true,
        ..task(2, 1024, 0)
    };
    let pulled = detach_tasks(&[pinned], Migration::Task, 1, 2, IdleType::Idle, &env(0));
    assert!(pulled.tasks.is_empty() && pulled.all_pinned);
    let pulled = detach_tasks(
        &[pinned, running],
        Migration::Task,
        1,
        2,
        IdleType::Idle,
        &env(0),
    );
    assert!(
        pulled.tasks.is_empty() && !pulled.all_pinned,
        "the running one could come"
    );
}

#[test]
fn a_pinned_task_names_the_first_cpu_of_the_group_it_could_go_to() {
    // CPU 1 balances for a group {1, 2, 3}. Task 1 may run on CPUs 0 and 3 only, task 2 on
    // 0 and 2: neither comes to CPU 1, both are noted (some pinned, all pinned), and the
    // CPU offered instead is the first task's first allowed CPU of the group, 3 — the second
    // task does not change it. What is to move is all left. A CPU about to go idle is
    // offered none: it balances only for itself.
    let only = |cpus: &[usize]| cpus.iter().fold(CpuSet::EMPTY, |s, &c| s.with(c));
    let t1 = Candidate {
        allowed: only(&[0, 3]),
        ..task(1, 1024, 0)
    };
    let t2 = Candidate {
        allowed: only(&[0, 2]),
        ..task(2, 1024, 0)
    };
    let env = Env {
        dst_group: only(&[1, 2, 3]),
        ..env(0)
    };
    let pulled = detach_tasks(&[t1, t2], Migration::Task, 1, 3, IdleType::Idle, &env);
    assert!(pulled.tasks.is_empty() && pulled.all_pinned && pulled.some_pinned);
    assert_eq!((pulled.new_dst, pulled.left), (Some(3), 1));
    let newly_idle = Env {
        dst_group: CpuSet::EMPTY,
        ..env
    };
    let pulled = detach_tasks(
        &[t1, t2],
        Migration::Task,
        1,
        3,
        IdleType::NewlyIdle,
        &newly_idle,
    );
    assert_eq!((pulled.some_pinned, pulled.new_dst), (true, None));
}
