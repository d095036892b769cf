//! Files by path: `openat`, `mkdir` and `mount` — what an init needs to mount Linux's
//! pseudo file systems and write its tunables (`/sys/kernel/debug/sched/...`, cgroups).
//! cfslab has no file system yet ([5/5]), so there each call says ENOSYS.

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
    let path = c_string(path)?;
    // SAFETY: a NUL-terminated path the kernel only reads.
    let fd = unsafe {
        syscall6(
            nr::OPENAT,
            [
                AT_FDCWD as usize,
                path.as_ptr() as usize,
                O_WRONLY | O_CREAT | O_TRUNC,
                0o644,
                0,
                0,
            ],
        )
    };
    Errno::result(fd).map(|fd| fd as i32)
}

fn c_string(path: &str) -> Result<CString, Errno> {
    CString::new(path).map_err(|_| Errno::EINVAL)
}

/// `openat(AT_FDCWD, path, flags)`: a file descriptor.
pub fn open(path: &str, flags: usize) -> Result<i32, Errno> {
    let path = c_string(path)?;
    // SAFETY: a NUL-terminated path the kernel only reads.
    let fd = unsafe {
        syscall6(
            nr::OPENAT,
            [AT_FDCWD as usize, path.as_ptr() as usize, flags, 0, 0, 0],
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
