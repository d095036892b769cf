//! Descriptors themselves, apart from the files they name: `dup`, `dup2`, `dup3` and
//! `fcntl` (Linux's fs/file.c and fs/fcntl.c). A descriptor has one flag of its own,
//! close-on-exec, which `execve` acts on; the file's access mode is the open file's.

use super::errno;
use super::io::file;
use crate::sched;
use crate::user::files::File;
use crate::user::fs::open_file::flags::O_CLOEXEC;

const FD_CLOEXEC: i64 = 1;

pub fn dup(fd: u64) -> i64 {
    fcntl(fd, F_DUPFD, 0)
}

pub fn dup2(old: u64, new: u64) -> i64 {
    if old == new {
        // Linux: `new` if `old` is open, else EBADF.
        return file(old).map_or_else(|e| e, |_| new as i64);
    }
    dup3(old, new, 0)
}

/// `dup3(old, new, flags)`: `old`'s file also at `new` (what was there is closed), with
/// close-on-exec if `flags` has O_CLOEXEC; EINVAL if `old` is `new` or for other flags.
pub fn dup3(old: u64, new: u64, flags: u64) -> i64 {
    if old == new || flags & !O_CLOEXEC != 0 {
        return -errno::EINVAL;
    }
    let (file, files) = match (file(old), sched::current_files()) {
        (Ok(f), Some(t)) => (f, t),
        _ => return -errno::EBADF,
    };
    let replaced = {
        let mut table = files.lock();
        let replaced = table.install_at(new as usize, file);
        if replaced.is_some() {
            table.set_close_on_exec(new as usize, flags & O_CLOEXEC != 0);
        }
        replaced
    };
    // What was at `new` is closed after the table's lock (a pipe's end wakes its peer).
    match replaced {
        Some(previous) => {
            drop(previous);
            new as i64
        }
        None => -errno::EBADF,
    }
}

const F_DUPFD: u64 = 0;
const F_GETFD: u64 = 1;
const F_SETFD: u64 = 2;
const F_GETFL: u64 = 3;
const F_SETFL: u64 = 4;
const F_DUPFD_CLOEXEC: u64 = 1030;

/// `fcntl(fd, cmd, arg)`: F_DUPFD and F_DUPFD_CLOEXEC (the lowest free descriptor from
/// `arg` on), F_GETFD and F_SETFD (close-on-exec), F_GETFL (the access mode) and F_SETFL
/// (accepted; O_NONBLOCK and O_APPEND are not honoured: cfslab's pipes and console always
/// block, and nothing is appended to). Other commands: EINVAL.
pub fn fcntl(fd: u64, cmd: u64, arg: u64) -> i64 {
    let (file, files) = match (file(fd), sched::current_files()) {
        (Ok(f), Some(t)) => (f, t),
        _ => return -errno::EBADF,
    };
    let fd = fd as usize;
    match cmd {
        F_DUPFD | F_DUPFD_CLOEXEC => {
            // The lowest descriptor wanted is an `int`: negative, or past the limit, EINVAL.
            let arg = arg as u32;
            let mut table = files.lock();
            if arg as usize >= table.limit().soft {
                return -errno::EINVAL;
            }
            let installed = table.install_from(arg as usize, file, cmd == F_DUPFD_CLOEXEC);
            installed.map_or(-errno::EMFILE, |fd| fd as i64)
        }
        F_GETFD => match files.lock().close_on_exec(fd) {
            Some(on) => i64::from(on) * FD_CLOEXEC,
            None => -errno::EBADF,
        },
        F_SETFD => match files
            .lock()
            .set_close_on_exec(fd, arg as i64 & FD_CLOEXEC != 0)
        {
            Some(()) => 0,
            None => -errno::EBADF,
        },
        F_GETFL => access_mode(&file),
        F_SETFL => 0,
        _ => -errno::EINVAL,
    }
}

/// O_RDONLY, O_WRONLY or O_RDWR, as the file was opened.
fn access_mode(file: &File) -> i64 {
    let (readable, writable) = match file {
        File::Console => (true, true),
        File::Pipe { write, .. } => (!write, *write),
        File::Node(node) => (node.readable, node.writable),
    };
    match (readable, writable) {
        (true, true) => 2,
        (false, true) => 1,
        _ => 0,
    }
}
