//! File descriptors: `read`, `write`, `writev`, `sendfile`, `close`, `pipe`, `ioctl`.
//! Opening files by path, seeking and listing are `fs.rs`'s.

use super::{errno, space};
use crate::sched;
use crate::user::files::{File, Pipe};
use crate::user::fs::open_file::flags::O_CLOEXEC;
use alloc::sync::Arc;
use core::mem::MaybeUninit;

/// Most bytes one `read` or `write` moves at a time: a short count, as POSIX allows, for
/// everything but a write to a pipe, which moves them all ([`write`]).
const IO_MAX: usize = 64 * 1024;

/// Transfers up to this size (a pipe's byte, a line of text: nearly all of them) are staged
/// in a buffer on the kernel stack; larger ones on the heap. A heap allocation costs more
/// than the rest of a one-byte pipe write (the allocator walks its free list).
const STACK_BUFFER: usize = 256;

/// Runs `f` on a zeroed staging buffer of `len` bytes (`len` at most [`IO_MAX`]). Only the
/// `len` bytes used are zeroed: zeroing the whole stack buffer for a one-byte pipe transfer
/// was a tenth of the ping-pong's cost (`cargo boot run --profile`).
fn with_buffer<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    if len <= STACK_BUFFER {
        let mut stack = [const { MaybeUninit::<u8>::uninit() }; STACK_BUFFER];
        f(stack[..len].write_filled(0))
    } else {
        f(&mut alloc::vec![0u8; len])
    }
}

pub(super) fn file(fd: u64) -> Result<Arc<File>, i64> {
    let files = sched::current_files().ok_or(-errno::EBADF)?;
    let file = files.lock().get(fd as i64);
    file.ok_or(-errno::EBADF)
}

/// Whether the running thread has a signal to take (or was killed): a blocked read or
/// write gives up, and the call is restarted or fails with EINTR (`user::signal`).
fn interrupted() -> bool {
    sched::signal_pending()
}

/// `write(fd, buf, len)`. To a pipe every byte goes, [`IO_MAX`] at a time, the writer
/// waiting while the reader drains it (POSIX's blocking write; Linux's `pipe_write`); it
/// stops short only if the reader goes or a signal comes, and says how much went.
pub fn write(fd: u64, buf: u64, len: u64) -> i64 {
    let file = match file(fd) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let all = matches!(*file, File::Pipe { write: true, .. });
    let mut done = 0;
    loop {
        let chunk = (len - done).min(IO_MAX as u64);
        let wrote = with_buffer(chunk as usize, |bytes| {
            if space().read(buf.wrapping_add(done), bytes).is_err() {
                return -errno::EFAULT;
            }
            write_to(&file, bytes)
        });
        if wrote < 0 {
            return if done > 0 { done as i64 } else { wrote };
        }
        done += wrote as u64;
        if !all || (wrote as u64) < chunk || done == len {
            return done as i64;
        }
    }
}

fn write_to(file: &File, bytes: &[u8]) -> i64 {
    match file {
        File::Console => {
            crate::arch::serial::with_console(|out| {
                let _ = out.write_str(&alloc::string::String::from_utf8_lossy(bytes));
            });
            bytes.len() as i64
        }
        File::Node(node) => node.write(bytes).map_or_else(|e| e, |n| n as i64),
        File::Pipe { write: false, .. } => -errno::EBADF,
        File::Pipe { pipe, write: true } => write_pipe(pipe, bytes),
    }
}

/// Writes all of `bytes` to `pipe`, waiting while it is full; short only if its reader goes
/// (after some bytes) or a signal comes.
fn write_pipe(pipe: &Pipe, bytes: &[u8]) -> i64 {
    let mut done = 0;
    while done < bytes.len() {
        match pipe.write(&bytes[done..], interrupted) {
            Some(0) if interrupted() && done == 0 => return -errno::ERESTARTSYS,
            Some(0) if interrupted() => break,
            Some(n) => done += n,
            None => {
                // No reader left: SIGPIPE (Linux's pipe_write), which ends the writer at the
                // end of this call at its default action, is dropped if ignored and kept
                // pending if blocked; the call itself says EPIPE unless some bytes went.
                const SIGPIPE: u8 = 13;
                crate::sched::proc::signal::deliver(sched::current(), SIGPIPE);
                return if done > 0 { done as i64 } else { -errno::EPIPE };
            }
        }
    }
    done as i64
}

/// `writev(fd, iov, count)`: each (base, len) in turn, as musl's stdio writes.
pub fn writev(fd: u64, iov: u64, count: u64) -> i64 {
    if count > 1024 {
        return -errno::EINVAL;
    }
    let mut raw = alloc::vec![0u8; count as usize * 16];
    if space().read(iov, &mut raw).is_err() {
        return -errno::EFAULT;
    }
    let mut total = 0;
    for pair in raw.as_chunks::<16>().0 {
        let base = u64::from_le_bytes(pair[..8].try_into().unwrap_or_default());
        let len = u64::from_le_bytes(pair[8..].try_into().unwrap_or_default());
        if len == 0 {
            continue;
        }
        let n = write(fd, base, len);
        if n < 0 {
            return if total > 0 { total } else { n };
        }
        total += n;
        if (n as u64) < len {
            break;
        }
    }
    total
}

pub fn read(fd: u64, buf: u64, len: u64) -> i64 {
    let file = match file(fd) {
        Ok(f) => f,
        Err(e) => return e,
    };
    with_buffer((len as usize).min(IO_MAX), |bytes| {
        let n = match read_from(&file, bytes) {
            Ok(n) => n,
            Err(e) => return e,
        };
        match space().write(buf, &bytes[..n]) {
            Ok(()) => n as i64,
            Err(_) => -errno::EFAULT,
        }
    })
}

/// Reads from `file` into `bytes` (what `read` and `sendfile` share).
fn read_from(file: &File, bytes: &mut [u8]) -> Result<usize, i64> {
    match file {
        File::Console => crate::user::tty::read(bytes, interrupted),
        File::Pipe { write: true, .. } => Err(-errno::EBADF),
        File::Pipe { pipe, write: false } => {
            pipe.read(bytes, interrupted).ok_or(-errno::ERESTARTSYS)
        }
        File::Node(node) => node.read(bytes),
    }
}

/// `sendfile(out_fd, in_fd, offset, count)`: copies up to `count` bytes from `in_fd` to
/// `out_fd` in the kernel, [`IO_MAX`] at a time, as `cat` does with it; with an `offset`
/// pointer, reads from there and moves it instead of the file's position. Returns how many
/// bytes went (a short count if the reader ran dry or the writer stopped).
pub fn sendfile(out_fd: u64, in_fd: u64, offset: u64, count: u64) -> i64 {
    let (input, output) = match (file(in_fd), file(out_fd)) {
        (Ok(i), Ok(o)) => (i, o),
        _ => return -errno::EBADF,
    };
    let mut position = None;
    if offset != 0 {
        let File::Node(node) = &*input else {
            return -errno::ESPIPE;
        };
        let mut raw = [0u8; 8];
        if space().read(offset, &mut raw).is_err() {
            return -errno::EFAULT;
        }
        let at = i64::from_le_bytes(raw);
        let saved = node.seek(0, 1).unwrap_or(0);
        if let Err(e) = node.seek(at, 0) {
            return e;
        }
        position = Some((node, saved));
    }
    let mut done = 0u64;
    let result = loop {
        let chunk = (count - done).min(IO_MAX as u64) as usize;
        if chunk == 0 {
            break Ok(());
        }
        let step = with_buffer(chunk, |bytes| {
            let n = read_from(&input, bytes)?;
            if n == 0 {
                return Ok(0);
            }
            let wrote = write_to(&output, &bytes[..n]);
            if wrote < 0 {
                Err(wrote)
            } else {
                Ok(wrote as usize)
            }
        });
        match step {
            Ok(0) => break Ok(()),
            Ok(n) => done += n as u64,
            Err(e) => break Err(e),
        }
    };
    if let Some((node, saved)) = position {
        let end = node.seek(0, 1).unwrap_or(0);
        let _ = node.seek(saved as i64, 0);
        if space().write(offset, &end.to_le_bytes()).is_err() {
            return -errno::EFAULT;
        }
    }
    match result {
        Err(e) if done == 0 => e,
        _ => done as i64,
    }
}

pub fn close(fd: u64) -> i64 {
    let Some(files) = sched::current_files() else {
        return -errno::EBADF;
    };
    let closed = files.lock().close(fd as i64);
    // The file itself goes (waking a pipe's other end) after the table's lock.
    match closed {
        Some(file) => {
            drop(file);
            0
        }
        None => -errno::EBADF,
    }
}

/// `pipe2(fds, flags)`: O_CLOEXEC marks both descriptors close-on-exec. Flags Linux does
/// not know give EINVAL; O_NONBLOCK and O_DIRECT are accepted and, as yet, do nothing:
/// cfslab's pipes always block and carry a byte stream.
pub fn pipe2(fds: u64, flags: u64) -> i64 {
    const KNOWN: u64 = O_CLOEXEC | 0o4000 | 0o40000; // | O_NONBLOCK | O_DIRECT
    if flags & !KNOWN != 0 {
        return -errno::EINVAL;
    }
    pipe_with(fds, flags & O_CLOEXEC != 0)
}

pub fn pipe(fds: u64) -> i64 {
    pipe_with(fds, false)
}

fn pipe_with(fds: u64, close_on_exec: bool) -> i64 {
    let Some(files) = sched::current_files() else {
        return -errno::EBADF;
    };
    let Some((r, w)) = Pipe::open() else {
        return -errno::ENFILE;
    };
    let installed = {
        let mut table = files.lock();
        match table.install_from(0, Arc::new(r), close_on_exec) {
            None => None,
            Some(r) => match table.install_from(0, Arc::new(w), close_on_exec) {
                Some(w) => Some((r, w)),
                None => {
                    table.close(r as i64);
                    None
                }
            },
        }
    };
    let Some((r, w)) = installed else {
        return -errno::EMFILE;
    };
    let mut out = [0u8; 8];
    out[..4].copy_from_slice(&(r as i32).to_le_bytes());
    out[4..].copy_from_slice(&(w as i32).to_le_bytes());
    if space().write(fds, &out).is_err() {
        let _ = (close(r as u64), close(w as u64));
        return -errno::EFAULT;
    }
    0
}

/// `ioctl(fd, request, arg)`. The console is a terminal, whose requests `user::tty`
/// answers; any request on another file: ENOTTY.
pub fn ioctl(fd: u64, request: u64, arg: u64) -> i64 {
    let file = match file(fd) {
        Ok(f) => f,
        Err(e) => return e,
    };
    if !matches!(*file, File::Console) {
        return -errno::ENOTTY;
    }
    crate::user::tty::ioctl(request, arg)
}
