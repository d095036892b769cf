//! 2.6.36's wake-up placement against worked numbers.

use super::*;
use crate::smp::busiest::steady;
use crate::smp::domains::build_2_6_36;
use crate::smp::topology::Topology;
use alloc::vec::Vec;

fn all_domains(t: &Topology) -> Vec<Vec<Domain>> {
    (0..t.len()).map(|c| build_2_6_36(t, c)).collect()
}

fn wake(prev: usize, this_cpu: usize, t: &Topology, sync: bool) -> Wake {
    Wake {
        prev,
        this_cpu,
        allowed: t.all(),
        sync_waker_effect: sync.then_some(-1024),
        task_effect: 1024,
    }
}

#[test]
fn a_task_woken_beside_a_hog_goes_to_the_wakers_cpu_only_if_the_waker_sleeps() {
    // Two CPUs, each running one nice-0 task; CPU 1's wakes a task last on CPU 0. Not
    // synchronous: CPU 1 with the task would weigh 100 × (1024 + 1024) against CPU 0's
    // 112 × 1024 — not within the margin — and CPU 1 is not lighter with room to spare:
    // the task stays on CPU 0. Synchronous: the waker's 1024 is taken away, CPU 1 weighs
    // nothing, which is balanced, and it goes to CPU 1 (busy: no idle sibling to take).
    let t = Topology::flat(2);
    let d = all_domains(&t);
    let stats = steady(&[1, 1]);
    assert_eq!(
        select_wake_cpu(&wake(0, 1, &t, false), &stats, |c| &d[c]),
        0
    );
    assert_eq!(select_wake_cpu(&wake(0, 1, &t, true), &stats, |c| &d[c]), 1);
}

#[test]
fn an_idle_sibling_is_searched_only_up_to_the_domain_holding_both_cpus() {
    // Two cores of two threads. A task woken by CPU 0, where it last ran, with CPU 0 busy:
    // the SMT domain {0, 1} holds both CPUs, so the search stops there — CPU 1 if idle,
    // else CPU 0, even with all of core 1 idle.
    let t = Topology::smp(1, 2, 2);
    let d = all_domains(&t);
    let w = wake(0, 0, &t, false);
    assert_eq!(select_wake_cpu(&w, &steady(&[1, 0, 0, 0]), |c| &d[c]), 1);
    assert_eq!(select_wake_cpu(&w, &steady(&[1, 1, 0, 0]), |c| &d[c]), 0);
    // Woken by CPU 2 for a task of CPU 0, not affine (CPU 2 runs two tasks): from CPU 0
    // the walk goes on up to MC, which holds both, and takes its first idle CPU, 3.
    let w = wake(0, 2, &t, false);
    assert_eq!(select_wake_cpu(&w, &steady(&[1, 1, 2, 0]), |c| &d[c]), 3);
}

#[test]
fn a_group_weighs_at_the_root_by_its_share() {
    // A group of 1024 shares holding 512 of them on a CPU where 1024 of its weight is
    // queued, as at the last split. Another nice-0 task there adds 1024 to the queue and
    // to the group: 512 × (1024 × 1024 − 512 × 1024) / (1024 × 1024 + 512 × 1024) = 170.
    let q = GroupHere {
        tg_shares: 1024,
        shares: 512,
        rq_weight: 1024,
        weight: 1024,
    };
    assert_eq!(effective_load(Some(&q), 1024, 1024), 170);
    assert_eq!(effective_load(None, 1024, 1024), 1024);
    assert_eq!(effective_load(Some(&q), 0, 1024), 0, "ASYM_EFF_LOAD");
}
