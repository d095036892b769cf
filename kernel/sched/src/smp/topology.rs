//! The machine's shape, as the scheduler sees it: which CPUs are hyperthreads of one core
//! (SMT), cores of one package sharing its last-level cache (MC), CPUs of one NUMA node,
//! and the distance between nodes (ACPI's SLIT, as Linux's `node_distance`: 10 within a
//! node, more across).
//!
//! CPUs are numbered as QEMU numbers them for `-smp sockets=S,cores=C,threads=T`: threads
//! of a core first, then cores of a package, then packages — CPU
//! `(socket × C + core) × T + thread`. A package is taken to share one last-level cache, as
//! QEMU's x86 models describe it, so the cores of a package form the MC level (Linux 2.6.24
//! spans MC by `llc_shared_map`). NUMA nodes are sets of CPUs, as `-numa node,cpus=`.

use super::cpuset::{CpuSet, MAX_CPUS};
use alloc::vec;
use alloc::vec::Vec;

/// Where one CPU sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuPlace {
    /// Its core (unique across the machine): CPUs of one core are SMT siblings.
    pub core: usize,
    /// Its package (socket).
    pub package: usize,
    /// Its NUMA node.
    pub node: usize,
}

/// The distance Linux gives a node from itself (`LOCAL_DISTANCE`).
pub const LOCAL_DISTANCE: u32 = 10;
/// The distance it gives two nodes when the firmware says nothing (`REMOTE_DISTANCE`).
pub const REMOTE_DISTANCE: u32 = 20;

/// A machine's CPUs, cores, packages and nodes (see the module's docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    cpus: Vec<CpuPlace>,
    /// `distance[a][b]`, from node `a` to node `b`.
    distance: Vec<Vec<u32>>,
}

impl Topology {
    /// `sockets` packages of `cores` cores of `threads` threads each, in one NUMA node
    /// (QEMU's `-smp sockets=,cores=,threads=`).
    pub fn smp(sockets: usize, cores: usize, threads: usize) -> Topology {
        let n = sockets * cores * threads;
        assert!(n > 0 && n <= MAX_CPUS, "{n} CPUs: 1 to {MAX_CPUS}");
        let cpus = (0..n)
            .map(|cpu| CpuPlace {
                core: cpu / threads,
                package: cpu / (cores * threads),
                node: 0,
            })
            .collect();
        Topology {
            cpus,
            distance: vec![vec![LOCAL_DISTANCE]],
        }
    }

    /// `n` CPUs, each a core of its own, in one package: QEMU's plain `-smp N`.
    pub fn flat(n: usize) -> Topology {
        Topology::smp(1, n, 1)
    }

    /// The same CPUs in the NUMA nodes `nodes` (node `i` holds `nodes[i]`; together they
    /// hold every CPU once), `distance[a][b]` apart (QEMU's `-numa node,cpus=` and `-numa
    /// dist`). A node must not split a core.
    pub fn with_nodes(mut self, nodes: &[CpuSet], distance: Vec<Vec<u32>>) -> Topology {
        assert_eq!(distance.len(), nodes.len(), "a distance row per node");
        for (a, row) in distance.iter().enumerate() {
            assert_eq!(row.len(), nodes.len(), "a distance per node pair");
            assert_eq!(
                row[a], LOCAL_DISTANCE,
                "a node is {LOCAL_DISTANCE} from itself"
            );
        }
        assert!(
            nodes.iter().all(|n| !n.is_empty()),
            "every node has a CPU (cfslab models no CPU-less node)"
        );
        let all = nodes.iter().fold(CpuSet::EMPTY, |acc, &n| acc | n);
        assert_eq!(all, self.all(), "the nodes hold every CPU");
        assert_eq!(
            nodes.iter().map(|n| n.len()).sum::<usize>(),
            self.cpus.len(),
            "no CPU in two nodes"
        );
        for (node, set) in nodes.iter().enumerate() {
            for cpu in set.iter() {
                self.cpus[cpu].node = node;
            }
        }
        for cpu in 0..self.cpus.len() {
            let node = self.cpus[cpu].node;
            assert!(
                self.smt_siblings(cpu)
                    .iter()
                    .all(|s| self.cpus[s].node == node),
                "node {node} splits CPU {cpu}'s core"
            );
        }
        self.distance = distance;
        self
    }

    /// The machine the firmware describes: each CPU's place (its core and package numbered
    /// as the firmware numbers them, its node counted from 0), and the nodes' distances
    /// (none: one node). Unlike the constructors above, which assert their inputs, this
    /// refuses a shape no scheduler could balance over, with the reason.
    pub fn from_places(
        cpus: Vec<CpuPlace>,
        distance: Vec<Vec<u32>>,
    ) -> Result<Topology, &'static str> {
        if cpus.is_empty() || cpus.len() > MAX_CPUS {
            return Err("no CPU, or more than cfslab schedules");
        }
        let nodes = cpus.iter().map(|c| c.node).max().unwrap_or(0) + 1;
        let distance = if distance.is_empty() && nodes == 1 {
            vec![vec![LOCAL_DISTANCE]]
        } else {
            distance
        };
        if distance.len() != nodes || distance.iter().any(|row| row.len() != nodes) {
            return Err("the node distances do not cover the CPUs' nodes");
        }
        if (0..nodes).any(|a| (0..nodes).any(|b| (distance[a][b] == LOCAL_DISTANCE) != (a == b))) {
            return Err("a node is not 10 from itself alone");
        }
        if (0..nodes).any(|n| cpus.iter().all(|c| c.node != n)) {
            return Err("a node has no CPU");
        }
        let splits = |a: &CpuPlace, b: &CpuPlace| {
            a.core == b.core && (a.node != b.node || a.package != b.package)
        };
        if cpus.iter().any(|a| cpus.iter().any(|b| splits(a, b))) {
            return Err("a core's threads are in two nodes or packages");
        }
        // The domains nest — a package's cores, then a node's packages — as on the
        // machines 2.6.24 built them for; a package across nodes would not.
        let across = |a: &CpuPlace, b: &CpuPlace| a.package == b.package && a.node != b.node;
        if cpus.iter().any(|a| cpus.iter().any(|b| across(a, b))) {
            return Err("a package's cores are in two nodes");
        }
        Ok(Topology { cpus, distance })
    }

    /// The Wasted Cores paper's machine size: 64 CPUs in 8 NUMA nodes of 8 (one package
    /// each), the nodes on a ring — neighbours 16 apart, the others 22 (a simple stand-in:
    /// the Opteron's own distances are the lab's).
    pub fn eight_nodes_of_eight() -> Topology {
        let nodes: Vec<CpuSet> = (0..8).map(|n| CpuSet::from_bits(0xff << (8 * n))).collect();
        let ring = |a: usize, b: usize| match a.abs_diff(b) {
            0 => LOCAL_DISTANCE,
            1 | 7 => 16,
            _ => 22,
        };
        let distance = (0..8)
            .map(|a| (0..8).map(|b| ring(a, b)).collect())
            .collect();
        Topology::smp(8, 8, 1).with_nodes(&nodes, distance)
    }

    /// The Wasted Cores paper's machine (its Table 5 and Figure 4): four AMD Opteron 6272
    /// sockets of two dies, eight NUMA nodes of eight cores, each die with its own
    /// last-level cache (a package here), on HyperTransport links one or two hops apart —
    /// 16 and 22 as such machines' firmware gives them. The paper names node 0's one-hop
    /// neighbours (1, 2, 4, 6) and node 3's (1, 2, 4, 5, 7), and nodes 1 and 2 as two hops
    /// apart (§3.2); the other pairs are cfslab's choice, consistent with those
    /// (docs/wasted-cores.md).
    pub fn opteron_6272() -> Topology {
        const HOPS: [[u8; 8]; 8] = [
            [0, 1, 1, 2, 1, 2, 1, 2],
            [1, 0, 2, 1, 2, 1, 1, 2],
            [1, 2, 0, 1, 1, 2, 2, 1],
            [2, 1, 1, 0, 1, 1, 2, 1],
            [1, 2, 1, 1, 0, 1, 2, 2],
            [2, 1, 2, 1, 1, 0, 2, 1],
            [1, 1, 2, 2, 2, 2, 0, 1],
            [2, 2, 1, 1, 2, 1, 1, 0],
        ];
        let nodes: Vec<CpuSet> = (0..8).map(|n| CpuSet::from_bits(0xff << (8 * n))).collect();
        let distance = HOPS
            .iter()
            .map(|row| {
                row.iter()
                    .map(|&h| [LOCAL_DISTANCE, 16, 22][h as usize])
                    .collect()
            })
            .collect();
        Topology::smp(8, 8, 1).with_nodes(&nodes, distance)
    }

    /// `nodes` NUMA nodes of one package of `cores` cores each, on a ring: 10 more per hop
    /// the short way round (as `boot --numa` lays them out), so that four nodes have
    /// two-hop pairs.
    pub fn ring_of_nodes(nodes: usize, cores: usize) -> Topology {
        let node_bits = (1u64 << cores) - 1;
        let sets: Vec<CpuSet> = (0..nodes)
            .map(|n| CpuSet::from_bits(node_bits << (cores * n)))
            .collect();
        let hops = |a: usize, b: usize| a.abs_diff(b).min(nodes - a.abs_diff(b)) as u32;
        let distance = (0..nodes)
            .map(|a| {
                (0..nodes)
                    .map(|b| LOCAL_DISTANCE + 10 * hops(a, b))
                    .collect()
            })
            .collect();
        Topology::smp(nodes, cores, 1).with_nodes(&sets, distance)
    }

    /// How many CPUs.
    pub fn len(&self) -> usize {
        self.cpus.len()
    }

    /// Whether the machine has no CPU (never: every constructor asks for one).
    pub fn is_empty(&self) -> bool {
        self.cpus.is_empty()
    }

    /// Every CPU.
    pub fn all(&self) -> CpuSet {
        CpuSet::first(self.cpus.len())
    }

    /// Where `cpu` sits.
    pub fn place(&self, cpu: usize) -> CpuPlace {
        self.cpus[cpu]
    }

    fn cpus_where(&self, same: impl Fn(&CpuPlace) -> bool) -> CpuSet {
        (0..self.cpus.len())
            .filter(|&c| same(&self.cpus[c]))
            .collect()
    }

    /// The hyperthreads of `cpu`'s core, itself included (Linux's `cpu_sibling_map`).
    pub fn smt_siblings(&self, cpu: usize) -> CpuSet {
        let core = self.cpus[cpu].core;
        self.cpus_where(|p| p.core == core)
    }

    /// The CPUs sharing `cpu`'s last-level cache: its package's (`cpu_coregroup_map`).
    pub fn package_cpus(&self, cpu: usize) -> CpuSet {
        let package = self.cpus[cpu].package;
        self.cpus_where(|p| p.package == package)
    }

    /// How many NUMA nodes.
    pub fn nodes(&self) -> usize {
        self.distance.len()
    }

    /// The CPUs of node `node` (`node_to_cpumask`).
    pub fn node_cpus(&self, node: usize) -> CpuSet {
        self.cpus_where(|p| p.node == node)
    }

    /// The distance from node `a` to node `b` (`node_distance`).
    pub fn distance(&self, a: usize, b: usize) -> u32 {
        self.distance[a][b]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qemu_numbers_threads_then_cores_then_packages() {
        // -smp 8,sockets=2,cores=2,threads=2
        let t = Topology::smp(2, 2, 2);
        assert_eq!(t.len(), 8);
        assert_eq!(t.smt_siblings(5), CpuSet::from_bits(0b0011_0000));
        assert_eq!(t.package_cpus(5), CpuSet::from_bits(0b1111_0000));
        assert_eq!(t.node_cpus(0), t.all());
        assert_eq!(
            t.place(6),
            CpuPlace {
                core: 3,
                package: 1,
                node: 0
            }
        );
    }

    #[test]
    fn nodes_take_their_cpus_and_distances() {
        let t = Topology::smp(4, 2, 1).with_nodes(
            &[
                CpuSet::from_bits(0b0000_0011),
                CpuSet::from_bits(0b0000_1100),
                CpuSet::from_bits(0b0011_0000),
                CpuSet::from_bits(0b1100_0000),
            ],
            vec![
                vec![10, 20, 20, 30],
                vec![20, 10, 30, 20],
                vec![20, 30, 10, 20],
                vec![30, 20, 20, 10],
            ],
        );
        assert_eq!(t.nodes(), 4);
        assert_eq!(t.place(5).node, 2);
        assert_eq!(t.distance(1, 2), 30);
    }

    #[test]
    #[should_panic(expected = "splits")]
    fn a_node_may_not_split_a_core() {
        Topology::smp(1, 2, 2).with_nodes(
            &[CpuSet::from_bits(0b0001), CpuSet::from_bits(0b1110)],
            vec![vec![10, 20], vec![20, 10]],
        );
    }

    #[test]
    #[should_panic(expected = "65 CPUs: 1 to 64")]
    fn the_simulator_refuses_more_cpus_than_a_cpu_set_holds() {
        // The simulator's machines are built here; a CPU set is one 64-bit word.
        Topology::flat(65);
    }

    #[test]
    fn the_firmware_s_places_build_the_same_machine_or_are_refused() {
        // QEMU's `-smp 4,sockets=2,cores=1,threads=2` in two nodes, as CPUID and the SRAT
        // and SLIT give it: APIC ids 0–3, one bit of thread, the rest the core's.
        let place = |apic: usize| CpuPlace {
            core: apic >> 1,
            package: apic >> 1,
            node: apic >> 1,
        };
        let two = vec![vec![10, 20], vec![20, 10]];
        let t = Topology::from_places((0..4).map(place).collect(), two.clone()).unwrap();
        let expected = Topology::smp(2, 1, 2).with_nodes(
            &[CpuSet::from_bits(0b0011), CpuSet::from_bits(0b1100)],
            two.clone(),
        );
        assert_eq!(t, expected);
        // One node needs no distances.
        let one = |cpu| CpuPlace {
            core: cpu,
            package: 0,
            node: 0,
        };
        let flat = Topology::from_places((0..3).map(one).collect(), Vec::new());
        assert_eq!(flat, Ok(Topology::flat(3)));
        // A core split between nodes, a node without its distances, a node farther than
        // itself from itself: refused, not asserted.
        let mut split: Vec<CpuPlace> = (0..4).map(place).collect();
        split[1].node = 1;
        assert!(Topology::from_places(split, two.clone()).is_err());
        assert!(Topology::from_places((0..4).map(place).collect(), Vec::new()).is_err());
        let mut one_package: Vec<CpuPlace> = (0..4).map(place).collect();
        one_package.iter_mut().for_each(|p| p.package = 0);
        assert!(Topology::from_places(one_package, two.clone()).is_err());
        let far = vec![vec![10, 20], vec![20, 20]];
        assert!(Topology::from_places((0..4).map(place).collect(), far).is_err());
    }
}
