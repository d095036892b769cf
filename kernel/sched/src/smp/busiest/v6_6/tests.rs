//! 6.6's `find_busiest_group`, `calculate_imbalance` and `find_busiest_queue` against
//! worked numbers (the formulas in the module's docs; `imbalance_pct` 117 at MC).

use super::*;
use crate::smp::domains::{Domain, Level, Rules, build};
use crate::smp::topology::Topology;

/// A CPU running `nr` tasks, with PELT's averages as given.
fn cpu(nr: u32, load: u64, util: u64, runnable: u64) -> CpuStat {
    CpuStat {
        load,
        nr_running: nr,
        idle: nr == 0,
        util,
        runnable,
        ..CpuStat::default()
    }
}

/// `n` nice-0 hogs that have shared a CPU for long: load n × 1024, the CPU always used,
/// runnable n × 1024.
fn hogs(n: u32) -> CpuStat {
    let w = u64::from(n) * 1024;
    cpu(n, w, if n > 0 { 1024 } else { 0 }, w)
}

/// CPU `cpu`'s MC domain on a flat machine of `n` CPUs (one package).
fn mc(n: usize, cpu: usize) -> Domain {
    let d = build(&Topology::flat(n), cpu, Rules::V6_6).remove(0);
    assert_eq!(d.level, Level::Mc);
    d
}

fn all(n: usize) -> CpuSet {
    CpuSet::first(n)
}

#[test]
fn an_idle_cpu_beside_two_hogs_pulls_one_task_by_count() {
    // CPU 0 runs two hogs, CPU 1 is idle. CPU 1's group has spare capacity (no task, one
    // CPU). CPU 0's is overloaded: 2 tasks > 1 CPU, and its utilisation is past the
    // margin (1024 × 100 < 1024 × 117). So it is *tasks* that move (both groups are single
    // CPUs: `sibling_imbalance`, 2 − 0 = 2), half the difference: one task.
    let stats = [hogs(2), hogs(0)];
    let v = find_busiest_group(&mc(2, 1), 1, &stats, IdleType::Idle, all(2), &[]);
    let expected = Verdict::Pull {
        group: 1,
        migration: Migration::Task,
        imbalance: 1,
    };
    assert_eq!(v, expected);
}

#[test]
fn a_busy_cpu_pulls_load_from_an_overloaded_one_down_to_the_average() {
    // CPU 1 runs one hog (fully busy: as many tasks as CPUs, utilisation 1024 past
    // 1024 × 100 / 117), CPU 0 three (overloaded). Both busy, so load moves: CPU 0 averages
    // 3072 per unit of capacity, CPU 1 1024, the domain (3072 + 1024) × 1024 / 2048 = 2048.
    // The imbalance is the lesser of CPU 0's excess and CPU 1's shortfall, each × its
    // capacity: min(1024, 1024) × 1024 / 1024 = 1024.
    let stats = [hogs(3), hogs(1)];
    let v = find_busiest_group(&mc(2, 1), 1, &stats, IdleType::NotIdle, all(2), &[]);
    let expected = Verdict::Pull {
        group: 1,
        migration: Migration::Load,
        imbalance: 1024,
    };
    assert_eq!(v, expected);
}

#[test]
fn two_light_tasks_on_one_cpu_are_not_overloaded() {
    // Two tasks each busy 30 % of the time share CPU 0: utilisation 600 and runnable 700,
    // both inside the margins (600 × 117 < 1024 × 100, 700 × 100 < 1024 × 117), so the
    // group still has spare capacity. A busy CPU 1 (fully busy) leaves it alone: a group
    // of a lower type is never pulled from.
    let stats = [cpu(2, 614, 600, 700), hogs(1)];
    let v = find_busiest_group(&mc(2, 1), 1, &stats, IdleType::NotIdle, all(2), &[]);
    assert_eq!(v, Verdict::Balanced);
    // An idle CPU 1 does take one: 2 tasks against none, halved.
    let stats = [cpu(2, 614, 600, 700), hogs(0)];
    let v = find_busiest_group(&mc(2, 1), 1, &stats, IdleType::Idle, all(2), &[]);
    assert!(
        matches!(
            v,
            Verdict::Pull {
                migration: Migration::Task,
                imbalance: 1,
                ..
            }
        ),
        "{v:?}"
    );
}

#[test]
fn one_hog_per_cpu_is_balanced() {
    // Each CPU fully busy with one task: neither group is overloaded, and the balancing
    // CPU is busy.
    let stats = [hogs(1), hogs(1)];
    let v = find_busiest_group(&mc(2, 1), 1, &stats, IdleType::NotIdle, all(2), &[]);
    assert_eq!(v, Verdict::Balanced);
    // Idle, beside a single task: nothing to take either (`sum_h_nr_running == 1`).
    let stats = [hogs(1), hogs(0)];
    let v = find_busiest_group(&mc(2, 1), 1, &stats, IdleType::Idle, all(2), &[]);
    assert_eq!(v, Verdict::Balanced);
}

#[test]
fn only_the_first_idle_cpu_of_a_group_balances_for_it() {
    // Two cores of two threads: at MC the groups are cores. On core 1 (CPUs 2 and 3) both
    // threads idle: CPU 2 balances for the core, CPU 3 is told it is not the one.
    let t = Topology::smp(1, 2, 2);
    let d = &build(&t, 3, Rules::V6_6)[1];
    assert_eq!(d.level, Level::Mc);
    let stats = [hogs(2), hogs(1), hogs(0), hogs(0)];
    let v = find_busiest_group(d, 3, &stats, IdleType::Idle, t.all(), &[]);
    assert_eq!(v, Verdict::NotTheBalancer);
    let d = &build(&t, 2, Rules::V6_6)[1];
    let v = find_busiest_group(d, 2, &stats, IdleType::Idle, t.all(), &[]);
    // Core 0 runs 3 tasks on 2 threads, utilisation 2048 past 2048 × 100 / 117:
    // overloaded. Core 1 has spare, and MC shares the cache: tasks move — the groups are
    // cores that prefer siblings, so the difference in tasks, 3 − 0, halved: 1.
    assert!(
        matches!(
            v,
            Verdict::Pull {
                group: 1,
                migration: Migration::Task,
                imbalance: 1
            }
        ),
        "{v:?}"
    );
}

#[test]
fn the_busiest_queue_is_chosen_by_what_moves() {
    // Load: the most load, passing over a CPU whose single task outweighs the imbalance.
    // Tasks: the most tasks. Utilisation: the most used of the CPUs with two tasks or more.
    let d = mc(3, 0);
    let stats = [hogs(0), cpu(1, 3000, 1024, 1024), cpu(2, 2048, 700, 1500)];
    let busiest = |m, imb| find_busiest_queue(&d, 1, &stats, m, imb, all(3));
    // (Group 1 of CPU 0's MC is CPU 1 alone; the groups are single CPUs.)
    assert_eq!(
        busiest(Migration::Load, 1024),
        None,
        "its one task weighs 3000"
    );
    assert_eq!(busiest(Migration::Load, 4096), Some(1));
    assert_eq!(busiest(Migration::Task, 1), Some(1));
    assert_eq!(busiest(Migration::Util, 1024), None, "one task");
    let busiest = |m, imb| find_busiest_queue(&d, 2, &stats, m, imb, all(3));
    assert_eq!(busiest(Migration::Util, 1024), Some(2));
}

#[test]
fn a_marked_group_gives_up_one_task_whatever_its_averages() {
    // Two packages of two CPUs, seen by CPU 2 at the top level. Package {0, 1} runs two
    // hogs, both on CPU 1: 2 tasks on 2 CPUs, its utilisation 1024 under 2048 × 100 / 117
    // = 1750 — by its sums it has spare capacity. CPU 2's own package, one hog per CPU
    // (utilisation 2048), is fully busy, a higher type: nothing to pull. Marked imbalanced
    // (CPU 0 could take neither hog), package {0, 1} is of the type `imbalanced`, above
    // fully busy, and one task moves, counted as a task, whatever the loads say.
    let t = Topology::smp(2, 2, 1);
    let d = &build(&t, 2, Rules::V6_6)[1];
    assert_eq!(d.groups[1].cpus, CpuSet::first(2));
    let stats = [hogs(0), hogs(2), hogs(1), hogs(1)];
    let v = find_busiest_group(d, 2, &stats, IdleType::NotIdle, t.all(), &[]);
    assert_eq!(v, Verdict::Balanced);
    let v = find_busiest_group(d, 2, &stats, IdleType::NotIdle, t.all(), &[false, true]);
    let expected = Verdict::Pull {
        group: 1,
        migration: Migration::Task,
        imbalance: 1,
    };
    assert_eq!(v, expected);
    // And from it the CPU with the most tasks.
    let q = find_busiest_queue(d, 1, &stats, Migration::Task, 1, t.all());
    assert_eq!(q, Some(1));
}
