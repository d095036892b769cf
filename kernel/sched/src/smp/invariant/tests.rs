//! The checker on made-up timelines of two and three CPUs.

use super::*;
use alloc::vec;

const MS: u64 = 1_000_000;
const T: u64 = 100 * MS;

fn waiting(cpu: usize, since: u64, allowed: CpuSet) -> Waiting {
    Waiting {
        cpu,
        since,
        allowed,
    }
}

#[test]
fn an_idle_cpu_beside_a_long_wait_is_a_violation_from_the_threshold_on() {
    // CPU 1 idle from 0; a task waits on CPU 0 from 50 ms. The invariant breaks at 150 ms
    // and holds broken until CPU 1 takes the task at 400 ms: 250 ms wasted.
    let mut c = Checker::new(T, 0);
    c.observe(
        50 * MS,
        Snapshot {
            idle: CpuSet::one(1),
            waiting: vec![waiting(0, 50 * MS, CpuSet::first(2))],
        },
    );
    c.observe(300 * MS, c.state.clone()); // a change elsewhere: still broken
    let mid = c.report(300 * MS);
    assert_eq!(
        (mid.violations, mid.total_ns, mid.longest_ns),
        (1, 150 * MS, 150 * MS)
    );
    c.observe(400 * MS, Snapshot::default());
    let r = c.report(1000 * MS);
    assert_eq!(
        (r.violations, r.total_ns, r.longest_ns),
        (1, 250 * MS, 250 * MS)
    );
}

#[test]
fn short_waits_pinned_tasks_and_busy_machines_break_nothing() {
    let mut c = Checker::new(T, 0);
    // A wait of 99 ms beside an idle CPU.
    c.observe(
        0,
        Snapshot {
            idle: CpuSet::one(1),
            waiting: vec![waiting(0, 0, CpuSet::first(2))],
        },
    );
    c.observe(99 * MS, Snapshot::default());
    // A long wait of a task pinned to its CPU.
    c.observe(
        100 * MS,
        Snapshot {
            idle: CpuSet::one(1),
            waiting: vec![waiting(0, 0, CpuSet::one(0))],
        },
    );
    // A long wait with no CPU idle.
    c.observe(
        500 * MS,
        Snapshot {
            idle: CpuSet::EMPTY,
            waiting: vec![waiting(0, 0, CpuSet::first(2))],
        },
    );
    let r = c.report(900 * MS);
    assert_eq!((r.violations, r.total_ns), (0, 0));
}

#[test]
fn two_violations_are_counted_apart_and_the_longest_kept() {
    // CPU 2 idle; a task waits on CPU 0 from 0, taken at 130 ms (30 ms broken); another
    // from 200 ms on CPU 1, taken at 400 ms (100 ms broken).
    let mut c = Checker::new(T, 0);
    let all = CpuSet::first(3);
    c.observe(
        0,
        Snapshot {
            idle: CpuSet::one(2),
            waiting: vec![waiting(0, 0, all)],
        },
    );
    c.observe(
        130 * MS,
        Snapshot {
            idle: CpuSet::one(2),
            waiting: vec![],
        },
    );
    c.observe(
        200 * MS,
        Snapshot {
            idle: CpuSet::one(2),
            waiting: vec![waiting(1, 200 * MS, all)],
        },
    );
    c.observe(400 * MS, Snapshot::default());
    let r = c.report(500 * MS);
    assert_eq!(
        (r.violations, r.total_ns, r.longest_ns),
        (2, 130 * MS, 100 * MS)
    );
    assert_eq!(
        r.result_line(),
        "RESULT {\"kind\":\"invariant\",\"threshold_us\":100000,\"violations\":2,\"idle_while_waiting_us\":130000,\"longest_us\":100000}"
    );
}

#[test]
fn a_violation_that_passes_from_one_task_to_another_is_one() {
    // The idle CPU stays idle; the first long waiter is taken by its own CPU at 150 ms,
    // when another task there has waited 120 ms: the invariant stays broken.
    let mut c = Checker::new(T, 0);
    let all = CpuSet::first(2);
    c.observe(
        0,
        Snapshot {
            idle: CpuSet::one(1),
            waiting: vec![waiting(0, 0, all), waiting(0, 30 * MS, all)],
        },
    );
    c.observe(
        150 * MS,
        Snapshot {
            idle: CpuSet::one(1),
            waiting: vec![waiting(0, 30 * MS, all)],
        },
    );
    let r = c.report(200 * MS);
    assert_eq!((r.violations, r.total_ns), (1, 100 * MS));
}
