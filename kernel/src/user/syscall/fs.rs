//! Files by path (`user::fs`): `open`, `openat`, `lseek`, `getdents64`, `stat`, `lstat`,
//! `fstat`, `newfstatat`, `readlink`, and the working directory: `chdir`, `fchdir`, `getcwd`. Paths are
//! at most PATH_MAX bytes; a relative one starts at the working directory or at `openat`'s
//! directory.

use super::io::file;
use super::{errno, space};
use crate::sched;
use crate::user::files::File;
use crate::user::fs::{self, Device, FileNode, Node, PATH_MAX, open_file};
use alloc::sync::Arc;
use alloc::vec::Vec;

/// `openat`'s "from the current directory" (AT_FDCWD, -100 as an int).
const AT_FDCWD: i32 = -100;
/// `newfstatat`'s "the file `dirfd` itself" when the path is empty.
const AT_EMPTY_PATH: u64 = 0x1000;

/// The path at user address `addr`: EFAULT if unreadable, ENAMETOOLONG if it has no NUL
/// within PATH_MAX bytes.
fn path_at(addr: u64) -> Result<Vec<u8>, i64> {
    space().read_c_string(addr, PATH_MAX).map_err(|_| {
        let mut probe = alloc::vec![0u8; PATH_MAX];
        match space().read(addr, &mut probe) {
            Ok(()) => -errno::ENAMETOOLONG,
            Err(_) => -errno::EFAULT,
        }
    })
}

/// Where a relative path starts: the working directory, or directory `dirfd`.
fn base_of(dirfd: u64, path: &[u8]) -> Result<alloc::string::String, i64> {
    if path.first() == Some(&b'/') {
        return Ok("/".into());
    }
    if dirfd as i32 == AT_FDCWD {
        return Ok(working_directory().as_ref().into());
    }
    match &*file(dirfd)? {
        File::Node(n) if matches!(n.node, Node::Dir(_)) => Ok(n.path.clone()),
        _ => Err(-errno::ENOTDIR),
    }
}

pub fn open(path: u64, flags: u64) -> i64 {
    openat(AT_FDCWD as u64, path, flags)
}

/// `openat(dirfd, path, flags, mode)`; the mode is unused (nothing can be created).
pub fn openat(dirfd: u64, path: u64, flags: u64) -> i64 {
    let opened = path_at(path).and_then(|path| {
        let from = base_of(dirfd, &path)?;
        open_file::open(&path, &from, flags, sched::current_uid())
    });
    let node = match opened {
        Ok(node) => node,
        Err(e) => return e,
    };
    let Some(files) = sched::current_files() else {
        return -errno::EBADF;
    };
    // `/dev/tty` and `/dev/console` are the console itself, as the descriptors a program
    // starts with are.
    let file = match node.node {
        Node::File(FileNode::Device(Device::Tty | Device::Console)) => Arc::new(File::Console),
        _ => Arc::new(File::Node(alloc::boxed::Box::new(node))),
    };
    let close_on_exec = flags & open_file::flags::O_CLOEXEC != 0;
    let fd = files.lock().install_from(0, file, close_on_exec);
    fd.map_or(-errno::EMFILE, |fd| fd as i64)
}

pub fn lseek(fd: u64, offset: u64, whence: u64) -> i64 {
    match &*match file(fd) {
        Ok(f) => f,
        Err(e) => return e,
    } {
        File::Node(n) => n
            .seek(offset as i64, whence)
            .map_or_else(|e| e, |at| at as i64),
        File::Console | File::Pipe { .. } => -errno::ESPIPE,
    }
}

pub fn getdents64(fd: u64, buf: u64, count: u64) -> i64 {
    let file = match file(fd) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let File::Node(node) = &*file else {
        return -errno::ENOTDIR;
    };
    let space = space();
    let copy_out = |records: &[u8]| space.write(buf, records).map_err(|_| -errno::EFAULT);
    match node.read_dir((count as usize).min(64 * 1024), copy_out) {
        Ok(copied) => copied as i64,
        Err(e) => e,
    }
}

/// What `stat` says of a file: (mode, size, inode, device number).
fn attributes(file: &File) -> (u32, u64, u64, u64) {
    const S_IFCHR: u32 = 0o020_000;
    const S_IFIFO: u32 = 0o010_000;
    match file {
        // ttyS0: major 4, minor 64.
        File::Console => (S_IFCHR | 0o620, 0, 3, (4 << 8) | 64),
        File::Pipe { pipe, .. } => (S_IFIFO | 0o600, 0, Arc::as_ptr(pipe) as u64, 0),
        File::Node(n) => (n.node.mode(), n.node.size(), n.inode(), n.node.rdev()),
    }
}

/// Writes x86_64's `struct stat` (144 bytes) at `buf`. Every file is root's; the times are
/// 0 (no clock of file changes is kept).
fn put_stat(buf: u64, (mode, size, inode, rdev): (u32, u64, u64, u64)) -> i64 {
    let mut st = [0u8; 144];
    st[8..16].copy_from_slice(&inode.to_le_bytes());
    st[16..24].copy_from_slice(&1u64.to_le_bytes()); // st_nlink
    st[24..28].copy_from_slice(&mode.to_le_bytes());
    st[40..48].copy_from_slice(&rdev.to_le_bytes());
    st[48..56].copy_from_slice(&size.to_le_bytes());
    st[56..64].copy_from_slice(&4096u64.to_le_bytes()); // st_blksize
    st[64..72].copy_from_slice(&size.div_ceil(512).to_le_bytes()); // st_blocks
    match space().write(buf, &st) {
        Ok(()) => 0,
        Err(_) => -errno::EFAULT,
    }
}

pub fn fstat(fd: u64, buf: u64) -> i64 {
    match file(fd) {
        Ok(f) => put_stat(buf, attributes(&f)),
        Err(e) => e,
    }
}

/// `stat` and `lstat` (there are no links to tell apart).
pub fn stat(path: u64, buf: u64) -> i64 {
    newfstatat(AT_FDCWD as u64, path, buf, 0)
}

pub fn newfstatat(dirfd: u64, path: u64, buf: u64, flags: u64) -> i64 {
    let path = match path_at(path) {
        Ok(p) => p,
        Err(e) => return e,
    };
    if path.is_empty() && flags & AT_EMPTY_PATH != 0 {
        return fstat(dirfd, buf);
    }
    let found = base_of(dirfd, &path).and_then(|from| fs::lookup(&path, &from));
    match found {
        Ok((node, canonical)) => {
            let inode = fs::inode_of(&canonical);
            put_stat(buf, (node.mode(), node.size(), inode, node.rdev()))
        }
        Err(e) => e,
    }
}

/// The running process's working directory (canonical, from the root).
pub fn working_directory() -> Arc<str> {
    sched::current_files().map_or_else(|| "/".into(), |files| files.lock().cwd())
}

/// `chdir(path)`: ENOENT if nothing is there, ENOTDIR if it is not a directory.
pub fn chdir(path: u64) -> i64 {
    let found = path_at(path).and_then(|path| {
        let from = base_of(AT_FDCWD as u64, &path)?;
        fs::lookup(&path, &from)
    });
    match found {
        Ok((Node::Dir(_), canonical)) => set_working_directory(&canonical),
        Ok(_) => -errno::ENOTDIR,
        Err(e) => e,
    }
}

/// `fchdir(fd)`: the directory `fd` has open.
pub fn fchdir(fd: u64) -> i64 {
    match &*match file(fd) {
        Ok(f) => f,
        Err(e) => return e,
    } {
        File::Node(n) if matches!(n.node, Node::Dir(_)) => set_working_directory(&n.path),
        _ => -errno::ENOTDIR,
    }
}

fn set_working_directory(canonical: &str) -> i64 {
    match sched::current_files() {
        Some(files) => {
            files.lock().set_cwd(canonical.into());
            0
        }
        None => -errno::EBADF,
    }
}

/// `getcwd(buf, size)`: the working directory and its NUL; the raw call returns their
/// length. ERANGE if `size` is too small.
pub fn getcwd(buf: u64, size: u64) -> i64 {
    let cwd = working_directory();
    let mut bytes = Vec::with_capacity(cwd.len() + 1);
    bytes.extend_from_slice(cwd.as_bytes());
    bytes.push(0);
    if (bytes.len() as u64) > size {
        return -errno::ERANGE;
    }
    match space().write(buf, &bytes) {
        Ok(()) => bytes.len() as i64,
        Err(_) => -errno::EFAULT,
    }
}

/// `readlinkat(dirfd, path, buf, size)` (and `readlink`): cfslab's file tree has two kinds of
/// link, Linux's `/proc/self` (the reader's pid) and `/proc/PID/exe` (the path of the
/// program the process runs; ENOENT for a kernel thread). The target goes to `buf` without
/// a NUL, cut at `size`; any other existing path is not a link (EINVAL).
pub fn readlinkat(dirfd: u64, path: u64, buf: u64, size: u64) -> i64 {
    if size as i32 <= 0 {
        return -errno::EINVAL;
    }
    let target = path_at(path).and_then(|path| {
        let from = base_of(dirfd, &path)?;
        let trimmed = path.strip_suffix(b"/").unwrap_or(&path);
        let (parent, name) = match trimmed.iter().rposition(|&b| b == b'/') {
            Some(0) => (&b"/"[..], &trimmed[1..]),
            Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
            None => (&b"."[..], trimmed),
        };
        let link = match fs::lookup(parent, &from) {
            Ok((Node::Dir(fs::Dir::ProcPid(id)), _)) if name == b"exe" => {
                let view = crate::sched::procview::task_view(id).ok_or(-errno::ENOENT)?;
                if view.kernel_thread {
                    return Err(-errno::ENOENT);
                }
                Some(alloc::string::String::from_utf8_lossy(view.program.exe()).into_owned())
            }
            Ok((Node::Dir(fs::Dir::Proc), _)) if name == b"self" => Some(alloc::format!(
                "{}",
                crate::task::pid_of(sched::current_process())
            )),
            _ => None,
        };
        match link {
            Some(link) => Ok(link),
            None => fs::lookup(&path, &from).and(Err(-errno::EINVAL)),
        }
    });
    let target = match target {
        Ok(t) => t,
        Err(e) => return e,
    };
    let n = target.len().min(size as usize);
    match space().write(buf, &target.as_bytes()[..n]) {
        Ok(()) => n as i64,
        Err(_) => -errno::EFAULT,
    }
}

/// `faccessat(dirfd, path, mode)` (and `access`, `faccessat2`): whether the caller may read
/// (R_OK), write (W_OK) or run (X_OK) the file, or (F_OK) whether it exists. Every file is
/// root's: root may do anything but run a file without an execute bit; another uid has the
/// "other" bits. Writing to the initramfs, a read-only file system, is EROFS first, as
/// Linux checks that before the bits.
pub fn faccessat(dirfd: u64, path: u64, mode: u64) -> i64 {
    const X_OK: u32 = 1;
    const W_OK: u32 = 2;
    if mode & !7 != 0 {
        return -errno::EINVAL;
    }
    let mode = mode as u32;
    let node = match path_at(path).and_then(|path| {
        let from = base_of(dirfd, &path)?;
        fs::lookup(&path, &from)
    }) {
        Ok((node, _)) => node,
        Err(e) => return e,
    };
    let read_only = matches!(node, Node::Dir(fs::Dir::Initramfs(_)))
        || matches!(node, Node::File(FileNode::Initramfs(_)));
    if mode & W_OK != 0 && read_only {
        return -errno::EROFS;
    }
    let bits = node.mode();
    let allowed = if sched::current_uid() == 0 {
        mode & X_OK == 0 || bits & 0o111 != 0
    } else {
        mode & !(bits & 0o7) == 0
    };
    if allowed { 0 } else { -errno::EACCES }
}
