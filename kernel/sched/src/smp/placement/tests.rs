//! Placement at fork, exec and wake-up on QEMU-shaped machines.

use super::*;
use crate::smp::busiest::steady;
use crate::smp::domains::{Domain, build_2_6_24};
use crate::smp::topology::Topology;
use alloc::vec;
use alloc::vec::Vec;

fn all_domains(t: &Topology) -> Vec<Vec<Domain>> {
    (0..t.len()).map(|c| build_2_6_24(t, c)).collect()
}

/// The QEMU machine: 8 CPUs in 4 nodes of one package each.
fn four_nodes() -> Topology {
    let nodes: Vec<CpuSet> = (0..4).map(|n| CpuSet::from_bits(0b11 << (2 * n))).collect();
    Topology::smp(4, 2, 1).with_nodes(
        &nodes,
        vec![
            vec![10, 20, 20, 20],
            vec![20, 10, 30, 20],
            vec![20, 30, 10, 20],
            vec![30, 20, 20, 10]
                .into_iter()
                .map(|d| if d == 30 { 20 } else { d })
                .collect(),
        ],
    )
}

#[test]
fn a_child_stays_on_its_parent_s_cpu_without_numa() {
    // 2.6.24 on x86_64: only NODE balances at fork; a plain SMP machine has no NODE level.
    let t = Topology::flat(4);
    let doms = all_domains(&t);
    let stats = steady(&[3, 0, 0, 0]);
    assert_eq!(
        balance_self(0, Flags::BALANCE_FORK, t.all(), &stats, |c| &doms[c]),
        0
    );
    // Exec balancing is on at every level: the exec'ing task goes to an idle CPU (its own
    // CPU's low guess 3072 against an idle CPU's 0).
    assert_eq!(
        balance_self(0, Flags::BALANCE_EXEC, t.all(), &stats, |c| &doms[c]),
        1
    );
}

#[test]
fn on_numa_a_child_goes_to_the_least_loaded_node_then_its_least_loaded_cpu() {
    // Node 0 (CPUs 0-1) runs four tasks, node 1 two, nodes 2 and 3 one and none: the
    // child of a task on CPU 0 goes to node 3 (the least loaded), to its first idle CPU.
    let t = four_nodes();
    let doms = all_domains(&t);
    let stats = steady(&[2, 2, 1, 1, 1, 0, 0, 0]);
    let cpu = balance_self(0, Flags::BALANCE_FORK, t.all(), &stats, |c| &doms[c]);
    assert_eq!(cpu, 6);
    // Allowed only on node 0 and 1: the lighter of the two, node 1 (2048 < 4096/1.12).
    let allowed = CpuSet::from_bits(0b1111);
    let cpu = balance_self(0, Flags::BALANCE_FORK, allowed, &stats, |c| &doms[c]);
    assert_eq!(cpu, 2);
}

#[test]
fn a_wake_up_goes_to_the_waker_when_both_cpus_are_light() {
    // Two plain CPUs: the wakee last ran on CPU 1 (idle now), the waker runs alone on
    // CPU 0. CPU 0's high guess (1024) is above CPU 1's (0), so the first affine test
    // fails; the second: 100 × (1024 + 1024) <= 112 × 0 fails too — it stays on CPU 1.
    let t = Topology::flat(2);
    let doms = all_domains(&t);
    let w = Wake {
        prev: 1,
        this_cpu: 0,
        allowed: t.all(),
        weight: 1024,
        sync_waker_weight: None,
        hot: false,
    };
    assert_eq!(
        select_wake_cpu(&w, &steady(&[1, 0]), false, |c| &doms[c]),
        1
    );
    // A synchronous wake-up of a cache-cold task: pulled to the waker's CPU at once.
    let sync = Wake {
        sync_waker_weight: Some(1024),
        ..w
    };
    assert_eq!(
        select_wake_cpu(&sync, &steady(&[1, 0]), false, |c| &doms[c]),
        0
    );
    // The wakee's CPU busy with three tasks, the waker's with one: 100 × (1024 + 1024)
    // = 204 800 <= 112 × 3072 = 344 064 — affine: the waker's CPU.
    assert_eq!(
        select_wake_cpu(&w, &steady(&[1, 3]), false, |c| &doms[c]),
        0
    );
    // Not allowed on the waker's CPU: its previous one.
    let pinned = Wake {
        allowed: CpuSet::one(1),
        ..w
    };
    assert_eq!(
        select_wake_cpu(&pinned, &steady(&[1, 3]), false, |c| &doms[c]),
        1
    );
}

#[test]
fn with_hyperthreads_a_task_placed_beside_one_busy_task_finds_an_idle_sibling() {
    // One package of two cores of two threads. The task wakes on CPU 0, which runs one
    // task: its sibling CPU 1 is idle — there; if CPU 1 is busy too, the first idle CPU of
    // the package (MC), CPU 3.
    let t = Topology::smp(1, 2, 2);
    let doms = all_domains(&t);
    let w = Wake {
        prev: 0,
        this_cpu: 0,
        allowed: t.all(),
        weight: 1024,
        sync_waker_weight: None,
        hot: true,
    };
    assert_eq!(
        select_wake_cpu(&w, &steady(&[1, 0, 1, 0]), true, |c| &doms[c]),
        1
    );
    assert_eq!(
        select_wake_cpu(&w, &steady(&[1, 1, 1, 0]), true, |c| &doms[c]),
        3
    );
    // A CPU with two tasks already is left as it is (its queue is the balancer's).
    assert_eq!(
        select_wake_cpu(&w, &steady(&[2, 0, 0, 0]), true, |c| &doms[c]),
        0
    );
}
