//! cfslab's file tree, by Linux's paths: the initramfs, read-only, at `/` (`/bin/NAME`,
//! `/init`); `/proc` (processes and the scheduler's state, `proc`); the scheduler's
//! knobs (`knobs`) under `/proc/sys/kernel/` and `/sys/kernel/`; and `/dev`'s null, zero,
//! tty and console. Nothing is stored: a
//! directory's entries are made when it is looked at and a file's text when it is read, as
//! Linux's procfs and sysfs make theirs. There is no writable file system: creating a file
//! is EROFS.
//!
//! Lookup ([`lookup`]) walks a path's components through [`Dir::entries`], so the names a
//! listing (`getdents64`) shows and the names a path can use are one definition.

pub mod cpus;
pub mod knobs;
pub mod open_file;
pub mod proc;
mod proc_system;

use crate::sched::procview;
use crate::task::{TaskId, pid_of};
use crate::user::errno;
use crate::user::initramfs;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use knobs::Knob;
use proc::ProcFile;

/// Longest path (with its NUL) and longest name, as Linux's PATH_MAX and NAME_MAX.
pub const PATH_MAX: usize = 4096;
const NAME_MAX: usize = 255;

/// A directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dir {
    /// A directory of the initramfs: the root (`""`) or e.g. `"bin"`. The root also holds
    /// `proc` and `sys`.
    Initramfs(&'static [u8]),
    Proc,
    /// `/proc/PID`.
    ProcPid(TaskId),
    ProcSys,
    ProcSysKernel,
    Sys,
    /// `/sys/devices` and `/sys/devices/system`.
    SysDevices,
    SysDevicesSystem,
    /// `/sys/devices/system/cpu` (`cpus`), and a CPU's directory there.
    SysCpus,
    SysCpu(usize),
    SysKernel,
    SysKernelDebug,
    /// `/sys/kernel/debug/sched` (5.13+: EEVDF's era).
    SysKernelDebugSched,
    /// `/sys/kernel/uids`: a directory per uid that has a scheduling group (2.6.24).
    SysKernelUids,
    Uid(u32),
    Dev,
}

/// A device of `/dev`: what Linux's `mem` and `tty` drivers give these names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    /// Reads end at once, writes vanish (1:3).
    Null,
    /// Reads give zeros, writes vanish (1:5).
    Zero,
    /// The process's terminal (5:0): the console, cfslab's only one.
    Tty,
    /// The console (5:1).
    Console,
}

impl Device {
    const ALL: [(&'static str, Device); 4] = [
        ("null", Device::Null),
        ("zero", Device::Zero),
        ("tty", Device::Tty),
        ("console", Device::Console),
    ];

    /// `st_rdev`: Linux's (major, minor), encoded as `makedev` does for small numbers.
    pub fn rdev(self) -> u64 {
        let (major, minor) = match self {
            Device::Null => (1, 3),
            Device::Zero => (1, 5),
            Device::Tty => (5, 0),
            Device::Console => (5, 1),
        };
        (major << 8) | minor
    }
}

/// A file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileNode {
    /// A file of the initramfs, its contents.
    Initramfs(&'static [u8]),
    Proc(ProcFile),
    Knob(Knob),
    /// A list of CPUs under `/sys/devices/system/cpu/` (`cpus`).
    CpuList(cpus::CpuList),
    Device(Device),
}

/// What a path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Dir(Dir),
    File(FileNode),
}

impl Node {
    /// `st_mode`: the type and the permission bits Linux shows (a knob is root's, 0644).
    pub fn mode(&self) -> u32 {
        const S_IFDIR: u32 = 0o040_000;
        const S_IFREG: u32 = 0o100_000;
        const S_IFCHR: u32 = 0o020_000;
        match self {
            Node::Dir(_) => S_IFDIR | 0o555,
            Node::File(FileNode::Initramfs(_)) => S_IFREG | 0o755,
            Node::File(FileNode::Proc(_) | FileNode::CpuList(_)) => S_IFREG | 0o444,
            Node::File(FileNode::Knob(_)) => S_IFREG | 0o644,
            Node::File(FileNode::Device(Device::Console)) => S_IFCHR | 0o600,
            Node::File(FileNode::Device(_)) => S_IFCHR | 0o666,
        }
    }

    /// `st_size`: an initramfs file's length; 0 for the generated files, as in Linux.
    pub fn size(&self) -> u64 {
        match self {
            Node::File(FileNode::Initramfs(data)) => data.len() as u64,
            _ => 0,
        }
    }

    /// `d_type` in a directory listing: DT_DIR, DT_CHR or DT_REG.
    pub fn dirent_type(&self) -> u8 {
        match self {
            Node::Dir(_) => 4,
            Node::File(FileNode::Device(_)) => 2,
            Node::File(_) => 8,
        }
    }

    /// `st_rdev`: a device's number, 0 for anything else.
    pub fn rdev(&self) -> u64 {
        match self {
            Node::File(FileNode::Device(d)) => d.rdev(),
            _ => 0,
        }
    }
}

fn dir(name: &str, d: Dir) -> (String, Node) {
    (name.to_string(), Node::Dir(d))
}

fn file(name: &str, f: FileNode) -> (String, Node) {
    (name.to_string(), Node::File(f))
}

impl Dir {
    /// The entries of the directory now, without `.` and `..`.
    pub fn entries(&self) -> Vec<(String, Node)> {
        match self {
            Dir::Initramfs(prefix) => {
                let mut entries = initramfs_entries(prefix);
                if prefix.is_empty() {
                    entries.push(dir("proc", Dir::Proc));
                    entries.push(dir("sys", Dir::Sys));
                    if !entries.iter().any(|(name, _)| name == "dev") {
                        entries.push(dir("dev", Dir::Dev));
                    }
                }
                entries
            }
            Dir::Proc => {
                let mut entries: Vec<_> = procview::listed_tasks()
                    .into_iter()
                    .map(|id| (format!("{}", pid_of(id)), Node::Dir(Dir::ProcPid(id))))
                    .collect();
                // Linux's `/proc/self`: the reader's own process (a symlink there, a
                // directory here).
                entries.push(dir("self", Dir::ProcPid(crate::sched::current_process())));
                for (name, f) in ProcFile::SYSTEM {
                    entries.push(file(name, FileNode::Proc(f)));
                }
                entries.push(dir("sys", Dir::ProcSys));
                entries
            }
            Dir::ProcPid(id) => ProcFile::per_task(*id)
                .into_iter()
                .map(|(name, f)| file(name, FileNode::Proc(f)))
                .collect(),
            Dir::ProcSys => alloc::vec![dir("kernel", Dir::ProcSysKernel)],
            Dir::ProcSysKernel => knobs::sysctls()
                .into_iter()
                .map(|(name, k)| file(name, FileNode::Knob(k)))
                .collect(),
            Dir::Sys => alloc::vec![
                dir("devices", Dir::SysDevices),
                dir("kernel", Dir::SysKernel)
            ],
            Dir::SysDevices => alloc::vec![dir("system", Dir::SysDevicesSystem)],
            Dir::SysDevicesSystem => cpus::system_entries(),
            Dir::SysCpus => cpus::entries(),
            Dir::SysCpu(cpu) => cpus::cpu_entries(*cpu),
            Dir::SysKernel => {
                let mut entries = alloc::vec![dir("debug", Dir::SysKernelDebug)];
                if knobs::has_uid_groups() {
                    entries.push(dir("uids", Dir::SysKernelUids));
                }
                entries
            }
            Dir::SysKernelDebug => {
                let mut entries: Vec<_> = knobs::debugfs()
                    .into_iter()
                    .map(|(name, k)| file(name, FileNode::Knob(k)))
                    .collect();
                if !knobs::debugfs_sched().is_empty() {
                    entries.push(dir("sched", Dir::SysKernelDebugSched));
                }
                entries
            }
            Dir::SysKernelDebugSched => knobs::debugfs_sched()
                .into_iter()
                .map(|(name, k)| file(name, FileNode::Knob(k)))
                .collect(),
            Dir::SysKernelUids => knobs::uids_with_groups()
                .into_iter()
                .map(|uid| (format!("{uid}"), Node::Dir(Dir::Uid(uid))))
                .collect(),
            Dir::Uid(uid) => alloc::vec![file("cpu_share", FileNode::Knob(Knob::CpuShare(*uid)))],
            Dir::Dev => Device::ALL
                .iter()
                .map(|&(name, d)| file(name, FileNode::Device(d)))
                .collect(),
        }
    }
}

/// The entries of the initramfs directory `prefix` (`""`: the root): its files, and the
/// directories that hold some (the archive names files as `bin/hog`).
fn initramfs_entries(prefix: &'static [u8]) -> Vec<(String, Node)> {
    let mut entries: Vec<(String, Node)> = Vec::new();
    for &(name, data) in initramfs::files() {
        let rest = if prefix.is_empty() {
            name
        } else {
            match name.strip_prefix(prefix).and_then(|r| r.strip_prefix(b"/")) {
                Some(rest) => rest,
                None => continue,
            }
        };
        if rest.is_empty() {
            continue;
        }
        let (first, deeper) = match rest.iter().position(|&b| b == b'/') {
            Some(slash) => (&rest[..slash], true),
            None => (rest, false),
        };
        let text = String::from_utf8_lossy(first).into_owned();
        let is_dir_entry = deeper || initramfs::files().iter().any(|(n, _)| is_parent(name, n));
        if entries.iter().any(|(n, _)| *n == text) {
            continue;
        }
        let node = if is_dir_entry {
            let full = &name[..prefix.len() + usize::from(!prefix.is_empty()) + first.len()];
            Node::Dir(Dir::Initramfs(full))
        } else {
            Node::File(FileNode::Initramfs(data))
        };
        entries.push((text, node));
    }
    entries
}

/// Is `child` inside directory `parent` (`bin/hog` in `bin`)?
fn is_parent(parent: &[u8], child: &[u8]) -> bool {
    child.len() > parent.len() + 1 && child.starts_with(parent) && child[parent.len()] == b'/'
}

/// What `path` names. A relative path starts at `from` (the root, or an open directory:
/// `openat`'s dirfd). The walk goes a name at a time, as Linux's `link_path_walk` does: `..`
/// leaves a directory that was found (so `/no/such/..` is ENOENT, and `..` of the root is
/// the root), and a name, `.` or a trailing slash after a file is ENOTDIR.
pub fn lookup(path: &[u8], from: &str) -> Result<(Node, String), i64> {
    if path.is_empty() {
        return Err(-errno::ENOENT);
    }
    let start: &[u8] = if path[0] == b'/' {
        b""
    } else {
        from.as_bytes()
    };
    // The directories walked through, the root first, each with its name.
    let mut walked: Vec<(String, Node)> =
        alloc::vec![(String::new(), Node::Dir(Dir::Initramfs(b"")))];
    for part in start
        .split(|&b| b == b'/')
        .chain(path.split(|&b| b == b'/'))
    {
        let Some((_, Node::Dir(here))) = walked.last() else {
            return Err(-errno::ENOTDIR);
        };
        match part {
            b"" | b"." => {}
            b".." => {
                if walked.len() > 1 {
                    walked.pop();
                }
            }
            _ if part.len() > NAME_MAX => return Err(-errno::ENAMETOOLONG),
            _ => {
                let name = String::from_utf8_lossy(part).into_owned();
                let node = here
                    .entries()
                    .into_iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, n)| n)
                    .ok_or(-errno::ENOENT)?;
                walked.push((name, node));
            }
        }
    }
    let names: Vec<&str> = walked[1..].iter().map(|(n, _)| n.as_str()).collect();
    let canonical = alloc::format!("/{}", names.join("/"));
    let (_, node) = walked.pop().expect("the root at least");
    Ok((node, canonical))
}

/// The inode number `stat` and listings show for `path` (canonical, from the root): a hash
/// of the path (FNV-1a), the same at every look, never 0 (no file, to some readers).
pub fn inode_of(path: &str) -> u64 {
    let hash = path.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    hash.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `.` and `..` are followed, repeated slashes are one, a relative path starts at its
    /// base, and `..` of the root is the root (as Linux resolves them).
    #[test_case]
    fn paths_resolve_as_linux_resolves_them() {
        let canonical = |path: &[u8], from| lookup(path, from).map(|(_, c)| c);
        assert_eq!(canonical(b"/sys//./kernel/", "/"), Ok("/sys/kernel".into()));
        assert_eq!(canonical(b"/../../sys/../sys", "/"), Ok("/sys".into()));
        assert_eq!(canonical(b"kernel", "/sys"), Ok("/sys/kernel".into()));
        assert_eq!(
            lookup(b"/sys", "/").map(|(n, _)| n),
            Ok(Node::Dir(Dir::Sys))
        );
    }

    #[test_case]
    fn missing_names_and_long_ones_are_refused() {
        assert_eq!(lookup(b"", "/"), Err(-errno::ENOENT));
        assert_eq!(lookup(b"/no/such", "/"), Err(-errno::ENOENT));
        // `..` leaves only a directory that exists, as Linux walks it.
        assert_eq!(lookup(b"/no/..", "/"), Err(-errno::ENOENT));
        assert_eq!(lookup(b"/proc/uptime/..", "/"), Err(-errno::ENOTDIR));
        assert_eq!(lookup(b"/proc/uptime/", "/"), Err(-errno::ENOTDIR));
        assert_eq!(lookup(b"/proc/uptime/.", "/"), Err(-errno::ENOTDIR));
        let long = [b'x'; NAME_MAX + 1];
        assert_eq!(lookup(&long, "/"), Err(-errno::ENAMETOOLONG));
    }
}
