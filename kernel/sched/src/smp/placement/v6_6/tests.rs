//! 6.6's wake-up, fork and exec placement against worked cases (4 CPUs of one package:
//! one last-level cache, MC's `imbalance_pct` 117).

use super::*;
use crate::smp::busiest::CpuStat;
use crate::smp::domains::{Rules, build};
use crate::smp::topology::Topology;
use alloc::vec::Vec;

/// `n` hogs on a CPU, long running: load n × 1024, all of it used.
fn hogs(n: u32) -> CpuStat {
    let w = u64::from(n) * 1024;
    CpuStat {
        load: w,
        nr_running: n,
        idle: n == 0,
        util: if n > 0 { 1024 } else { 0 },
        runnable: w,
        ..CpuStat::default()
    }
}

fn domains(t: &Topology) -> Vec<Vec<Domain>> {
    (0..t.len()).map(|c| build(t, c, Rules::V6_6)).collect()
}

fn wake(prev: usize, this_cpu: usize, sync: bool) -> Wake {
    Wake {
        prev,
        this_cpu,
        allowed: CpuSet::first(4),
        task_load: 1024,
        sync_waker_load: sync.then_some(1024),
    }
}

#[test]
fn an_idle_waker_cpu_or_an_idle_previous_cpu_is_taken() {
    let t = Topology::flat(4);
    let d = domains(&t);
    // The waker's CPU 1 is idle (its waker slept) and shares the cache: the wakee, last on
    // busy CPU 0, comes to it.
    let stats = [hogs(1), hogs(0), hogs(1), hogs(1)];
    assert_eq!(select_wake_cpu(&wake(0, 1, false), &stats, |c| &d[c]), 1);
    // Its previous CPU is idle too: it goes back there (warm cache).
    let stats = [hogs(0), hogs(0), hogs(1), hogs(1)];
    assert_eq!(select_wake_cpu(&wake(0, 1, false), &stats, |c| &d[c]), 0);
    // A synchronous waker alone on its CPU: the wakee takes its place.
    let stats = [hogs(2), hogs(1), hogs(1), hogs(1)];
    assert_eq!(select_wake_cpu(&wake(0, 1, true), &stats, |c| &d[c]), 1);
}

#[test]
fn by_weight_a_busier_previous_cpu_gives_the_wakee_to_the_waker() {
    // Neither CPU idle. Waker's CPU 1 runs one hog (1024), the wakee's CPU 0 three (3072,
    // the wakee's 1024 among them). With the task, CPU 1 would weigh 2048 × 100; CPU 0
    // without it 2048 × 108 (half of 117's margin): 204 800 < 221 184, so CPU 1. With CPU 0
    // at two hogs, 1024 × 108 < 204 800: it stays on CPU 0. Every CPU busy, so
    // `select_idle_sibling` keeps the choice.
    let t = Topology::flat(4);
    let d = domains(&t);
    let stats = [hogs(3), hogs(1), hogs(1), hogs(1)];
    assert_eq!(select_wake_cpu(&wake(0, 1, false), &stats, |c| &d[c]), 1);
    let stats = [hogs(2), hogs(1), hogs(1), hogs(1)];
    assert_eq!(select_wake_cpu(&wake(0, 1, false), &stats, |c| &d[c]), 0);
}

#[test]
fn a_busy_cache_is_not_searched_for_its_idle_cpu() {
    // SIS_UTIL: the cache's CPUs average x of 1024 used; a wake-up may look at
    // (1024 − min(x² × 117² / 10 240 000, 1024)) × 4 / 1024 CPUs. Three hogs on four CPUs:
    // x = 768, 788 used, 0.92 → no CPU: the wakee stays on busy CPU 0 although CPU 3 idles.
    // Two: x = 512, 350 used, 2.6 → two CPUs looked at, from the one after the target: CPU
    // 1 (busy), then CPU 2 (idle).
    let t = Topology::flat(4);
    let d = domains(&t);
    let w = Wake {
        allowed: CpuSet::first(4),
        ..wake(0, 0, false)
    };
    let stats = [hogs(2), hogs(1), hogs(1), hogs(0)];
    assert_eq!(select_wake_cpu(&w, &stats, |c| &d[c]), 0);
    let stats = [hogs(2), hogs(1), hogs(0), hogs(0)];
    assert_eq!(select_wake_cpu(&w, &stats, |c| &d[c]), 2);
    // A third CPU busy at 600: x = 662, 585 used, 1.7 → one CPU looked at (CPU 1, busy);
    // idle CPU 3 is past the scan.
    let light = CpuStat {
        util: 600,
        ..hogs(1)
    };
    let stats = [hogs(2), hogs(1), light, hogs(0)];
    assert_eq!(select_wake_cpu(&w, &stats, |c| &d[c]), 0);
}

#[test]
fn with_hyperthreads_a_whole_idle_core_comes_first() {
    // Two cores of two threads. CPU 1 (core 0) and CPUs 2 and 3 (core 1) idle, the wakee
    // last on CPU 0, busy, woken from it: an idle core exists, so the scan looks for one
    // and takes CPU 2 — not CPU 1, the busy core's other thread.
    let t = Topology::smp(1, 2, 2);
    let d = domains(&t);
    let stats = [hogs(2), hogs(0), hogs(0), hogs(0)];
    let w = Wake {
        allowed: CpuSet::first(4),
        ..wake(0, 0, false)
    };
    assert_eq!(select_wake_cpu(&w, &stats, |c| &d[c]), 2);
    // No idle core: the previous CPU's idle sibling.
    let stats = [hogs(2), hogs(0), hogs(1), hogs(1)];
    assert_eq!(select_wake_cpu(&w, &stats, |c| &d[c]), 1);
}

#[test]
fn a_fork_goes_to_an_idle_cpu_and_an_exec_alone_stays() {
    let t = Topology::flat(4);
    let d = domains(&t);
    let fork = Flags::BALANCE_FORK;
    // The parent's CPU 0 runs it (fully busy); the others are idle and have spare
    // capacity, a lower type: the child goes to the first of them.
    let stats = [hogs(1), hogs(0), hogs(0), hogs(1)];
    assert_eq!(
        find_idlest_cpu(
            0,
            fork,
            CpuSet::first(4),
            None,
            &stats,
            |c| &d[c],
            |_, _| false
        ),
        1
    );
    // Affinity: CPU 2 only among the idle ones.
    let allowed = CpuSet::first(1).with(2);
    assert_eq!(
        find_idlest_cpu(0, fork, allowed, None, &stats, |c| &d[c], |_, _| false),
        2
    );
    // An exec alone on CPU 0: without it CPU 0 is idle, as idle as any other group —
    // it stays (warm caches).
    let exec = Flags::BALANCE_EXEC;
    let leaving = Leaving {
        cpu: 0,
        load: 1024,
        util: 1024,
    };
    let got = find_idlest_cpu(
        0,
        exec,
        CpuSet::first(4),
        Some(leaving),
        &stats,
        |c| &d[c],
        |_, _| false,
    );
    assert_eq!(got, 0);
}

#[test]
fn a_fork_keeps_away_from_a_group_marked_imbalanced() {
    // Two packages of two CPUs; the parent runs on CPU 0, CPUs 1 to 3 idle. At the top
    // level package {2, 3} has two idle CPUs to package {0, 1}'s one: both have spare
    // capacity, and the child goes to the one with more idle CPUs, CPU 2. Marked
    // imbalanced, package {2, 3} is of a type above "spare capacity" — placement never
    // takes such a group for the idlest — so the child stays in its parent's package, on
    // its idle CPU 1.
    let t = Topology::smp(2, 2, 1);
    let d = domains(&t);
    let top = d[0].last().expect("domains").topology_level;
    let stats = [hogs(1), hogs(0), hogs(0), hogs(0)];
    let fork = Flags::BALANCE_FORK;
    let place = |marked: &dyn Fn(usize, CpuSet) -> bool| {
        find_idlest_cpu(0, fork, t.all(), None, &stats, |c| &d[c], marked)
    };
    assert_eq!(place(&|_, _| false), 2);
    let other_package = CpuSet::first(4).without(0).without(1);
    assert_eq!(place(&|tl, cpus| tl == top && cpus == other_package), 1);
}
