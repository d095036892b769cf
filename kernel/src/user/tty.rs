//! The console as a terminal: what the serial port receives goes through a line discipline
//! in canonical mode, as Linux's `n_tty` with its default termios (ICANON, ECHO, ECHOE,
//! ECHOK, ISIG, ICRNL), before a program reads it:
//!
//! - a typed character is echoed and added to the line being edited (at most
//!   [`MAX_LINE`] bytes; more are dropped, as Linux drops them);
//! - Enter (CR, turned into NL) ends the line, which a `read` may then take;
//! - Backspace (DEL or BS) erases the last character, Ctrl-U the whole line;
//! - Ctrl-C throws the line away and sends SIGINT to the terminal's foreground processes —
//!   cfslab has no process groups, so every process (a shell ignores SIGINT; its
//!   background jobs too, as POSIX has a shell without job control start them);
//! - Ctrl-D ends the line without a newline; on an empty line it is end-of-file: that
//!   `read` returns 0.
//!
//! A `read` takes at most one line (a long line in several reads) and waits until a line is
//! there. What it does not do: raw mode (`tcsetattr`), job control (SIGTSTP, SIGTTIN).

use crate::sched::WaitQueue;
use crate::sync::{Rank, SpinLock};
use alloc::collections::VecDeque;
use alloc::vec::Vec;

/// The longest line (Linux's N_TTY_BUF_SIZE is 4096, one byte kept for the newline).
pub const MAX_LINE: usize = 4095;
/// How many typed lines may wait for a reader; typing past them is dropped.
const MAX_LINES: usize = 64;

const CTRL_C: u8 = 0x03;
const CTRL_D: u8 = 0x04;
const BACKSPACE: u8 = 0x08;
const CTRL_U: u8 = 0x15;
const DELETE: u8 = 0x7f;
const SIGINT: u8 = 2;

/// The terminal's `struct termios` as TCGETS gives it (the kernel's layout, 36 bytes):
/// c_iflag ICRNL | IXON, c_oflag OPOST | ONLCR, c_cflag B38400 | CS8 | CREAD | HUPCL,
/// c_lflag ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN, line 0, then
/// the control characters: those this line discipline acts on, and Linux's defaults for
/// the rest.
pub const TERMIOS: [u8; 36] = {
    let mut t = [0u8; 36];
    let flags: [u32; 4] = [0x500, 0x5, 0x4bf, 0x8a3b];
    let mut i = 0;
    while i < 4 {
        let b = flags[i].to_le_bytes();
        t[4 * i] = b[0];
        t[4 * i + 1] = b[1];
        t[4 * i + 2] = b[2];
        t[4 * i + 3] = b[3];
        i += 1;
    }
    // c_cc from offset 17: VINTR, VQUIT (^\), VERASE, VKILL, VEOF, VTIME, VMIN, VSWTC,
    // VSTART (^Q), VSTOP (^S), VSUSP (^Z), VEOL, VREPRINT (^R), VDISCARD (^O), VWERASE (^W),
    // VLNEXT (^V), VEOL2.
    let cc = [
        CTRL_C, 0x1c, DELETE, CTRL_U, CTRL_D, 0, 1, 0, 0x11, 0x13, 0x1a, 0, 0x12, 0x0f, 0x17, 0x16,
        0,
    ];
    let mut j = 0;
    while j < cc.len() {
        t[17 + j] = cc[j];
        j += 1;
    }
    t
};

/// The terminal's `struct winsize` as TIOCGWINSZ gives it: 24 rows, 80 columns, and two
/// unused pixel sizes.
pub const WINSIZE: [u8; 8] = [24, 0, 80, 0, 0, 0, 0, 0];

struct Terminal {
    /// The line being typed.
    editing: Vec<u8>,
    /// Lines ended and not yet read; an empty one is an end-of-file (Ctrl-D on an empty
    /// line). The front one may be partly read.
    lines: VecDeque<Vec<u8>>,
}

static TERMINAL: SpinLock<Terminal> = SpinLock::new(
    Rank::Terminal,
    Terminal {
        editing: Vec::new(),
        lines: VecDeque::new(),
    },
);

/// Readers waiting for a line.
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
    LineEnded,
    Interrupt,
}

impl Terminal {
    fn edit(&mut self, byte: u8) -> After {
        match byte {
            b'\r' | b'\n' => {
                echo(b"\n");
                let mut line = core::mem::take(&mut self.editing);
                line.push(b'\n');
                self.end_line(line)
            }
            CTRL_D => {
                let line = core::mem::take(&mut self.editing);
                self.end_line(line)
            }
            DELETE | BACKSPACE => {
                if self.editing.pop().is_some() {
                    echo(b"\x08 \x08");
                }
                After::Nothing
            }
            CTRL_U => {
                for _ in 0..self.editing.len() {
                    echo(b"\x08 \x08");
                }
                self.editing.clear();
                After::Nothing
            }
            CTRL_C => {
                self.editing.clear();
                echo(b"^C\n");
                After::Interrupt
            }
            _ if self.editing.len() < MAX_LINE => {
                self.editing.push(byte);
                echo(&[byte]);
                After::Nothing
            }
            _ => After::Nothing,
        }
    }

    fn end_line(&mut self, line: Vec<u8>) -> After {
        if self.lines.len() < MAX_LINES {
            self.lines.push_back(line);
        }
        After::LineEnded
    }
}

/// Takes a byte the serial port received, in its interrupt handler: edits, echoes, wakes
/// the readers when a line has ended, and interrupts the foreground on Ctrl-C.
pub fn received(byte: u8) {
    match with(|t| t.edit(byte)) {
        After::Nothing => {}
        After::LineEnded => READERS.wake_all(),
        After::Interrupt => crate::sched::proc::signal::signal_every_process(
            SIGINT,
            crate::sched::proc::sighand::SigInfo {
                code: crate::sched::proc::sighand::SI_KERNEL,
                ..Default::default()
            },
        ),
    }
}

/// Opens the terminal to what is typed: the keys typed since boot first, none lost (called
/// as the first program starts; until then the keys wait outside the kernel).
pub fn start() {
    crate::arch::serial::start_input(received);
}

/// Whether a `read` would return at once (a line, or end-of-file, is there).
pub fn readable() -> bool {
    with(|t| !t.lines.is_empty())
}

/// The queue readers sleep on until a line ends.
pub fn wait_queue() -> &'static WaitQueue {
    &READERS
}

/// Reads into `out` up to the end of the first line typed: waits until there is one. 0
/// bytes is end-of-file (Ctrl-D on an empty line). `None` if `interrupted()` ended the wait
/// first.
pub fn read(out: &mut [u8], interrupted: impl Fn() -> bool) -> Option<usize> {
    READERS.wait_until(|| interrupted() || readable());
    with(|t| {
        let line = t.lines.front_mut()?;
        if line.is_empty() {
            t.lines.pop_front();
            return Some(0);
        }
        let n = out.len().min(line.len());
        out[..n].copy_from_slice(&line[..n]);
        line.drain(..n);
        if line.is_empty() {
            t.lines.pop_front();
        }
        Some(n)
    })
}
