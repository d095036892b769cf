//! `sh [-c COMMANDS...]`: cfslab's shell (the `shell` crate). With `-c` it runs COMMANDS
//! (one line, `;` between commands; several words are joined with blanks, because a boot
//! command line's `-- /bin/sh -c ...` reaches init split at every blank, as Linux's does)
//! and exits with the last one's status; otherwise it reads lines from standard input — the
//! console, when `make shell` boots into it.

#![no_std]
#![no_main]

extern crate alloc;

use shell::session::{self, Session};

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    let mut session = Session::default();
    match (args.str(1), args.str(2), args.len()) {
        (None, _, _) => session::interact(&mut session),
        (Some("-c"), Some(_), n) => {
            let words: alloc::vec::Vec<&str> = (2..n).filter_map(|i| args.str(i)).collect();
            session.run_line(&words.join(" "));
            session.exiting.unwrap_or(session.status)
        }
        _ => {
            rt::eprintln!("usage: sh [-c COMMANDS]");
            2
        }
    }
}
