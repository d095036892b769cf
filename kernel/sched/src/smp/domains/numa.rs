//! 6.6's NUMA levels (`sched_init_numa`, `build_overlap_sched_groups`,
//! `build_balance_mask`, kernel/sched/topology.c).
//!
//! One level per distance the machine has between nodes, nearest first: at the level of
//! distance *d*, a CPU's domain spans the nodes within *d* of its own. (Distance 10, a node
//! to itself, is the NODE level: the node's CPUs, the same span as the level below it, so
//! it is dropped.) The levels stop at the first that spans the machine.
//!
//! Such spans overlap between CPUs of different nodes — node 1's neighbours are not node
//! 0's — so each CPU builds its own groups. Walking its domain's span from itself onwards,
//! each CPU not yet covered brings a group: *its* domain's child at this level, the nodes
//! near it. So a CPU's first group is its own child domain, and groups may overlap. A
//! group's *balance mask* is the CPUs whose own domain at the level has exactly that group
//! below it: the CPUs that would balance for it.
//!
//! 4.1 walked the span from its lowest CPU instead, so every CPU's groups were built as
//! CPU 0 would see them — the Wasted Cores paper's "scheduling group construction" bug;
//! the walk from the CPU itself is the 2017 fix, which 6.6 has.

use super::{Domain, Flags};
use crate::smp::cpuset::CpuSet;
use crate::smp::topology::Topology;
use alloc::vec::Vec;

/// The distinct distances between nodes, nearest first (`sched_domains_numa_distance`).
fn distances(t: &Topology) -> Vec<u32> {
    let mut d: Vec<u32> = (0..t.nodes())
        .flat_map(|a| (0..t.nodes()).map(move |b| (a, b)))
        .map(|(a, b)| t.distance(a, b))
        .collect();
    d.sort_unstable();
    d.dedup();
    d
}

/// The CPUs of the nodes within `distance` of `node` (`sched_domains_numa_masks`).
fn within(t: &Topology, node: usize, distance: u32) -> CpuSet {
    (0..t.nodes())
        .filter(|&n| t.distance(node, n) <= distance)
        .fold(CpuSet::EMPTY, |acc, n| acc | t.node_cpus(n))
}

/// `cpu`'s span at level `k` of `distances` (level 0: its node).
fn span_at(t: &Topology, distances: &[u32], cpu: usize, k: usize) -> CpuSet {
    within(t, t.place(cpu).node, distances[k])
}

/// The group CPU `i` brings to a level-`k` domain spanning `span`: its child domain, or —
/// if that reaches outside `span` (a machine three hops across or more) — the highest of
/// its lower domains that does not (`find_descended_sibling`).
fn group_of(t: &Topology, distances: &[u32], i: usize, k: usize, span: CpuSet) -> CpuSet {
    let mut level = k - 1;
    while level > 0 && !span_at(t, distances, i, level).is_subset(span) {
        level -= 1;
    }
    span_at(t, distances, i, level)
}

/// `cpu`'s NUMA levels on `t`: each level's span, its groups (this CPU's own first, then
/// around the span), and their balance masks. With `from_self` false, 4.1's construction
/// (see the module's docs and [`from_lowest`]).
pub fn levels(
    t: &Topology,
    cpu: usize,
    from_self: bool,
) -> Vec<(CpuSet, Vec<CpuSet>, Vec<CpuSet>)> {
    let distances = distances(t);
    let mut levels = Vec::new();
    for k in 1..distances.len() {
        let span = span_at(t, &distances, cpu, k);
        if !from_self {
            let (groups, masks) = from_lowest(t, &distances, cpu, k, span);
            levels.push((span, groups, masks));
            if span == t.all() {
                break;
            }
            continue;
        }
        let mut covered = CpuSet::EMPTY;
        let (mut groups, mut masks) = (Vec::new(), Vec::new());
        for i in span.iter_from(cpu) {
            if covered.contains(i) {
                continue;
            }
            let group = group_of(t, &distances, i, k, span);
            let mask = group.iter().filter(|&j| {
                let theirs = span_at(t, &distances, j, k);
                group_of(t, &distances, j, k, theirs) == group
            });
            masks.push(mask.fold(CpuSet::EMPTY, |acc, j| acc.with(j)));
            groups.push(group);
            covered = covered | group;
        }
        levels.push((span, groups, masks));
        if span == t.all() {
            break;
        }
    }
    levels
}

/// 4.1's groups of `cpu`'s level-`k` domain (`build_overlap_sched_groups` before the 2017
/// fix): the span walked from its lowest CPU, so that the groups are the same for every
/// CPU of the span — CPU 0's child domain first if it is in it. The CPU's own group is the
/// first that holds it, or the one it is the first CPU of (the list is Linux's circle,
/// entered there); each group's balance mask is the whole group (4.1's `build_group_mask`
/// kept every CPU whose domain at the level exists).
fn from_lowest(
    t: &Topology,
    distances: &[u32],
    cpu: usize,
    k: usize,
    span: CpuSet,
) -> (Vec<CpuSet>, Vec<CpuSet>) {
    let mut covered = CpuSet::EMPTY;
    let mut groups: Vec<CpuSet> = Vec::new();
    let mut own = None;
    for i in span.iter() {
        if covered.contains(i) {
            continue;
        }
        let group = span_at(t, distances, i, k - 1);
        if (own.is_none() && group.contains(cpu)) || group.lowest() == Some(cpu) {
            own = Some(groups.len());
        }
        groups.push(group);
        covered = covered | group;
    }
    groups.rotate_left(own.expect("a group holds the CPU"));
    let masks = groups.clone();
    (groups, masks)
}

/// The farthest node of `span` from `node` (10 on one node).
pub(super) fn max_distance(t: &Topology, node: usize, span: CpuSet) -> u64 {
    let distances = span.iter().map(|c| t.distance(node, t.place(c).node));
    u64::from(distances.max().unwrap_or(10))
}

/// 6.6's `imb_numa_nr` (`build_sched_domains`): at the first level above the last-level
/// cache, the number of caches it spans (or an eighth of its CPUs if one), at least 1;
/// each level above multiplies it by how many times it spans the first NUMA level above
/// that one.
pub(super) fn set_imb_numa_nr(domains: &mut [Domain]) {
    let llc = |d: &Domain| d.params.flags.has(Flags::SHARE_PKG_RESOURCES);
    let mut first: Option<(u64, u64)> = None;
    for i in 1..domains.len() {
        if llc(&domains[i]) {
            continue;
        }
        let span = domains[i].span.len() as u64;
        domains[i].imb_numa_nr = match first {
            None if llc(&domains[i - 1]) => {
                let nr_llcs = span / domains[i - 1].span.len() as u64;
                let imb = if nr_llcs == 1 { span >> 3 } else { nr_llcs }.max(1);
                let numa_span = domains[i + 1..]
                    .iter()
                    .find(|d| d.params.flags.has(Flags::NUMA))
                    .map_or(span, |d| d.span.len() as u64);
                first = Some((imb, numa_span));
                imb
            }
            None => 0,
            Some((imb, numa_span)) => imb * (span / numa_span).max(1),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn a_ring_of_four_nodes_has_a_level_for_each_hop() {
        // From CPU 0 (node 0): at 20 its neighbours 1 and 3, each node a group (the child
        // is the node), its own first then around the span; at 30 every node, in groups of
        // a node and its neighbours — its own {3, 0, 1} first, then node 2's {1, 2, 3},
        // which overlaps it. Of the CPUs in {1, 2, 3}, only node 2's have it below them.
        let t = Topology::ring_of_nodes(4, 2);
        let cpus = |bits: u64| CpuSet::from_bits(bits);
        let levels = levels(&t, 0, true);
        assert_eq!(levels.len(), 2);
        let (span, groups, masks) = &levels[0];
        assert_eq!(*span, cpus(0b1100_0011 | 0b1100));
        assert_eq!(*groups, vec![cpus(0b11), cpus(0b1100), cpus(0b1100_0000)]);
        assert_eq!(masks, groups);
        let (span, groups, masks) = &levels[1];
        assert_eq!(*span, t.all());
        assert_eq!(*groups, vec![cpus(0b1100_1111), cpus(0b1111_1100)]);
        assert_eq!(*masks, vec![cpus(0b11), cpus(0b11_0000)]);
    }
}
