//! `/sys/devices/system/cpu/`, as Linux's drivers/base/cpu.c lays it out: the lists
//! `online`, `offline`, `present` and `possible` (read-only, ranges as `0-2,5`), and a
//! directory `cpuN` per CPU whose `online` file takes the CPU offline (`0`) or back (`1`)
//! — `sched::hotplug`. Only root may write it; CPU 0 has none, as on Linux x86.

use super::knobs::Knob;
use super::{Dir, FileNode, Node, dir, file};
use crate::sched::hotplug::{self, HotplugError};
use crate::user::errno;
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

/// What `cpuN/online` reads: `1` or `0`, and a newline.
pub fn online_text(cpu: usize) -> String {
    let (_, online) = hotplug::cpu_masks();
    format!("{}\n", u8::from(online & 1 << cpu != 0))
}

/// A write to `cpuN/online`: [`kstrtobool`]'s value, then the CPU taken down or brought up
/// (the write returns once it is done); writing the state it is in changes nothing.
pub fn write_online(cpu: usize, bytes: &[u8]) -> Result<(), i64> {
    // An empty write changes nothing (sysfs does not call the file's store for one).
    if bytes.is_empty() {
        return Ok(());
    }
    let up = kstrtobool(bytes).ok_or(-errno::EINVAL)?;
    let done = match up {
        true => hotplug::cpu_up(cpu),
        false => hotplug::cpu_down(cpu),
    };
    done.map_err(|e| match e {
        HotplugError::NoSuchCpu => -errno::ENODEV,
        HotplugError::Busy => -errno::EBUSY,
        HotplugError::NoAnswer => -errno::EIO,
    })
}

/// Linux's `kstrtobool` (lib/kstrtox.c, 6.1: `t`/`f` since 6.0), which sysfs's boolean
/// files read: the first character decides — `1`, `y`, `t` true; `0`, `n`, `f` false, in
/// either case — or, after an `o`, the second: `on` true, `of` false. Anything else is no
/// value (EINVAL).
pub fn kstrtobool(text: &[u8]) -> Option<bool> {
    match text {
        [b'1' | b'y' | b'Y' | b't' | b'T', ..] => Some(true),
        [b'0' | b'n' | b'N' | b'f' | b'F', ..] => Some(false),
        [b'o' | b'O', b'n' | b'N', ..] => Some(true),
        [b'o' | b'O', b'f' | b'F', ..] => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test_case]
    fn kstrtobool_reads_the_first_characters_as_linux_does() {
        for yes in [&b"1\n"[..], b"y", b"Yes", b"on", b"ON\n", b"1junk", b"true"] {
            assert_eq!(kstrtobool(yes), Some(true), "{yes:?}");
        }
        for no in [&b"0\n"[..], b"n", b"No", b"off", b"OfF", b"false"] {
            assert_eq!(kstrtobool(no), Some(false), "{no:?}");
        }
        for bad in [&b""[..], b"\n", b"2", b"o", b"ox", b" 1", b"-1"] {
            assert_eq!(kstrtobool(bad), None, "{bad:?}");
        }
    }

    #[test_case]
    fn cpu_lists_print_runs_as_ranges() {
        assert_eq!(ranges(0), "");
        assert_eq!(ranges(0b1), "0");
        assert_eq!(ranges(0b1111), "0-3");
        assert_eq!(ranges(0b1011_0101), "0,2,4-5,7");
        assert_eq!(ranges(u64::MAX), "0-63");
    }
}
