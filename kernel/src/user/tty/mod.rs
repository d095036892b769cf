//! The console as a terminal: what the serial port receives goes through a line discipline,
//! as Linux's `n_tty` does, before a program reads it; and the terminal belongs to a
//! session, whose foreground process group its keys signal (job control).
//!
//! In canonical mode (ICANON, the default):
//! - a typed character is echoed (ECHO) and added to the line being edited (at most
//!   [`MAX_LINE`] bytes; more are dropped, as Linux drops them);
//! - Enter (CR, turned into NL by ICRNL) ends the line, which a `read` may then take;
//! - VERASE (DEL) or Backspace erases the last character, VKILL (Ctrl-U) the whole line;
//! - VEOF (Ctrl-D) ends the line without a newline; on an empty line it is end-of-file:
//!   that `read` returns 0.
//!
//! A canonical `read` takes at most one line (a long line in several reads) and waits
//! until a line is there. In non-canonical mode (what `ash`'s line editing and `top` set
//! with TCSETS) each byte is there to read as it comes, echoed only with ECHO, and a `read`
//! waits as VMIN and VTIME say.
//!
//! With ISIG (the default), VINTR (Ctrl-C), VQUIT (Ctrl-\) and VSUSP (Ctrl-Z) throw the
//! input away and send SIGINT, SIGQUIT or SIGTSTP to the foreground process group. A
//! process of another group of the session that reads gets SIGTTIN instead (EIO if it
//! ignores or blocks it), and one that changes the settings or the foreground group gets
//! SIGTTOU unless it ignores or blocks it — how a shell's background jobs stop when they
//! touch the terminal. The first program's session has the console (see `job`).

pub mod job;
pub mod termios;

use crate::sched::WaitQueue;
use crate::sched::proc::sighand::{SIGINT, SIGQUIT, SIGTSTP};
use crate::sync::{Rank, SpinLock};
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use termios::{ECHO, ICANON, ICRNL, ISIG, Termios, VEOF, VERASE, VINTR, VKILL, VQUIT, VSUSP};

/// The longest line (Linux's N_TTY_BUF_SIZE is 4096, one byte kept for the newline).
pub const MAX_LINE: usize = 4095;
/// How many typed lines may wait for a reader; typing past them is dropped.
const MAX_LINES: usize = 64;
/// How many bytes may wait for a reader in non-canonical mode.
const MAX_RAW: usize = 4096;

const BACKSPACE: u8 = 0x08;

struct Terminal {
    settings: Termios,
    /// The line being typed (canonical mode).
    editing: Vec<u8>,
    /// Lines ended and not yet read; an empty one is an end-of-file (Ctrl-D on an empty
    /// line). The front one may be partly read.
    lines: VecDeque<Vec<u8>>,
    /// Bytes typed in non-canonical mode, not yet read.
    raw: VecDeque<u8>,
    /// The session the console is the controlling terminal of, and its foreground
    /// process group (pids; 0: none).
    session: u32,
    foreground: u32,
}

static TERMINAL: SpinLock<Terminal> = SpinLock::new(
    Rank::Terminal,
    Terminal {
        settings: Termios::DEFAULT,
        editing: Vec::new(),
        lines: VecDeque::new(),
        raw: VecDeque::new(),
        session: 0,
        foreground: 0,
    },
);

/// Readers waiting for input.
static READERS: WaitQueue = WaitQueue::new();

fn with<R>(f: impl FnOnce(&mut Terminal) -> R) -> R {
    f(&mut TERMINAL.lock())
}

fn echo(bytes: &[u8]) {
    crate::arch::serial::write_bytes(bytes);
}

/// What a byte received asks for, beyond the editing itself.
enum After {
    Nothing,
    Readable,
    Signal(u8),
}

impl Terminal {
    fn receive(&mut self, byte: u8) -> After {
        let s = self.settings;
        let byte = if byte == b'\r' && s.iflag() & ICRNL != 0 {
            b'\n'
        } else {
            byte
        };
        if s.lflag() & ISIG != 0 {
            let keys = [
                (VINTR, SIGINT, &b"^C\n"[..]),
                (VQUIT, SIGQUIT, b"^\\\n"),
                (VSUSP, SIGTSTP, b"^Z\n"),
            ];
            if let Some(&(_, signal, shown)) = keys.iter().find(|(key, ..)| s.is(byte, *key)) {
                self.editing.clear();
                self.raw.clear();
                if s.lflag() & ECHO != 0 {
                    echo(shown);
                }
                return After::Signal(signal);
            }
        }
        if s.lflag() & ICANON == 0 {
            if self.raw.len() < MAX_RAW {
                self.raw.push_back(byte);
                if s.lflag() & ECHO != 0 {
                    echo(&[byte]);
                }
            }
            return After::Readable;
        }
        self.edit(byte)
    }

    /// Canonical mode's editing.
    fn edit(&mut self, byte: u8) -> After {
        let s = self.settings;
        let echoing = s.lflag() & ECHO != 0;
        let show = |bytes: &[u8]| {
            if echoing {
                echo(bytes)
            }
        };
        if byte == b'\n' {
            show(b"\n");
            let mut line = core::mem::take(&mut self.editing);
            line.push(b'\n');
            self.end_line(line)
        } else if s.is(byte, VEOF) {
            let line = core::mem::take(&mut self.editing);
            self.end_line(line)
        } else if s.is(byte, VERASE) || byte == BACKSPACE {
            if self.editing.pop().is_some() {
                show(b"\x08 \x08");
            }
            After::Nothing
        } else if s.is(byte, VKILL) {
            for _ in 0..self.editing.len() {
                show(b"\x08 \x08");
            }
            self.editing.clear();
            After::Nothing
        } else if self.editing.len() < MAX_LINE {
            self.editing.push(byte);
            show(&[byte]);
            After::Nothing
        } else {
            After::Nothing
        }
    }

    fn end_line(&mut self, line: Vec<u8>) -> After {
        if self.lines.len() < MAX_LINES {
            self.lines.push_back(line);
        }
        After::Readable
    }

    fn readable(&self) -> bool {
        if self.settings.lflag() & ICANON != 0 {
            !self.lines.is_empty()
        } else {
            !self.raw.is_empty()
        }
    }

    /// New settings; input typed under the old mode carries over to the new one.
    fn set(&mut self, settings: Termios, flush: bool) {
        let was_canonical = self.settings.lflag() & ICANON != 0;
        self.settings = settings;
        if flush {
            self.editing.clear();
            self.lines.clear();
            self.raw.clear();
        }
        match (was_canonical, settings.lflag() & ICANON != 0) {
            (true, false) => {
                self.raw.extend(self.lines.drain(..).flatten());
                self.raw.extend(self.editing.drain(..));
            }
            (false, true) => self.editing.extend(self.raw.drain(..)),
            _ => {}
        }
    }
}

/// Takes a byte the serial port received, in its interrupt handler: edits, echoes, wakes
/// the readers when there is input, and signals the foreground on VINTR, VQUIT, VSUSP.
pub fn received(byte: u8) {
    match with(|t| t.receive(byte)) {
        After::Nothing => {}
        After::Readable => READERS.wake_all(),
        After::Signal(signal) => {
            READERS.wake_all();
            job::signal_foreground(signal);
        }
    }
}

/// Lets the console's input in: the serial port's interrupt is unmasked only now, when the
/// first program starts, so that keys typed during the boot wait in the UART's FIFO (and
/// nothing is allocated for them before the self-check).
pub fn start() {
    crate::arch::serial::start_input(received);
}

/// Whether a `read` would return at once (a line, or end-of-file, or in non-canonical mode
/// a byte, is there).
pub fn readable() -> bool {
    with(|t| t.readable())
}

/// The queue readers sleep on until there is input.
pub fn wait_queue() -> &'static WaitQueue {
    &READERS
}

/// Reads into `out`: in canonical mode up to the end of the first line typed, waiting until
/// there is one (0 bytes is end-of-file: Ctrl-D on an empty line); in non-canonical mode as
/// VMIN and VTIME say. Fails with ERESTARTSYS if `interrupted()` ended the wait first, and
/// as [`job::may_read`] says for a background process.
pub fn read(out: &mut [u8], interrupted: impl Fn() -> bool) -> Result<usize, i64> {
    job::may_read()?;
    let settings = with(|t| t.settings);
    if settings.lflag() & ICANON == 0 {
        return read_raw(out, settings, interrupted);
    }
    READERS.wait_until(|| interrupted() || readable());
    with(|t| {
        let Some(line) = t.lines.front_mut() else {
            return Err(-crate::user::errno::ERESTARTSYS);
        };
        if line.is_empty() {
            t.lines.pop_front();
            return Ok(0);
        }
        let n = out.len().min(line.len());
        out[..n].copy_from_slice(&line[..n]);
        line.drain(..n);
        if line.is_empty() {
            t.lines.pop_front();
        }
        Ok(n)
    })
}

/// A non-canonical read (POSIX's four cases, as Linux's `n_tty_read` serves them): VMIN 0
/// and VTIME 0 takes what is there (perhaps nothing); VMIN 0 and VTIME t waits up to t
/// tenths of a second for a byte; VMIN n waits for n bytes (or as many as `out` holds); VMIN
/// n and VTIME t waits for a first byte without limit, then for each next one at most t
/// tenths — a gap that long ends the read with what came (how a program tells an Escape key
/// from the start of an arrow key's sequence).
fn read_raw(
    out: &mut [u8],
    settings: Termios,
    interrupted: impl Fn() -> bool,
) -> Result<usize, i64> {
    let (min, time) = (settings.cc(termios::VMIN), settings.cc(termios::VTIME));
    let wanted = usize::from(min).min(out.len());
    let gap = u64::from(time) * 100_000_000;
    let queued = || with(|t| t.raw.len());
    if min == 0 && time != 0 {
        let deadline = crate::time::clock::now() + gap;
        job::wait_for_input(deadline, &|| interrupted() || queued() > 0);
    } else if wanted > 0 && time != 0 {
        READERS.wait_until(|| interrupted() || queued() > 0);
        loop {
            let had = queued();
            if had == 0 || had >= wanted || interrupted() {
                break;
            }
            let deadline = crate::time::clock::now() + gap;
            job::wait_for_input(deadline, &|| interrupted() || queued() > had);
            if queued() == had {
                break;
            }
        }
    } else if wanted > 0 {
        READERS.wait_until(|| interrupted() || queued() >= wanted);
    }
    let n = with(|t| {
        let n = out.len().min(t.raw.len());
        for (to, from) in out.iter_mut().zip(t.raw.drain(..n)) {
            *to = from;
        }
        n
    });
    if n == 0 && wanted > 0 {
        return Err(-crate::user::errno::ERESTARTSYS);
    }
    Ok(n)
}

/// The console's ioctls (TCGETS and the rest): see [`job::ioctl`].
pub use job::ioctl;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched;
    use crate::time::clock;

    const MS: u64 = 1_000_000;

    /// Types `a`, 50 ms later `b`, then nothing for 500 ms, then `c`.
    fn typist(_: u64) {
        received(b'a');
        sched::sleep(50 * MS);
        received(b'b');
        sched::sleep(500 * MS);
        received(b'c');
    }

    /// VMIN 3 and VTIME 2: the read waits for the first byte, then at most 200 ms for each
    /// next one. The gap after `b` is 500 ms, so the read ends with `ab` 200 ms after `b`
    /// came (250 ms from the start, give or take the timer's slack), without waiting for
    /// the third byte.
    #[test_case]
    fn a_gap_longer_than_vtime_ends_a_read_before_vmin() {
        let mut raw = Termios::DEFAULT;
        let lflag = raw.lflag() & !(ICANON | ECHO);
        raw.0[12..16].copy_from_slice(&lflag.to_le_bytes());
        raw.0[17 + termios::VMIN] = 3;
        raw.0[17 + termios::VTIME] = 2;
        with(|t| t.set(raw, true));
        let start = clock::now();
        let typist = sched::spawn(typist, 0, "typist", 0, 0).unwrap();
        let mut buf = [0; 8];
        let n = read_raw(&mut buf, raw, || false).unwrap();
        let took = clock::now() - start;
        assert_eq!(&buf[..n], b"ab");
        assert!((249 * MS..270 * MS).contains(&took), "{took} ns");
        sched::join(typist);
        with(|t| {
            t.set(Termios::DEFAULT, true);
            t.raw.clear();
        });
    }
}
