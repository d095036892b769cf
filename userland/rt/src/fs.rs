//! Files by path: `openat`, reading a whole file, listing a directory (`getdents64`),
//! `mkdir` and `mount` — what an init needs to mount Linux's pseudo file systems and write
//! its tunables (`/sys/kernel/debug/sched/...`, cgroups), and what `cat`, `ls` and `ps`
//! read. On cfslab the tree is the initramfs, /proc and the scheduler's knobs under
//! /proc/sys and /sys (`kernel/src/user/fs`); `mkdir` and `mount` say ENOSYS there.

use crate::Errno;
use crate::sys::{nr, syscall6};
use alloc::ffi::CString;

const AT_FDCWD: isize = -100;
pub const O_RDONLY: usize = 0;
pub const O_WRONLY: usize = 1;
pub const O_CREAT: usize = 0o100;
pub const O_TRUNC: usize = 0o1000;

/// `openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, 0644)`: a file to write from its
/// start, made if missing, as the shell's `> FILE` opens it.
pub fn create(path: &str) -> Result<i32, Errno> {
    openat(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
}

fn c_string(path: &str) -> Result<CString, Errno> {
    CString::new(path).map_err(|_| Errno::EINVAL)
}

/// `openat(AT_FDCWD, path, flags)`: a file descriptor.
pub fn open(path: &str, flags: usize) -> Result<i32, Errno> {
    openat(path, flags, 0)
}

/// `openat(AT_FDCWD, path, flags, mode)`.
fn openat(path: &str, flags: usize, mode: usize) -> Result<i32, Errno> {
    let path = c_string(path)?;
    // SAFETY: a NUL-terminated path the kernel only reads.
    let fd = unsafe {
        syscall6(
            nr::OPENAT,
            [AT_FDCWD as usize, path.as_ptr() as usize, flags, mode, 0, 0],
        )
    };
    Errno::result(fd).map(|fd| fd as i32)
}

/// Writes `text` to the file at `path` in one `write`, as `echo text > path` does (a sysfs
/// or debugfs file takes one value per write).
pub fn write_file(path: &str, text: &str) -> Result<(), Errno> {
    let fd = open(path, O_WRONLY)?;
    let written = crate::io::write(fd, text.as_bytes());
    let _ = crate::io::close(fd);
    written.map(drop)
}

/// `O_DIRECTORY`: open only a directory (ENOTDIR otherwise).
pub const O_DIRECTORY: usize = 0o200000;

/// The whole contents of the file at `path`, read in chunks until end of file (a file of
/// /proc has no size to ask for beforehand).
pub fn read_file(path: &str) -> Result<alloc::vec::Vec<u8>, Errno> {
    let fd = open(path, O_RDONLY)?;
    let mut contents = alloc::vec::Vec::new();
    let mut chunk = [0u8; 4096];
    let result = loop {
        match crate::io::read(fd, &mut chunk) {
            Ok(0) => break Ok(contents),
            Ok(n) => contents.extend_from_slice(&chunk[..n]),
            Err(e) => break Err(e),
        }
    };
    let _ = crate::io::close(fd);
    result
}

/// The names in the directory at `path` (`getdents64`), without `.` and `..`, in the
/// order the kernel gives them.
pub fn list_dir(path: &str) -> Result<alloc::vec::Vec<alloc::string::String>, Errno> {
    let fd = open(path, O_RDONLY | O_DIRECTORY)?;
    let mut names = alloc::vec::Vec::new();
    let mut buf = [0u8; 4096];
    let result = loop {
        // SAFETY: the kernel writes at most `buf.len()` bytes of entries into `buf`.
        let n = unsafe {
            syscall6(
                nr::GETDENTS64,
                [fd as usize, buf.as_mut_ptr() as usize, buf.len(), 0, 0, 0],
            )
        };
        let n = match Errno::result(n) {
            Ok(0) => break Ok(names),
            Ok(n) => n,
            Err(e) => break Err(e),
        };
        // struct linux_dirent64: u64 inode, i64 offset, u16 record length, u8 type, name.
        let mut at = 0;
        while at + 19 < n {
            let len = u16::from_le_bytes([buf[at + 16], buf[at + 17]]) as usize;
            if len == 0 {
                break;
            }
            let name = &buf[at + 19..(at + len).min(n)];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            if name != b"." && name != b".." {
                names.push(alloc::string::String::from_utf8_lossy(name).into_owned());
            }
            at += len;
        }
    };
    let _ = crate::io::close(fd);
    result
}

/// `mkdir(path, 0755)`.
pub fn mkdir(path: &str) -> Result<(), Errno> {
    let path = c_string(path)?;
    // SAFETY: a NUL-terminated path the kernel only reads.
    Errno::result(unsafe { syscall6(nr::MKDIR, [path.as_ptr() as usize, 0o755, 0, 0, 0, 0]) })
        .map(drop)
}

/// `mount(source, target, fstype, 0, NULL)`.
pub fn mount(source: &str, target: &str, fstype: &str) -> Result<(), Errno> {
    let (source, target, fstype) = (c_string(source)?, c_string(target)?, c_string(fstype)?);
    // SAFETY: NUL-terminated strings the kernel only reads; no data.
    let ret = unsafe {
        syscall6(
            nr::MOUNT,
            [
                source.as_ptr() as usize,
                target.as_ptr() as usize,
                fstype.as_ptr() as usize,
                0,
                0,
                0,
            ],
        )
    };
    Errno::result(ret).map(drop)
}
