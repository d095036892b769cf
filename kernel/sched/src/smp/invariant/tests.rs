//! The checker on made-up timelines of two and three CPUs.

use super::*;
use alloc::vec;

const MS: u64 = 1_000_000;
const T: u64 = 100 * MS;

fn waiting(cpu: usize, allowed: CpuSet) -> Waiting {
    Waiting { cpu, allowed }
}

fn snap(idle: CpuSet, waiting: Vec<Waiting>) -> Snapshot {
    Snapshot { idle, waiting }
}

#[test]
fn an_idle_cpu_beside_waiting_work_past_the_threshold_is_a_violation() {
    // CPU 1 idle; tasks wait on CPU 0 from 50 ms (taking turns: the stretch goes on while
    // any waits) until CPU 1 takes one at 400 ms: 350 ms wasted.
    let mut c = Checker::new(T);
    let all = CpuSet::first(2);
    c.observe(50 * MS, &snap(CpuSet::one(1), vec![waiting(0, all)]));
    c.observe(
        120 * MS,
        &snap(CpuSet::one(1), vec![waiting(0, all), waiting(0, all)]),
    );
    let mid = c.report(300 * MS);
    assert_eq!(
        (mid.violations, mid.total_ns),
        (1, 250 * MS),
        "counted as it runs"
    );
    c.observe(400 * MS, &Snapshot::default());
    let r = c.report(1000 * MS);
    assert_eq!(
        (r.violations, r.total_ns, r.longest_ns),
        (1, 350 * MS, 350 * MS)
    );
}

#[test]
fn short_stretches_pinned_tasks_and_busy_machines_break_nothing() {
    let mut c = Checker::new(T);
    // 99 ms beside an idle CPU.
    c.observe(0, &snap(CpuSet::one(1), vec![waiting(0, CpuSet::first(2))]));
    c.observe(99 * MS, &Snapshot::default());
    // A task pinned to its CPU.
    c.observe(
        100 * MS,
        &snap(CpuSet::one(1), vec![waiting(0, CpuSet::one(0))]),
    );
    // No CPU idle.
    c.observe(
        500 * MS,
        &snap(CpuSet::EMPTY, vec![waiting(0, CpuSet::first(2))]),
    );
    let r = c.report(900 * MS);
    assert_eq!((r.violations, r.total_ns), (0, 0));
}

#[test]
fn two_violations_are_counted_apart_and_the_longest_kept() {
    let mut c = Checker::new(T);
    let all = CpuSet::first(3);
    c.observe(0, &snap(CpuSet::one(2), vec![waiting(0, all)]));
    c.observe(130 * MS, &snap(CpuSet::one(2), vec![]));
    c.observe(200 * MS, &snap(CpuSet::one(2), vec![waiting(1, all)]));
    c.observe(400 * MS, &Snapshot::default());
    let r = c.report(500 * MS);
    assert_eq!(
        (r.violations, r.total_ns, r.longest_ns),
        (2, 330 * MS, 200 * MS)
    );
    // CPU 2 idled beside a waiting task for 130 + 200 ms: 330 ms of CPU wasted, as long
    // as the violations here.
    assert_eq!(
        r.result_line(),
        "RESULT {\"kind\":\"invariant\",\"threshold_us\":100000,\"violations\":2,\"idle_while_waiting_us\":330000,\"longest_us\":200000,\"wasted_cpu_us\":330000}"
    );
}

#[test]
fn wasted_cpu_time_counts_short_stretches_and_each_idle_cpu_work_could_use() {
    // Four CPUs. 0–10 ms: CPUs 2 and 3 idle beside three tasks waiting on CPU 0 — two
    // idle CPUs could be put to work: 20 ms wasted. 10–15 ms: only one task waits, and
    // only one of the two idle CPUs could take it: 5 ms. 15–40 ms: the task waiting is
    // pinned to its CPU: nothing. None of it past the threshold: no violation.
    let mut c = Checker::new(T);
    let all = CpuSet::first(4);
    let idle = CpuSet::one(2).with(3);
    c.observe(0, &snap(idle, vec![waiting(0, all); 3]));
    c.observe(10 * MS, &snap(idle, vec![waiting(0, all)]));
    c.observe(15 * MS, &snap(idle, vec![waiting(0, CpuSet::one(0))]));
    let r = c.report(40 * MS);
    assert_eq!((r.violations, r.wasted_cpu_ns), (0, 25 * MS));
}
