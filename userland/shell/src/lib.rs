//! cfslab's shell, `/bin/sh`: the session a student plays with the scheduler in. What it does: reads lines, runs programs (`$PATH`, default `/bin`) in the
//! foreground or with `&` in the background, and has the builtins a scheduler lab needs —
//! `jobs`, `wait`, `fg`, `kill`, `nice`, `renice`, `su`, `time`, `echo`, `sleep`, `help`,
//! `exit` — with `;` between commands and `> FILE` for output. A bad line (an unknown
//! command, a bad number, an overlong line) is one error line, and the shell goes on.
//!
//! What it does not: pipes, variables, globs, control flow; line editing is the terminal's
//! (the kernel's line discipline, as Linux's `n_tty` edits a line before a shell reads it).
//! It is a static Linux binary like every program here: `tests/tests/shell.rs` runs it on
//! the host's Linux and on cfslab (`sh -c 'COMMANDS'`).

#![no_std]

extern crate alloc;

pub mod builtins;
pub mod jobs;
pub mod launch;
pub mod parse;
pub mod procfs;
pub mod session;
