//! The machine's shape, as the firmware and the CPUs describe it: CPUID's leaf 0xB splits
//! each CPU's APIC id into its thread, core and package, and ACPI's SRAT and SLIT give its
//! NUMA node and the nodes' distances (Linux's `detect_extended_topology` and
//! `acpi_numa_init`). QEMU builds all three from `-smp N,sockets=,cores=,threads=` and
//! `-numa`. The scheduler builds its domains from the result (`sched::balance`).

use crate::arch::acpi::{self, Numa};
use crate::arch::cpuid;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use sched::smp::topology::{CpuPlace, Topology};

/// The topology of the CPUs whose APIC ids are `apic_ids` (CPU `n` the `n`th), or why it
/// cannot be built: the firmware contradicts itself, or describes a machine the scheduler
/// cannot balance over.
pub fn discover(apic_ids: &[u8], rsdp: Option<u64>) -> Result<Topology, String> {
    let mapped = |page: u64| {
        crate::arch::paging::VirtAddr::try_new(page)
            .ok()
            .and_then(crate::mm::translate)
            .is_some()
    };
    // SAFETY: as `cpus::bring_up`'s reading of the MADT.
    let numa = unsafe { acpi::numa(rsdp, crate::mm::physical_offset(), &mapped) }
        .map_err(|e| format!("{e}"))?;
    let split = cpuid::apic_split();
    let node_of = |apic: u32| -> Result<u32, String> {
        let Some(numa) = &numa else { return Ok(0) };
        let found = numa.node_of_apic.iter().find(|&&(a, _)| a == apic);
        found
            .map(|&(_, node)| node)
            .ok_or_else(|| format!("the ACPI SRAT gives APIC id {apic} no node"))
    };
    let domains = node_domains(apic_ids, &node_of)?;
    let mut places = Vec::new();
    for (n, &apic) in apic_ids.iter().enumerate() {
        let apic = u32::from(apic);
        let (core, package) = match split {
            Some(s) => (
                (apic >> s.smt_shift) as usize,
                (apic >> s.package_shift) as usize,
            ),
            None => (n, 0),
        };
        let domain = node_of(apic)?;
        let node = domains.iter().position(|&d| d == domain).expect("listed");
        places.push(CpuPlace {
            core,
            package,
            node,
        });
    }
    let distance = distances(numa.as_ref(), &domains)?;
    Topology::from_places(places, distance).map_err(String::from)
}

/// The proximity domains that hold the CPUs, in order: node `i` is the `i`th.
fn node_domains(
    apic_ids: &[u8],
    node_of: &dyn Fn(u32) -> Result<u32, String>,
) -> Result<Vec<u32>, String> {
    let mut domains = Vec::new();
    for &apic in apic_ids {
        domains.push(node_of(u32::from(apic))?);
    }
    domains.sort_unstable();
    domains.dedup();
    Ok(domains)
}

/// The distances between the CPUs' nodes, from the SLIT's rows and columns of their
/// domains; none for one node, and Linux's default (10 to itself, 20 to another) without
/// a SLIT.
fn distances(numa: Option<&Numa>, domains: &[u32]) -> Result<Vec<Vec<u32>>, String> {
    if domains.len() == 1 {
        return Ok(Vec::new());
    }
    let slit = numa.map_or(&[][..], |n| &n.distance[..]);
    let at = |a: u32, b: u32| -> Result<u32, String> {
        if slit.is_empty() {
            return Ok(if a == b { 10 } else { 20 });
        }
        let row = slit
            .get(a as usize)
            .ok_or("the ACPI SLIT has too few nodes")?;
        Ok(*row
            .get(b as usize)
            .ok_or("the ACPI SLIT has too few nodes")?)
    };
    domains
        .iter()
        .map(|&a| domains.iter().map(|&b| at(a, b)).collect())
        .collect()
}

/// The topology in one line (`RESULT {"kind":"topology",...}`): each node's CPUs, each
/// CPU's core and package, and the nodes' distances.
pub fn result_line(t: &Topology) -> String {
    let list = |items: Vec<String>| items.join(",");
    let nodes = (0..t.nodes())
        .map(|n| {
            format!(
                "[{}]",
                list(t.node_cpus(n).iter().map(|c| format!("{c}")).collect())
            )
        })
        .collect();
    let cores = (0..t.len())
        .map(|c| format!("{}", t.place(c).core))
        .collect();
    let packages = (0..t.len())
        .map(|c| format!("{}", t.place(c).package))
        .collect();
    let distance = (0..t.nodes())
        .map(|a| {
            let row = (0..t.nodes()).map(|b| format!("{}", t.distance(a, b)));
            format!("[{}]", list(row.collect()))
        })
        .collect();
    format!(
        "RESULT {{\"kind\":\"topology\",\"nodes\":[{}],\"core\":[{}],\"package\":[{}],\"distance\":[{}]}}",
        list(nodes),
        list(cores),
        list(packages),
        list(distance)
    )
}
