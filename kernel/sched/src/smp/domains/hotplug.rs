//! The domains rebuilt after CPU hotplug (`partition_sched_domains` once a CPU comes back
//! online), and the NUMA levels 4.1 lost on the way: the Wasted Cores paper's Missing
//! Scheduling Domains (§3.4), fixed in Linux 4.9 by setting the topology table only once.

use super::{Domain, Rules, build_with};
use crate::features::{Feature, Features};
use crate::smp::topology::Topology;
use alloc::vec::Vec;

/// `cpu`'s domains rebuilt after a CPU came back online (`partition_sched_domains`): as at
/// boot — unless `HOTPLUG_KEEPS_NUMA` is off. 4.1 on x86 then lost its NUMA levels: on a
/// machine whose packages hold several nodes (the Opteron 6272's two dies; cfslab models
/// each die as a package and takes the machine to be such), a CPU coming online set the
/// topology table again (`set_cpu_sibling_map`), dropping the levels `sched_init_numa` had
/// added at boot, so the rebuilt domains stop at the node and no CPU balances across nodes
/// again (the Wasted Cores paper's Missing Scheduling Domains).
pub fn build_after_hotplug(t: &Topology, cpu: usize, rules: Rules, f: Features) -> Vec<Domain> {
    let mut domains = build_with(t, cpu, rules, f);
    // The switch is 6.6's balancer's; the eras before kept their NODE levels.
    if rules == Rules::V6_6 && !f.has(Feature::HotplugKeepsNuma) {
        let node = t.node_cpus(t.place(cpu).node);
        domains.retain(|d| d.span.is_subset(node));
    }
    domains
}
