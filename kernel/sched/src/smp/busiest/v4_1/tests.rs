//! 4.1's `find_busiest_group` and the paper's minimum-load fix against worked numbers: the
//! Group Imbalance case at a NUMA level of two nodes of eight CPUs.

use super::*;
use crate::features::Feature;
use crate::smp::domains::{Level, Rules, build_with};
use crate::smp::topology::Topology;

/// A CPU running `nr` tasks of `load` in all, its utilisation full if it runs any.
fn cpu(nr: u32, load: u64) -> CpuStat {
    CpuStat {
        load,
        nr_running: nr,
        idle: nr == 0,
        util: if nr > 0 { 1024 } else { 0 },
        runnable: load,
        ..CpuStat::default()
    }
}

/// The paper's Figure 2 in small: node 0 runs one hog of a group of its own (load 1024)
/// on CPU 0 and nothing else; every CPU of node 1 runs two jobs of a 64-job `make`, each
/// weighing its group's 1024 shares over 64 busy jobs: 16.
fn hog_beside_make() -> [CpuStat; 16] {
    let mut stats = [cpu(0, 0); 16];
    stats[0] = cpu(1, 1024);
    for s in &mut stats[8..] {
        *s = cpu(2, 2 * 16);
    }
    stats
}

/// CPU `cpu`'s NUMA domain on two nodes of eight, with 6.6's switches changed by `set`.
fn numa(cpu: usize, set: &[(Feature, bool)]) -> Domain {
    let mut features = Rules::V6_6.era_features();
    for &(f, on) in set {
        features.set(f, on);
    }
    let t = Topology::ring_of_nodes(2, 8);
    let d = build_with(&t, cpu, Rules::V6_6, features).pop().unwrap();
    assert_eq!(d.level, Level::Numa);
    d
}

fn v4_1() -> [(Feature, bool); 1] {
    [(Feature::LbGroupTypes, false)]
}

/// 4.1's verdict for CPU 1 beside the hog and the `make` (none marked imbalanced).
fn beside_make(d: &Domain, why: IdleType) -> Verdict {
    find_busiest_group(d, 1, &hog_beside_make(), why, CpuSet::first(16), &[])
}

#[test]
fn an_idle_cpu_beside_a_hog_pulls_nothing_from_a_node_of_waiting_jobs() {
    // CPU 1, idle on node 0. Node 0's average load: 1024 × 1024 / (8 × 1024) = 128; node
    // 1's: 16 × 16 × 1024 / 8192 = 32, though its 16 jobs wait two to a CPU. The domain's:
    // (1024 + 256) × 1024 / 16384 = 80. 4.1's first test — this group's average (128) is
    // at least the busiest's (32) — ends the pass: balanced. Seven CPUs idle while eight
    // jobs wait.
    let d = numa(1, &v4_1());
    let v = beside_make(&d, IdleType::Idle);
    assert_eq!(v, Verdict::Balanced);
    let sv = survey(&d, 1, &hog_beside_make(), CpuSet::first(16), &[]);
    assert_eq!(
        (sv.local.avg_load, sv.busiest.unwrap().1.avg_load, sv.sd_avg),
        (128, 32, 80)
    );
    // Node 1 is overloaded (16 tasks on 8 CPUs, utilisation 8192 × 117 > 8192 × 100), but
    // 4.1 forces a pull on that only for a CPU about to go idle.
    assert!(sv.busiest.unwrap().1.overloaded);
    let v = beside_make(&d, IdleType::NewlyIdle);
    assert!(matches!(v, Verdict::Pull { group: 1, .. }), "{v:?}");
}

#[test]
fn with_the_papers_fix_the_idle_cpu_pulls_half_the_gap_of_minimum_loads() {
    // Node 0's least loaded CPU carries 0, less than node 1's least (32): pull. The
    // imbalance is half the gap between node 1's most loaded CPU and node 0's least:
    // (32 − 0) / 2 = 16, one job.
    let d = numa(
        1,
        &[(Feature::LbGroupTypes, false), (Feature::LbMinLoad, true)],
    );
    let v = beside_make(&d, IdleType::Idle);
    let expected = Verdict::Pull {
        group: 1,
        migration: Migration::Load,
        imbalance: 16,
    };
    assert_eq!(v, expected);
}

#[test]
fn six_six_sees_spare_capacity_beside_an_overloaded_node_and_fills_it() {
    // 6.6 types the groups first: node 0 has spare capacity (1 task, 8 CPUs), node 1 is
    // overloaded, so the pass goes on whatever the averages; above the last-level cache
    // it moves utilisation, node 0's spare: 8192 − 1024 = 7168.
    let d = numa(1, &[]);
    let v = v6_6_fbg(&d);
    let expected = Verdict::Pull {
        group: 1,
        migration: Migration::Util,
        imbalance: 7168,
    };
    assert_eq!(v, expected);
}

fn v6_6_fbg(d: &Domain) -> Verdict {
    super::super::v6_6::find_busiest_group(
        d,
        1,
        &hog_beside_make(),
        IdleType::Idle,
        CpuSet::first(16),
        &[],
    )
}

#[test]
fn a_busy_cpu_pulls_only_past_imbalance_pct_and_then_down_to_the_average() {
    // Two single-CPU groups (an MC domain of two CPUs): CPU 1 runs one hog (1024), CPU 0
    // three (3072). Averages: 1024 and 3072; the domain's 2048. A busy CPU pulls past
    // imbalance_pct (117 at MC): 100 × 3072 > 117 × 1024. The imbalance is the least of
    // the busiest's excess and this CPU's shortfall, × capacity: min(1024, 1024) = 1024.
    let mut features = Rules::V6_6.era_features();
    features.set(Feature::LbGroupTypes, false);
    let d = build_with(&Topology::flat(2), 1, Rules::V6_6, features).remove(0);
    let stats = [cpu(3, 3072), cpu(1, 1024)];
    let v = find_busiest_group(&d, 1, &stats, IdleType::NotIdle, CpuSet::first(2), &[]);
    let expected = Verdict::Pull {
        group: 1,
        migration: Migration::Load,
        imbalance: 1024,
    };
    assert_eq!(v, expected);
    // Two hogs against one: averages 2048 and 1024, domain 1536; the gap, min(512, 512) =
    // 512, is less than one of the busiest's tasks (1024), so fix_small_imbalance decides.
    // The busiest's tasks are no heavier than this CPU's (imbn 2), and with one task's
    // load per unit of capacity (1024) added to both sides, 2048 + 1024 ≥ 1024 + 2 × 1024:
    // one task's load moves. (4.1 lets the odd task take turns on the two CPUs.)
    let stats = [cpu(2, 2048), cpu(1, 1024)];
    let v = find_busiest_group(&d, 1, &stats, IdleType::NotIdle, CpuSet::first(2), &[]);
    assert_eq!(
        v,
        Verdict::Pull {
            group: 1,
            migration: Migration::Load,
            imbalance: 1024,
        }
    );
}

#[test]
fn below_one_task_a_small_imbalance_stands_when_no_single_task_helps() {
    // CPU 0 runs three tasks (1000 + 100 + 100 = 1200), CPU 1 one of 900; CPU 1 is busy.
    // Averages 1200 and 900, the domain's 1050; past imbalance_pct (100 × 1200 > 117 ×
    // 900). The imbalance, min(150, 150), is less than a task of CPU 0's on average (400),
    // so fix_small_imbalance looks: moving one 400 would not narrow the gap enough (1200 +
    // 400 < 900 + 2 × 400), nor use more capacity (1300 before, 1300 after). 4.1 then
    // keeps the 150, which CPU 0's two light tasks can make up.
    let mut features = Rules::V6_6.era_features();
    features.set(Feature::LbGroupTypes, false);
    let d = build_with(&Topology::flat(2), 1, Rules::V6_6, features).remove(0);
    let stats = [cpu(3, 1200), cpu(1, 900)];
    let v = find_busiest_group(&d, 1, &stats, IdleType::NotIdle, CpuSet::first(2), &[]);
    let expected = Verdict::Pull {
        group: 1,
        migration: Migration::Load,
        imbalance: 150,
    };
    assert_eq!(v, expected);
}

#[test]
fn with_the_papers_fix_no_cpu_steals_from_a_group_that_has_an_idle_cpu() {
    // Node 1 as before, but one of its CPUs idle: its least loaded CPU carries 0, no more
    // than node 0's, so node 1 is not busier by the paper's measure — its own idle CPU is
    // the one to take its waiting jobs.
    let d = numa(
        1,
        &[(Feature::LbGroupTypes, false), (Feature::LbMinLoad, true)],
    );
    let mut stats = hog_beside_make();
    stats[15] = cpu(0, 0);
    let v = find_busiest_group(&d, 1, &stats, IdleType::Idle, CpuSet::first(16), &[]);
    assert_eq!(v, Verdict::Balanced);
    // Nor is a group whose CPUs this pass may not look at (all its tasks pinned).
    let v = find_busiest_group(
        &d,
        1,
        &hog_beside_make(),
        IdleType::Idle,
        CpuSet::first(8),
        &[],
    );
    assert_eq!(v, Verdict::Balanced);
}

#[test]
fn a_marked_group_is_pulled_from_though_the_averages_are_even() {
    // 4.1's balancer, two packages of two CPUs, seen by CPU 2 at the top level. Package
    // {0, 1} runs two hogs, both on CPU 1 (CPU 0 may take neither); package {2, 3} one per
    // CPU. Both average 2048 × 1024 / 2048 = 1024, as does the domain: balanced. Marked
    // imbalanced, package {0, 1} is pulled from whatever the averages say. The imbalance
    // itself is still computed from them: below one task, and `fix_small_imbalance` finds
    // no gain in moving one (3072 against 4096 of capacity used) — 0. 4.1 then moves
    // nothing, counts failures, and after enough of them pushes CPU 1's running hog here.
    let mut features = Rules::V6_6.era_features();
    features.set(Feature::LbGroupTypes, false);
    let t = Topology::smp(2, 2, 1);
    let d = &build_with(&t, 2, Rules::V6_6, features)[1];
    assert_eq!(d.groups[1].cpus, CpuSet::first(2));
    let stats = [cpu(0, 0), cpu(2, 2048), cpu(1, 1024), cpu(1, 1024)];
    let verdict =
        |marked: &[bool]| find_busiest_group(d, 2, &stats, IdleType::NotIdle, t.all(), marked);
    assert_eq!(verdict(&[]), Verdict::Balanced);
    let expected = Verdict::Pull {
        group: 1,
        migration: Migration::Load,
        imbalance: 0,
    };
    assert_eq!(verdict(&[false, true]), expected);
}
