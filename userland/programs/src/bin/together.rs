//! `together CMD ARGS [+ CMD ARGS]...`: starts every command at once and waits for them
//! all, as a shell's `a & b & wait` does — a scenario of several programs (seed 003's
//! `wakeup_latency` beside `make -j10`) as one program, which is what cfslab's and Linux's
//! inits run. Status 0 if every command exits with 0, else 1; 2 for a bad line.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::ffi::CString;
use alloc::vec::Vec;
use rt::process::{self, Exit};

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    let words: Vec<&str> = (1..args.len()).filter_map(|i| args.str(i)).collect();
    let commands: Vec<&[&str]> = words.split(|w| *w == "+").collect();
    if commands.iter().any(|c| c.is_empty()) {
        rt::eprintln!("together: usage: together CMD ARGS [+ CMD ARGS]...");
        return 2;
    }
    let mut children = Vec::new();
    for command in &commands {
        let strings: Vec<CString> = command
            .iter()
            .map(|w| CString::new(*w).unwrap_or_default())
            .collect();
        let mut argv: Vec<*const u8> = strings.iter().map(|s| s.as_ptr().cast()).collect();
        argv.push(core::ptr::null());
        let (_, envp) = args.raw();
        // SAFETY: NUL-terminated strings in null-terminated arrays, alive across the call.
        match unsafe { process::vfork_exec(argv[0], argv.as_ptr(), envp) } {
            Ok(child) => children.push(child),
            Err(e) => {
                rt::eprintln!("together: cannot start {}: {e:?}", command[0]);
                return 1;
            }
        }
    }
    let mut status = 0;
    for child in children {
        if !matches!(process::wait(child), Ok((_, Exit::Exited(0)))) {
            status = 1;
        }
    }
    status
}
