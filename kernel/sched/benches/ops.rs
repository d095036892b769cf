//! Cost of the scheduler's hot operations as the runqueue grows: one cycle is a task waking
//! (enqueue), going back to sleep (dequeue), and a context switch (put_prev + pick_next), with
//! 10 to 100 000 runnable tasks, for CFS without and with per-uid groups, EEVDF and O(1).
//! Run with `make bench` (`cargo bench -p sched`); divide a cycle by four for one operation.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use sched::{Era, Fair, FairParams, Grouping, O1, Policy, Wakeup};
use std::hint::black_box;
use std::time::Duration;

const SIZES: [usize; 5] = [10, 100, 1_000, 10_000, 100_000];

/// A policy with `n` runnable nice-0 tasks (spread over 8 uids), one of them running, and
/// one extra sleeping task (id `n`) to wake and put back to sleep.
fn loaded<P: Policy>(mut policy: P, n: usize) -> P {
    for task in 0..=n {
        policy.spawn(task, (task % 8) as u32, 0, 0);
    }
    policy.dequeue(n, 0);
    policy.pick_next(0);
    policy
}

fn cycle<P: Policy>(policy: &mut P, sleeper: usize, now: u64) {
    policy.enqueue(sleeper, Wakeup::default(), now);
    policy.dequeue(sleeper, now);
    let current = policy.current().unwrap();
    policy.put_prev(current, now);
    black_box(policy.pick_next(now));
}

fn bench_policy<P: Policy>(c: &mut Criterion, name: &str, make: impl Fn() -> P) {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for n in SIZES {
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            let mut policy = loaded(make(), n);
            let mut now = 0;
            b.iter(|| {
                now += 1_000;
                cycle(&mut policy, n, now);
            });
        });
    }
    group.finish();
}

fn fair(era: Era, grouping: Grouping) -> Fair {
    let mut params = FairParams::preset(era);
    params.grouping = grouping;
    Fair::new(params)
}

fn benches(c: &mut Criterion) {
    bench_policy(c, "cfs-flat", || fair(Era::V2_6_36, Grouping::None));
    bench_policy(c, "cfs-grouped", || fair(Era::V2_6_36, Grouping::Uid));
    bench_policy(c, "eevdf", || fair(Era::V6_6, Grouping::None));
    bench_policy(c, "o1", || O1::new(1_000_000));
}

criterion_group!(ops, benches);
criterion_main!(ops);
