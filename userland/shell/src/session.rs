//! The shell's session: reading lines (from a terminal with a prompt, or from a pipe or
//! `-c`), running each command, and its state between them — the background jobs and the
//! last command's status.

use crate::builtins;
use crate::jobs::{Jobs, describe};
use crate::launch::{self, Setup};
use crate::parse::{self, Command};
use alloc::string::String;
use alloc::vec::Vec;
use rt::process::{self, Exit};

/// The shell between commands.
#[derive(Default)]
pub struct Session {
    pub jobs: Jobs,
    /// The last command's exit status (`exit` with no number uses it).
    pub status: i32,
    /// Set by `exit`.
    pub exiting: Option<i32>,
}

impl Session {
    /// Runs one line: every command of it, in order. A line that does not parse is one
    /// error line and status 2.
    pub fn run_line(&mut self, line: &str) {
        match parse::line(line) {
            Ok(commands) => {
                for command in commands {
                    self.run(&command);
                    if self.exiting.is_some() {
                        return;
                    }
                }
            }
            Err(why) => {
                rt::eprintln!("sh: {why}");
                self.status = 2;
            }
        }
    }

    fn run(&mut self, command: &Command) {
        self.status = match builtins::run(self, command) {
            Some(Ok(status)) => status,
            Some(Err(why)) => {
                rt::eprintln!("sh: {why}");
                2
            }
            None => self.start(&command.words, command, Setup::default(), false),
        };
    }

    /// Starts program `words` with `setup` (and the command's `> FILE`): in the background
    /// with `&`, else waits for it (`timed`: then prints its times, as `time` does).
    pub fn start(&mut self, words: &[String], command: &Command, setup: Setup, timed: bool) -> i32 {
        let setup = Setup {
            output: command.output.clone(),
            background: command.background,
            ..setup
        };
        let started_at = rt::time::now_ns();
        let pid = match launch::start(words, &setup) {
            Ok(pid) => pid,
            Err(why) => {
                rt::eprintln!("sh: {why}");
                return 126;
            }
        };
        if command.background {
            self.jobs.add(pid, words.join(" "));
            return 0;
        }
        self.wait_foreground(pid, timed.then_some(started_at))
    }

    /// Waits for the foreground process `pid`: its exit status (128 + signal if killed, as
    /// a POSIX shell says), a line if a signal other than Ctrl-C's ended it, and its times
    /// if `timed_from` says when it started.
    pub fn wait_foreground(&mut self, pid: i32, timed_from: Option<u64>) -> i32 {
        let Ok((_, exit, usage)) = process::wait_with_usage(pid) else {
            return 1;
        };
        if let Some(start) = timed_from {
            builtins::print_times(rt::time::now_ns() - start, usage);
        }
        match exit {
            Exit::Exited(status) => status,
            Exit::Killed(signal) => {
                if signal != process::SIGINT {
                    rt::eprintln!("{}", describe(exit));
                }
                128 + signal
            }
        }
    }
}

/// Reads lines from standard input until end of file or `exit`: the shell's main loop. With
/// a terminal it prompts (`# ` as root, `$ ` otherwise), ignores the terminal's keys —
/// Ctrl-C's SIGINT, Ctrl-\'s SIGQUIT, Ctrl-Z's SIGTSTP — which its foreground command takes
/// (the shell does no job control: its commands share its process group) and says
/// `exit` at end of file (Ctrl-D), as bash does. Ended background jobs are reported before
/// each line. The exit status is `exit`'s, or the last command's.
pub fn interact(session: &mut Session) -> i32 {
    let terminal = rt::io::is_terminal(0);
    if terminal {
        for signal in process::TERMINAL_KEYS {
            let _ = process::ignore_signal(signal);
        }
    }
    let prompt = if process::getuid() == 0 { "# " } else { "$ " };
    let mut lines = LineReader::default();
    loop {
        session.jobs.reap_ended();
        if terminal {
            rt::print!("{prompt}");
        }
        let Some(line) = lines.next() else {
            if terminal {
                rt::println!("exit");
            }
            break;
        };
        match line {
            Ok(line) => session.run_line(&line),
            Err(why) => {
                rt::eprintln!("sh: {why}");
                session.status = 2;
            }
        }
        if let Some(status) = session.exiting {
            return status;
        }
    }
    session.status
}

/// Lines of standard input, read in chunks. A line longer than [`parse::MAX_LINE`] is
/// skipped whole (up to its newline) and given as an error; bytes that are not UTF-8 too.
#[derive(Default)]
struct LineReader {
    buffer: Vec<u8>,
    ended: bool,
}

impl LineReader {
    fn next(&mut self) -> Option<Result<String, String>> {
        let mut overlong = 0usize;
        loop {
            if let Some(newline) = self.buffer.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=newline).collect();
                let line = &line[..line.len() - 1];
                if overlong > 0 {
                    return Some(Err(too_long(overlong + line.len())));
                }
                return Some(text(line));
            }
            if self.buffer.len() > parse::MAX_LINE {
                overlong += self.buffer.len();
                self.buffer.clear();
            }
            if self.ended {
                if overlong > 0 {
                    return Some(Err(too_long(overlong + self.buffer.len())));
                }
                if self.buffer.is_empty() {
                    return None;
                }
                let rest = core::mem::take(&mut self.buffer);
                return Some(text(&rest));
            }
            let mut chunk = [0u8; 512];
            match rt::io::read(0, &mut chunk) {
                Ok(0) | Err(_) => self.ended = true,
                Ok(n) => self.buffer.extend_from_slice(&chunk[..n]),
            }
        }
    }
}

fn too_long(bytes: usize) -> String {
    alloc::format!("line too long ({bytes} bytes; at most {})", parse::MAX_LINE)
}

fn text(line: &[u8]) -> Result<String, String> {
    core::str::from_utf8(line)
        .map(String::from)
        .map_err(|_| String::from("a line that is not UTF-8"))
}
