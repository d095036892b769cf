//! 2.6.36's `find_busiest_group` and `find_busiest_queue` against worked numbers.

use super::*;
use crate::smp::busiest::Migration;
use crate::smp::busiest::steady;
use crate::smp::domains::{Flags, build_2_6_24, build_2_6_36};
use crate::smp::topology::Topology;

#[test]
fn an_idle_core_pulls_one_of_two_tasks_from_a_busy_core_of_hyperthreads() {
    // Two cores of two threads; core 0 runs two nice-0 tasks, CPU 2 (core 1) is idle and
    // balances MC. Each core's power is 2 × 589 = 1178, its capacity 1. Core 0 averages
    // 2048 × 1024 / 1178 = 1780, the domain 2048 × 1024 / 2356 = 890. The load above
    // core 0's capacity is 1 × 1024 × 1024 / 1178 = 890, so the imbalance is
    // 890 × 1178 / 1024 = 1023: less than a task, and the small-imbalance rule rounds it
    // to the task (1780 + 890 ≥ 2 × 890).
    let t = Topology::smp(1, 2, 2);
    let d = &build_2_6_36(&t, 2)[1];
    assert_eq!((d.level, d.cpu_power), (Level::Mc, 589));
    assert!(d.groups.iter().all(|g| g.power == 1178));
    let stats = steady(&[1, 1, 0, 0]);
    let verdict = find_busiest_group(d, 2, &stats, IdleType::Idle, t.all());
    assert_eq!(
        verdict,
        Verdict::Pull {
            migration: Migration::Load,
            group: 1,
            imbalance: 1024
        }
    );
    // Each of core 0's threads runs one task of exactly the imbalance: not heavier, so
    // the first is the busiest queue (its task will have to be pushed).
    assert_eq!(find_busiest_queue(d, 1, &stats, 1024, t.all()), Some(0));
}

#[test]
fn a_package_below_preferring_siblings_counts_as_able_to_run_one_task() {
    // Two packages of two cores; package 0 runs one task per core, CPU 2 balances the CPU
    // level. Package 0's power is 2048 (capacity 2, nothing over it), but MC below
    // prefers siblings, so it counts as able to run one: two tasks are over that. The
    // load above capacity is 1 × 1024 × 1024 / 2048 = 512 per unit of power, 1024 of
    // load: one task goes to the idle package.
    let t = Topology::smp(2, 2, 1);
    let domains = build_2_6_36(&t, 2);
    assert!(domains[0].params.flags.has(Flags::PREFER_SIBLING));
    let d = &domains[1];
    assert_eq!((d.level, d.child_prefers_siblings), (Level::Cpu, true));
    let stats = steady(&[1, 1, 0, 0]);
    let verdict = find_busiest_group(d, 2, &stats, IdleType::Idle, t.all());
    assert_eq!(
        verdict,
        Verdict::Pull {
            migration: Migration::Load,
            group: 1,
            imbalance: 1024
        }
    );
}

#[test]
fn a_group_is_imbalanced_inside_only_past_twice_its_load_per_task() {
    // Package 0's cores run 3 and 1 tasks: 2048 apart, exactly twice its 1024 per task,
    // so not imbalanced inside in 2.6.36 (2.6.24 said it was: more than one nice-0
    // task). 4 and 1: 3072 apart, over twice 1024.
    let t = Topology::smp(2, 2, 1);
    let d = &build_2_6_36(&t, 2)[1];
    let package_0 = &d.groups[1];
    let imbalanced =
        |tasks: &[u32]| group_stats(d, package_0, false, &steady(tasks), t.all(), 0).imbalanced;
    assert!(!imbalanced(&[3, 1, 0, 0]));
    assert!(imbalanced(&[4, 1, 0, 0]));
    let old = &build_2_6_24(&t, 2)[1];
    let sums =
        crate::smp::busiest::sum_group(&old.groups[1], false, &steady(&[3, 1, 0, 0]), t.all(), 0);
    assert!(crate::smp::busiest::imbalanced(&sums));
}

#[test]
fn equal_loads_are_balanced_and_only_the_first_idle_cpu_balances_for_its_group() {
    let t = Topology::smp(2, 2, 1);
    let d = &build_2_6_36(&t, 2)[1];
    let busy = steady(&[1, 1, 1, 1]);
    assert_eq!(
        find_busiest_group(d, 2, &busy, IdleType::NotIdle, t.all()),
        Verdict::Balanced
    );
    // Package 1 all idle: CPU 2 is its first idle CPU and balances; CPU 3 does not.
    let idle = steady(&[2, 2, 0, 0]);
    assert_eq!(
        find_busiest_group(d, 3, &idle, IdleType::Idle, t.all()),
        Verdict::NotTheBalancer
    );
    assert!(matches!(
        find_busiest_group(d, 3, &idle, IdleType::NewlyIdle, t.all()),
        Verdict::Pull { .. }
    ));
}
