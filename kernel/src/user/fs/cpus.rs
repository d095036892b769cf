//! `/sys/devices/system/cpu/`, as Linux's drivers/base/cpu.c lays it out: the lists
//! `online`, `offline`, `present` and `possible` (read-only, ranges as `0-2,5`), and a
//! directory `cpuN` per CPU whose `online` file takes the CPU offline (`0`) or back (`1`)
//! — `sched::hotplug`, through the knob `Knob::CpuOnline` (`knobs`). Only root may write
//! it; CPU 0 has none, as on Linux x86.

use super::knobs::Knob;
use super::{Dir, FileNode, Node, dir, file};
use crate::sched::hotplug;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use sched::smp::cpuset::CpuSet;

/// A read-only list of CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuList {
    /// The CPUs online (`cpu_online_mask`).
    Online,
    /// The CPUs that could be online but are not.
    Offline,
    /// The CPUs the machine has (`cpu_present_mask`: those that came up at boot).
    Present,
    /// The CPUs there could ever be (`cpu_possible_mask`: on cfslab, the present ones).
    Possible,
}

impl CpuList {
    const ALL: [(&'static str, CpuList); 4] = [
        ("offline", CpuList::Offline),
        ("online", CpuList::Online),
        ("possible", CpuList::Possible),
        ("present", CpuList::Present),
    ];

    /// The list now, with its newline (an empty list is a newline alone).
    pub fn text(self) -> String {
        let (present, online) = hotplug::cpu_masks();
        let cpus = match self {
            CpuList::Online => online,
            CpuList::Offline => present & !online,
            CpuList::Present | CpuList::Possible => present,
        };
        format!("{}\n", ranges(cpus))
    }
}

/// `cpus` (one bit each) as Linux's `%*pbl` prints a mask: runs as `FIRST-LAST`, single
/// CPUs alone, separated by commas.
pub fn ranges(cpus: u64) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut cpu = 0;
    while cpu < 64 {
        if cpus & 1 << cpu == 0 {
            cpu += 1;
            continue;
        }
        let first = cpu;
        while cpu + 1 < 64 && cpus & 1 << (cpu + 1) != 0 {
            cpu += 1;
        }
        out.push(match first == cpu {
            true => format!("{first}"),
            false => format!("{first}-{cpu}"),
        });
        cpu += 1;
    }
    out.join(",")
}

/// The entries of `/sys/devices/system/cpu/`.
pub fn entries() -> Vec<(String, Node)> {
    let (present, _) = hotplug::cpu_masks();
    let mut entries: Vec<(String, Node)> = CpuSet::from_bits(present)
        .iter()
        .map(|cpu| (format!("cpu{cpu}"), Node::Dir(Dir::SysCpu(cpu))))
        .collect();
    for (name, list) in CpuList::ALL {
        entries.push(file(name, FileNode::CpuList(list)));
    }
    entries
}

/// The entries of `/sys/devices/system/cpu/cpuN/`: `online`, except for CPU 0.
pub fn cpu_entries(cpu: usize) -> Vec<(String, Node)> {
    match cpu {
        0 => Vec::new(),
        _ => alloc::vec![file("online", FileNode::Knob(Knob::CpuOnline(cpu)))],
    }
}

/// `/sys/devices/system/` itself: `cpu`.
pub fn system_entries() -> Vec<(String, Node)> {
    alloc::vec![dir("cpu", Dir::SysCpus)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test_case]
    fn cpu_lists_print_runs_as_ranges() {
        assert_eq!(ranges(0), "");
        assert_eq!(ranges(0b1), "0");
        assert_eq!(ranges(0b1111), "0-3");
        assert_eq!(ranges(0b1011_0101), "0,2,4-5,7");
        assert_eq!(ranges(u64::MAX), "0-63");
    }
}
