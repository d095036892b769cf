//! The domains 2.6.24 builds for QEMU's machines: plain CPUs, packages, hyperthreads, NUMA
//! nodes.

use super::*;
use alloc::vec;

fn shape(domains: &[Domain]) -> Vec<(Level, CpuSet, Vec<CpuSet>)> {
    domains
        .iter()
        .map(|d| (d.level, d.span, d.groups.iter().map(|g| g.cpus).collect()))
        .collect()
}

fn set(cpus: &[usize]) -> CpuSet {
    cpus.iter().copied().collect()
}

#[test]
fn two_plain_cpus_keep_one_level_each_cpu_a_group() {
    // QEMU's -smp 2: MC and CPU span the same two CPUs, and CPU (one group) adds
    // nothing.
    let t = Topology::flat(2);
    assert_eq!(
        shape(&build_2_6_24(&t, 0)),
        [(Level::Mc, set(&[0, 1]), vec![set(&[0]), set(&[1])])]
    );
    // CPU 1's list starts at its own group.
    assert_eq!(
        shape(&build_2_6_24(&t, 1)),
        [(Level::Mc, set(&[0, 1]), vec![set(&[1]), set(&[0])])]
    );
}

#[test]
fn packages_are_the_groups_of_the_cpu_level() {
    // -smp 4,sockets=2,cores=2: cores within a package, then the packages, each with
    // the power of one task (1024): tasks spread over packages first.
    let t = Topology::smp(2, 2, 1);
    let d = build_2_6_24(&t, 2);
    assert_eq!(
        shape(&d),
        [
            (Level::Mc, set(&[2, 3]), vec![set(&[2]), set(&[3])]),
            (
                Level::Cpu,
                set(&[0, 1, 2, 3]),
                vec![set(&[2, 3]), set(&[0, 1])]
            ),
        ]
    );
    assert!(d[1].groups.iter().all(|g| g.power == SCHED_LOAD_SCALE));
    assert_eq!(d[1].params.imbalance_pct, 125);
    assert_eq!(d[0].params.busy_idx, 2);
}

#[test]
fn hyperthreads_make_an_smt_level_and_cores_the_mc_groups() {
    let t = Topology::smp(1, 2, 2);
    let d = build_2_6_24(&t, 1);
    assert_eq!(
        shape(&d),
        [
            (Level::Smt, set(&[0, 1]), vec![set(&[1]), set(&[0])]),
            (
                Level::Mc,
                set(&[0, 1, 2, 3]),
                vec![set(&[0, 1]), set(&[2, 3])]
            ),
        ]
    );
    assert_eq!(d[0].params.imbalance_pct, 110);
    assert!(d[0].params.flags.has(Flags::SHARE_CPUPOWER));
}

#[test]
fn numa_nodes_are_the_groups_of_the_node_level() {
    // The QEMU machine: 8 vCPUs in 4 nodes (one package each), nodes 1 and 2
    // two hops apart. A node is one package, so CPU adds nothing to MC; NODE spans
    // every node (fewer than 16), its groups listed from CPU 2's node on by number, each
    // node one package's power.
    let nodes: Vec<CpuSet> = (0..4).map(|n| set(&[2 * n, 2 * n + 1])).collect();
    let t = Topology::smp(4, 2, 1).with_nodes(
        &nodes,
        vec![
            vec![10, 20, 20, 20],
            vec![20, 10, 30, 20],
            vec![20, 30, 10, 20],
            vec![20, 20, 20, 10],
        ],
    );
    let d = build_2_6_24(&t, 2);
    assert_eq!(
        shape(&d),
        [
            (Level::Mc, set(&[2, 3]), vec![set(&[2]), set(&[3])]),
            (
                Level::Node,
                t.all(),
                vec![nodes[1], nodes[2], nodes[3], nodes[0]]
            ),
        ]
    );
    assert!(d[1].groups.iter().all(|g| g.power == SCHED_LOAD_SCALE));
    assert!(
        d[1].params
            .flags
            .has(Flags::BALANCE_FORK | Flags::SERIALIZE)
    );
}

#[test]
fn a_machine_of_many_small_nodes_gets_an_allnodes_level() {
    // 20 single-CPU packages, each its own node: more than 16 nodes' worth of CPUs.
    // The levels of one CPU (MC, CPU) are dropped.
    let nodes: Vec<CpuSet> = (0..20).map(CpuSet::one).collect();
    let distance = (0..20)
        .map(|a| (0..20).map(|b| if a == b { 10 } else { 20 }).collect())
        .collect();
    let t = Topology::smp(20, 1, 1).with_nodes(&nodes, distance);
    let d = build_2_6_24(&t, 0);
    let levels: Vec<Level> = d.iter().map(|d| d.level).collect();
    assert_eq!(levels, [Level::Node, Level::AllNodes]);
    assert_eq!(d[0].span.len(), 16, "NODE spans 16 nodes at most");
    assert_eq!(d[1].groups.len(), 20);
}

#[test]
fn in_6_6_a_ring_of_four_nodes_gets_a_level_per_distance_with_overlapping_groups() {
    // Four sockets of two cores, a node each, on a ring (20 to a neighbour, 30 across).
    // CPU 5 (node 2): MC over its socket; DIE would span the same node and is dropped;
    // then NUMA at 20 — its node and both neighbours, a node a group, its own first then
    // on from CPU 5 — and at 30, the machine, in groups of a node and its neighbours: its
    // own {1, 2, 3} first, then node 0's {3, 0, 1}, which overlaps it, each balanced for
    // by its central node's CPUs only. Neither level is beyond `RECLAIM_DISTANCE` (30):
    // both still place forks and wake-ups. `imb_numa_nr` is 1: it is counted at DIE,
    // the first level above the cache (one cache: 2 CPUs / 8, at least 1), before DIE
    // is dropped, and the levels above span no more than 1 of the first NUMA level's 6.
    let t = Topology::ring_of_nodes(4, 2);
    let d = build(&t, 5, Rules::V6_6);
    let levels: Vec<Level> = d.iter().map(|d| d.level).collect();
    assert_eq!(levels, [Level::Mc, Level::Numa, Level::Numa]);
    let groups = |d: &Domain| -> Vec<(u64, u64)> {
        d.groups
            .iter()
            .map(|g| (g.cpus.bits(), g.balance.bits()))
            .collect()
    };
    assert_eq!(d[1].span.bits(), 0xfc);
    assert_eq!(groups(&d[1]), [(0x30, 0x30), (0xc0, 0xc0), (0x0c, 0x0c)]);
    assert_eq!(d[2].span.bits(), 0xff);
    assert_eq!(groups(&d[2]), [(0xfc, 0x30), (0xcf, 0x03)]);
    for numa in &d[1..] {
        let f = numa.params.flags;
        assert!(f.has(Flags::NUMA) && f.has(Flags::BALANCE_FORK) && f.has(Flags::WAKE_AFFINE));
        assert!(!f.has(Flags::PREFER_SIBLING));
        assert_eq!((numa.params.cache_nice_tries, numa.imb_numa_nr), (2, 1));
    }
    assert_eq!(d[1].params.min_interval_ms, 6, "a domain of 6 CPUs");
}

#[test]
fn on_the_papers_machine_4_1_builds_every_cpus_top_groups_as_cpu_0_sees_them() {
    // The Wasted Cores paper's §3.2 on its eight nodes: nodes 1 and 2 are two hops apart,
    // so they meet only at the top level, which spans the machine. 4.1 walks that span
    // from CPU 0: the first group is CPU 0's one-hop domain, nodes {0, 1, 2, 4, 6}; the
    // first CPU left out is node 3's, whose one-hop domain {1, 2, 3, 4, 5, 7} covers the
    // rest. A CPU of node 2 gets these two groups too, and nodes 1 and 2 are in both: it
    // can never see node 1 as a group apart. Each group's balance mask is the whole group,
    // so node 0's first idle CPU, not node 2's, balances the first for everyone in it.
    let t = Topology::opteron_6272();
    let nodes = |cpus: CpuSet| -> Vec<usize> {
        let mut n: Vec<usize> = cpus.iter().map(|c| t.place(c).node).collect();
        n.dedup();
        n
    };
    let top = |features: Features| {
        let d = build_with(&t, 16, Rules::V6_6, features).pop().unwrap();
        assert_eq!((d.level, d.span), (Level::Numa, t.all()));
        d.groups
            .iter()
            .map(|g| (nodes(g.cpus), nodes(g.balance)))
            .collect::<Vec<_>>()
    };
    let mut v4_1 = Rules::V6_6.era_features();
    v4_1.set(Feature::NumaGroupsFromSelf, false);
    assert_eq!(
        top(v4_1),
        [
            (vec![0, 1, 2, 4, 6], vec![0, 1, 2, 4, 6]),
            (vec![1, 2, 3, 4, 5, 7], vec![1, 2, 3, 4, 5, 7])
        ]
    );
    // The fix (4.13's, and the paper's): node 2 starts from its own one-hop domain
    // {0, 2, 3, 4, 7}, then from CPU 16 on, the first CPUs left out are node 5's and node
    // 6's. Node 1 is not in this CPU's own group: its load is seen apart, in groups
    // balanced for by the nodes at their centres.
    assert_eq!(
        top(Rules::V6_6.era_features()),
        [
            (vec![0, 2, 3, 4, 7], vec![2]),
            (vec![1, 3, 4, 5, 7], vec![5]),
            (vec![0, 1, 6, 7], vec![6])
        ]
    );
}

#[test]
fn an_offline_cpu_leaves_every_span_and_group_and_levels_left_alone_go() {
    // 8 CPUs in 4 nodes of two on a ring (`boot --smp 8 --numa 4`), 6.6's rules, CPU 1
    // offline. CPU 0's node is CPU 0 alone now: MC would span one CPU and goes; its first
    // NUMA level (nodes 3, 0, 1, one hop) keeps its groups less CPU 1, each group's power
    // the CPUs left in it, and its parameters those of a span of 5 (`sd_init`).
    let t = Topology::ring_of_nodes(4, 2);
    let f = Rules::V6_6.era_features();
    let active = t.all().without(1);
    let full = build_with(&t, 0, Rules::V6_6, f);
    let cut = restrict_to(&t, 0, full.clone(), active);
    assert_eq!(full.len(), cut.len() + 1);
    assert!(
        cut.iter()
            .all(|d| !d.span.contains(1) && d.level == Level::Numa)
    );
    let first = &cut[0];
    assert_eq!(first.span, set(&[0, 2, 3, 6, 7]));
    let groups: Vec<(CpuSet, u64)> = first.groups.iter().map(|g| (g.cpus, g.power)).collect();
    assert_eq!(
        groups,
        [
            (set(&[0]), 1024),
            (set(&[2, 3]), 2048),
            (set(&[6, 7]), 2048)
        ]
    );
    assert_eq!(first.params, params_6_6(Level::Numa, 5, 20));
    // The offline CPU has no domain; with every CPU active nothing changes.
    assert!(restrict_to(&t, 1, full.clone(), active).is_empty());
    assert_eq!(restrict_to(&t, 0, full.clone(), t.all()), full);
}
