//! `find_busiest_group` and `find_busiest_queue` against the worked examples of 2.6.24's
//! arithmetic (docs/scheduler.md §15).

use super::*;
use crate::smp::busiest::steady;
use crate::smp::domains::Group;
use crate::smp::domains::build_2_6_24;
use crate::smp::topology::Topology;

fn verdict(t: &Topology, level: usize, cpu: usize, tasks: &[u32], why: IdleType) -> Verdict {
    let d = &build_2_6_24(t, cpu)[level];
    find_busiest_group(d, cpu, &steady(tasks), why, t.all())
}

#[test]
fn three_tasks_against_one_pull_one_task() {
    // Two CPUs (MC, one CPU per group). CPU 1 balances: this 1024, busiest 3072, the
    // average 2048; 3072 > 1.25 × 1024. One task's weight (1024) brings both to it.
    let t = Topology::flat(2);
    let v = verdict(&t, 0, 1, &[3, 1], IdleType::NotIdle);
    assert_eq!(
        v,
        Verdict::Pull {
            migration: Migration::Load,
            group: 1,
            imbalance: 1024
        }
    );
}

#[test]
fn two_against_one_still_pulls_a_task_by_the_small_imbalance_rule() {
    // The average is 1536: half a task would even them out, less than one task, so
    // the small-imbalance rule decides: the gap (1024) plus the slack (1024) is two
    // tasks' weight, so one task moves — and could move back next time (the cache-hot
    // check and the averaged loads slow that down).
    let t = Topology::flat(2);
    let v = verdict(&t, 0, 1, &[2, 1], IdleType::NotIdle);
    assert_eq!(
        v,
        Verdict::Pull {
            migration: Migration::Load,
            group: 1,
            imbalance: 1024
        }
    );
}

#[test]
fn a_cpu_running_its_one_task_is_not_busiest() {
    // A group with no more tasks than its power allows is never the busiest: an idle
    // CPU does not pull a lone task off a CPU of its own.
    let t = Topology::flat(2);
    assert_eq!(
        verdict(&t, 0, 1, &[1, 0], IdleType::Idle),
        Verdict::Balanced
    );
    assert_eq!(
        verdict(&t, 0, 1, &[1, 1], IdleType::NotIdle),
        Verdict::Balanced
    );
    // Nor is a lighter group, whatever it runs.
    assert_eq!(
        verdict(&t, 0, 0, &[3, 1], IdleType::NotIdle),
        Verdict::Balanced
    );
}

#[test]
fn a_package_running_two_tasks_gives_one_to_an_idle_package() {
    // -smp 4,sockets=2,cores=2: package {0,1} runs two tasks (one per core), package
    // {2,3} none. At the CPU level a package's power is one task's, so {0,1} is
    // over capacity: its load per power is 2048, the average 1024, and one task
    // (1024) moves.
    let t = Topology::smp(2, 2, 1);
    let v = verdict(&t, 1, 2, &[1, 1, 0, 0], IdleType::Idle);
    assert_eq!(
        v,
        Verdict::Pull {
            migration: Migration::Load,
            group: 1,
            imbalance: 1024
        }
    );
    let d = &build_2_6_24(&t, 2)[1];
    let stats = steady(&[1, 1, 0, 0]);
    // Either CPU of it: each runs its only task, which weighs no more than the
    // imbalance; the first of equal loads.
    assert_eq!(
        find_busiest_queue(&d.groups[1], &stats, 1024, t.all()),
        Some(0)
    );
    // A lone task heavier than the imbalance is left where it is.
    assert_eq!(find_busiest_queue(&d.groups[1], &stats, 512, t.all()), None);
}

#[test]
fn only_the_first_idle_cpu_of_a_group_balances_above_it() {
    // CPU 3 is idle, CPU 2 busy: at the CPU level, CPU 3 balances for package {2,3}.
    let t = Topology::smp(2, 2, 1);
    let tasks = [2, 2, 1, 0];
    assert_eq!(
        verdict(&t, 1, 2, &tasks, IdleType::NotIdle),
        Verdict::NotTheBalancer
    );
    assert!(matches!(
        verdict(&t, 1, 3, &tasks, IdleType::Idle),
        Verdict::Pull { .. }
    ));
    // About to go idle, any CPU may.
    assert_ne!(
        verdict(&t, 1, 2, &tasks, IdleType::NewlyIdle),
        Verdict::NotTheBalancer
    );
}

#[test]
fn the_load_history_the_domain_names_is_read() {
    // MC's busy index is 2 (cpu_load[1]); the guesses lean towards staying: CPU 0 has
    // just received its third task (history still at 1024), so its low guess is 1024
    // and nothing is pulled; idle (index 0), the load now counts.
    let t = Topology::flat(2);
    let d = &build_2_6_24(&t, 1)[0];
    let mut stats = steady(&[3, 1]);
    stats[0].cpu_load = CpuLoad::steady(1024);
    assert_eq!(
        find_busiest_group(d, 1, &stats, IdleType::NotIdle, t.all()),
        Verdict::Balanced
    );
    stats[1] = CpuStat::default();
    stats[1].idle = true;
    assert_eq!(
        find_busiest_group(d, 1, &stats, IdleType::Idle, t.all()),
        Verdict::Pull {
            migration: Migration::Load,
            group: 1,
            imbalance: 1536
        }
    );
}

#[test]
fn dividing_by_a_power_is_exact_for_powers_of_two_and_close_otherwise() {
    assert_eq!(div_power(3072 * 1024, 1024), 3072);
    assert_eq!(div_power(3072 * 1024, 2048), 1536);
    // ⌈2^32 / 3072⌉ = 1398102: 2^21 / 3072 (682.67) comes out as 682.
    assert_eq!(div_power(1 << 21, 3072), 682);
}

#[test]
fn a_cpu_with_no_load_is_never_the_busiest_queue() {
    // A group of CPU 0 (one task of nice −10, 9548, heavier than the imbalance) and an
    // empty CPU 1: neither is pulled from (2.6.24 starts its maximum at 0).
    let t = Topology::flat(2);
    let mut stats = steady(&[1, 0]);
    stats[0].load = 9548;
    let group = Group {
        cpus: t.all(),
        power: SCHED_LOAD_SCALE,
        balance: t.all(),
    };
    assert_eq!(find_busiest_queue(&group, &stats, 1024, t.all()), None);
}
