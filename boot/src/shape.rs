//! The machine's shape beyond its CPU count: QEMU's `-smp N,sockets=S,cores=C,threads=T`
//! and NUMA nodes (`--numa NODES`), turned into QEMU's options.
//!
//! `--numa NODES` splits the CPUs into NODES nodes of consecutive CPUs (whole cores each)
//! and the memory evenly between them, and places the nodes on a ring: a node is 10 from
//! itself (ACPI's SLIT convention) and 10 more per hop to another — with four nodes, two
//! pairs are two hops apart, as on the Wasted Cores paper's machine. The kernel reads the
//! nodes and distances from the ACPI SRAT and SLIT that QEMU builds, as Linux does.

/// The CPUs' arrangement, and the nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub cpus: u32,
    pub sockets: u32,
    pub cores: u32,
    pub threads: u32,
    pub nodes: u32,
}

/// The most NUMA nodes `--numa` builds (the paper's machine had eight).
pub const MAX_NODES: u32 = 8;

impl Shape {
    /// `N` CPUs, each a core of one socket, in one node: what plain `-smp N` gives.
    pub fn flat(cpus: u32) -> Shape {
        Shape {
            cpus,
            sockets: 1,
            cores: cpus,
            threads: 1,
            nodes: 1,
        }
    }

    /// `--smp`'s value: `N`, or `N,sockets=S,cores=C,threads=T` (those given must multiply
    /// to N; one left out is what is left of N, or 1).
    pub fn parse_smp(text: &str) -> Result<Shape, String> {
        let mut parts = text.split(',');
        let count = parts.next().unwrap_or_default();
        let cpus: u32 = count
            .parse()
            .map_err(|_| format!("--smp: '{count}' is not a number"))?;
        if !(1..=bootopts::MAX_CPUS).contains(&cpus) {
            return Err(format!(
                "--smp: {cpus} is out of range (1..={})",
                bootopts::MAX_CPUS
            ));
        }
        let mut given = [None; 3];
        for part in parts {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            let slot = ["sockets", "cores", "threads"]
                .iter()
                .position(|k| *k == key)
                .ok_or_else(|| format!("--smp: unknown '{key}' (sockets=, cores=, threads=)"))?;
            let n: u32 = value
                .parse()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!("--smp: {key}='{value}' is not a count"))?;
            given[slot] = Some(n);
        }
        let threads = given[2].unwrap_or(1);
        let (sockets, cores) = match (given[0], given[1]) {
            (Some(s), Some(c)) => (s, c),
            (Some(s), None) => (s, cpus / (s * threads).max(1)),
            (None, Some(c)) => (cpus / (c * threads).max(1), c),
            (None, None) => (1, cpus / threads),
        };
        if sockets * cores * threads != cpus {
            return Err(format!(
                "--smp: {sockets} sockets x {cores} cores x {threads} threads is not {cpus} CPUs"
            ));
        }
        Ok(Shape {
            cpus,
            sockets,
            cores,
            threads,
            nodes: 1,
        })
    }

    /// The same CPUs in `nodes` NUMA nodes (`--numa`): each must hold whole sockets, as
    /// on the machines 2.6.24 built its domains for (a package's cores share a cache, and
    /// a node groups packages). Plain `--smp N` gives a socket per node.
    pub fn with_nodes(self, nodes: u32, sockets_given: bool) -> Result<Shape, String> {
        if !(1..=MAX_NODES).contains(&nodes) {
            return Err(format!("--numa: {nodes} nodes: from 1 to {MAX_NODES}"));
        }
        let shape = if sockets_given {
            self
        } else {
            Shape {
                sockets: nodes,
                cores: self.cpus / (nodes * self.threads).max(1),
                ..self
            }
        };
        if !shape.cpus.is_multiple_of(nodes)
            || shape.sockets * shape.cores * shape.threads != shape.cpus
            || !shape.sockets.is_multiple_of(nodes)
        {
            return Err(format!(
                "--numa: {} CPUs in {} sockets do not split into {nodes} nodes of whole sockets",
                shape.cpus, shape.sockets
            ));
        }
        Ok(Shape { nodes, ..shape })
    }

    /// The distance between nodes `a` and `b`: 10, and 10 more per hop on the ring.
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        let apart = a.abs_diff(b);
        10 + 10 * apart.min(self.nodes - apart)
    }

    /// QEMU's options for this shape, `memory_mib` split between the nodes.
    pub fn qemu_args(&self, memory_mib: u32) -> Vec<String> {
        let mut args = vec![
            "-smp".to_string(),
            format!(
                "{},sockets={},cores={},threads={}",
                self.cpus, self.sockets, self.cores, self.threads
            ),
        ];
        if self.nodes == 1 {
            return args;
        }
        let per_node = self.cpus / self.nodes;
        for node in 0..self.nodes {
            // QEMU wants the nodes' memory to add up to the machine's: node 0 takes what
            // an even split leaves over.
            let mut mib = memory_mib / self.nodes;
            if node == 0 {
                mib += memory_mib % self.nodes;
            }
            let (first, last) = (node * per_node, (node + 1) * per_node - 1);
            args.extend([
                "-object".into(),
                format!("memory-backend-ram,id=mem{node},size={mib}M"),
                "-numa".into(),
                format!("node,nodeid={node},cpus={first}-{last},memdev=mem{node}"),
            ]);
        }
        for a in 0..self.nodes {
            for b in a + 1..self.nodes {
                let d = self.distance(a, b);
                args.extend(["-numa".into(), format!("dist,src={a},dst={b},val={d}")]);
            }
        }
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smp_takes_a_count_or_qemu_s_shape() {
        assert_eq!(Shape::parse_smp("4"), Ok(Shape::flat(4)));
        let s = Shape::parse_smp("8,sockets=2,cores=2,threads=2").unwrap();
        assert_eq!((s.sockets, s.cores, s.threads), (2, 2, 2));
        let s = Shape::parse_smp("8,sockets=4").unwrap();
        assert_eq!((s.sockets, s.cores, s.threads), (4, 2, 1));
        for bad in [
            "0",
            "65",
            "x",
            "8,sockets=3",
            "8,dies=2",
            "8,cores=0",
            "4,threads=3",
        ] {
            assert!(Shape::parse_smp(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn four_nodes_make_a_ring_with_two_hop_pairs() {
        let s = Shape::parse_smp("8,sockets=4")
            .unwrap()
            .with_nodes(4, true)
            .unwrap();
        let row: Vec<u32> = (0..4).map(|b| s.distance(0, b)).collect();
        assert_eq!(row, [10, 20, 30, 20]);
        let args = s.qemu_args(256).join(" ");
        assert!(
            args.starts_with("-smp 8,sockets=4,cores=2,threads=1 "),
            "{args}"
        );
        assert!(
            args.contains("-numa node,nodeid=3,cpus=6-7,memdev=mem3"),
            "{args}"
        );
        assert!(
            args.contains("memory-backend-ram,id=mem0,size=64M"),
            "{args}"
        );
        assert!(args.contains("-numa dist,src=0,dst=2,val=30"), "{args}");
        assert_eq!(args.matches("-numa dist").count(), 6);
        // Plain `--smp 8 --numa 4` is the same machine: a socket per node.
        assert_eq!(Shape::flat(8).with_nodes(4, false), Ok(s));
        // A node must hold whole sockets, and the nodes must divide the CPUs.
        let ht = Shape::parse_smp("4,threads=2").unwrap();
        assert!(ht.with_nodes(4, false).is_err());
        assert!(
            Shape::parse_smp("8,sockets=2")
                .unwrap()
                .with_nodes(4, true)
                .is_err()
        );
        assert!(Shape::flat(6).with_nodes(4, false).is_err());
        assert!(Shape::flat(8).with_nodes(9, false).is_err());
    }
}
