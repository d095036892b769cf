//! The domains rebuilt around CPU hotplug (`partition_sched_domains` as a CPU goes offline
//! or comes back): built over the CPUs still active only, and — on a CPU's return — without
//! the NUMA levels 4.1 lost on the way: the Wasted Cores paper's Missing Scheduling Domains
//! (§3.4), fixed in Linux 4.9 by setting the topology table only once.

use super::{Domain, Rules, build_with, group_power, numa, params_6_6, tell_children};
use crate::features::{Feature, Features};
use crate::smp::cpuset::CpuSet;
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

/// `cpu`'s `domains` cut down to the CPUs in `active`, as `build_sched_domains` builds them
/// over `cpu_active_mask` while some CPU is offline: each span and group loses the CPUs
/// outside it, a group left empty goes, a group's power counts only what is left, 6.6's
/// parameters are those of the smaller span (`sd_init` reads its weight) — `imb_numa_nr`,
/// a field of the domain, stays as the whole machine gave it (Linux computes it again
/// from the active spans) — and a level that adds nothing any more is dropped
/// (`cpu_attach_domain`). An inactive `cpu` has none (Linux attaches the NULL domain).
pub fn restrict_to(t: &Topology, cpu: usize, domains: Vec<Domain>, active: CpuSet) -> Vec<Domain> {
    if !active.contains(cpu) {
        return Vec::new();
    }
    let node = t.place(cpu).node;
    let restricted = domains.into_iter().map(|mut d| {
        d.span = d.span & active;
        for g in &mut d.groups {
            g.cpus = g.cpus & active;
            g.balance = g.balance & active;
            g.power = match d.rules {
                Rules::V2_6_24 => group_power(t, d.level, g.cpus),
                Rules::V2_6_36 | Rules::V6_6 => d.cpu_power * g.cpus.len() as u64,
            };
        }
        d.groups.retain(|g| !g.cpus.is_empty());
        if d.rules == Rules::V6_6 {
            let distance = numa::max_distance(t, node, d.span);
            d.params = params_6_6(d.level, d.span.len() as u64, distance);
        }
        d
    });
    let mut domains = super::attach(restricted.collect());
    tell_children(&mut domains);
    domains
}
