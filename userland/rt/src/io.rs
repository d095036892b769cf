//! File descriptors: read, write, close, pipe, dup2, and the print macros. A print formats
//! into a buffer on the stack and issues one `write` per 256 bytes, so the lines of
//! processes writing at once do not interleave mid-line.

use crate::Errno;
use crate::sys::{call, nr};
use core::fmt;

pub const STDIN: i32 = 0;
pub const STDOUT: i32 = 1;
pub const STDERR: i32 = 2;

/// `write(fd, buf)`: the bytes written.
#[inline]
pub fn write(fd: i32, buf: &[u8]) -> Result<usize, Errno> {
    // SAFETY: the kernel reads `buf.len()` bytes from a live slice.
    unsafe { call(nr::WRITE, fd as usize, buf.as_ptr() as usize, buf.len()) }
}

/// Writes all of `buf`, retrying short writes.
pub fn write_all(fd: i32, mut buf: &[u8]) -> Result<(), Errno> {
    while !buf.is_empty() {
        let n = write(fd, buf)?;
        if n == 0 {
            return Err(Errno::EPIPE);
        }
        buf = &buf[n..];
    }
    Ok(())
}

/// `poll` on one descriptor for input (POLLIN), up to `timeout_ms` (negative: for ever):
/// whether it has input (or end of file) to read now.
pub fn wait_readable(fd: i32, timeout_ms: i32) -> Result<bool, Errno> {
    const POLLIN: i16 = 1;
    // struct pollfd: int fd, short events, short revents.
    let mut pollfd: [i32; 2] = [fd, i32::from(POLLIN)];
    // SAFETY: the kernel reads and writes one struct pollfd.
    let ready = unsafe {
        call(
            nr::POLL,
            pollfd.as_mut_ptr() as usize,
            1,
            timeout_ms as isize as usize,
        )
    }?;
    Ok(ready > 0)
}

/// Whether `fd` is a terminal: `ioctl(fd, TCGETS)` succeeds only on one (C's `isatty`).
pub fn is_terminal(fd: i32) -> bool {
    const TCGETS: usize = 0x5401;
    // struct termios: 60 bytes on x86_64.
    let mut termios = [0u8; 64];
    // SAFETY: the kernel writes at most one struct termios into the buffer.
    unsafe {
        call(
            nr::IOCTL,
            fd as usize,
            TCGETS,
            termios.as_mut_ptr() as usize,
        )
    }
    .is_ok()
}

/// `read(fd, buf)`: the bytes read, 0 at end of file.
#[inline]
pub fn read(fd: i32, buf: &mut [u8]) -> Result<usize, Errno> {
    // SAFETY: the kernel writes at most `buf.len()` bytes into a live, exclusive slice.
    unsafe { call(nr::READ, fd as usize, buf.as_mut_ptr() as usize, buf.len()) }
}

#[inline]
pub fn close(fd: i32) -> Result<(), Errno> {
    // SAFETY: no memory is involved.
    unsafe { call(nr::CLOSE, fd as usize, 0, 0) }.map(drop)
}

/// `pipe()`: (read end, write end).
pub fn pipe() -> Result<(i32, i32), Errno> {
    let mut fds = [0i32; 2];
    // SAFETY: the kernel writes two ints into `fds`.
    unsafe { call(nr::PIPE, fds.as_mut_ptr() as usize, 0, 0) }?;
    Ok((fds[0], fds[1]))
}

pub fn dup2(old: i32, new: i32) -> Result<i32, Errno> {
    // SAFETY: no memory is involved.
    unsafe { call(nr::DUP2, old as usize, new as usize, 0) }.map(|fd| fd as i32)
}

/// A `fmt::Write` that gathers output and writes it to `fd` in large pieces.
pub struct Writer {
    fd: i32,
    buf: [u8; 256],
    len: usize,
}

impl Writer {
    pub fn new(fd: i32) -> Self {
        Writer {
            fd,
            buf: [0; 256],
            len: 0,
        }
    }

    pub fn flush(&mut self) {
        let _ = write_all(self.fd, &self.buf[..self.len]);
        self.len = 0;
    }
}

impl fmt::Write for Writer {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            if self.len == self.buf.len() {
                self.flush();
            }
            self.buf[self.len] = b;
            self.len += 1;
        }
        Ok(())
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Prints to standard output.
#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => {{
        let mut w = $crate::io::Writer::new($crate::io::STDOUT);
        let _ = core::fmt::Write::write_fmt(&mut w, format_args!($($arg)*));
    }};
}

/// Prints a line to standard output.
#[macro_export]
macro_rules! println {
    () => { $crate::print!("\n") };
    ($($arg:tt)*) => {{
        let mut w = $crate::io::Writer::new($crate::io::STDOUT);
        let _ = core::fmt::Write::write_fmt(&mut w, format_args!($($arg)*));
        let _ = core::fmt::Write::write_str(&mut w, "\n");
    }};
}

/// Prints a line to standard error.
#[macro_export]
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        let mut w = $crate::io::Writer::new($crate::io::STDERR);
        let _ = core::fmt::Write::write_fmt(&mut w, format_args!($($arg)*));
        let _ = core::fmt::Write::write_str(&mut w, "\n");
    }};
}
