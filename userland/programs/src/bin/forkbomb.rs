//! `forkbomb`: a tree of processes far larger than the kernel's process limit, all alive at
//! once. Every process forks two children (down to depth 10: 2047 processes wanted), then
//! sleeps 100 ms so that the tree stands, then reaps its children. The kernel must refuse
//! the forks beyond its limit with EAGAIN — never panic or hang — reap everything, and get
//! every frame back (its `RESULT {"kind":"memory"}` line). It runs on cfslab only (anywhere
//! else it refuses, status 2): on Linux as root nothing would stop it.
//!
//! (An unbounded bomb — every process forking until EAGAIN — never ends on a fair
//! scheduler: each exit frees a slot that a process still forking takes. The tree bounds
//! the work and still goes far past the limit.)
//!
//! A process exits with status 1 if a fork in its subtree met EAGAIN, 0 if none did, and 2
//! on any other error; the first process prints how many processes were born (one byte
//! each in a pipe). `forkbomb ROUNDS` sets it off ROUNDS times in a row: the kernel's tables
//! reach their high-water mark in the first round, so a leak is what later rounds add.

#![no_std]
#![no_main]

use rt::process::{self, Exit};
use rt::{Errno, io, println, time};

rt::main!(run);

const DEPTH: u32 = 10;

fn run(args: &rt::Args) -> i32 {
    if !process::cfslab_only("forkbomb") {
        return 2;
    }
    let rounds = args.str(1).and_then(|r| r.parse().ok()).unwrap_or(1);
    let mut status = 0;
    for _ in 0..rounds {
        status |= round();
    }
    status
}

fn round() -> i32 {
    let Ok((births_read, births_write)) = io::pipe() else {
        println!("forkbomb: no pipe");
        return 1;
    };
    let outcome = tree(0, births_write);
    let _ = io::close(births_write);
    let mut births = 0;
    let mut buf = [0u8; 512];
    while let Ok(n @ 1..) = io::read(births_read, &mut buf) {
        births += n;
    }
    let _ = io::close(births_read);
    match outcome {
        1 => {
            println!("forkbomb: {births} processes born; the rest met EAGAIN; all reaped");
            0
        }
        0 => {
            println!("forkbomb: FAIL: {births} processes born and no fork met EAGAIN");
            1
        }
        _ => {
            println!("forkbomb: FAIL: a fork or a wait failed with another error");
            1
        }
    }
}

/// This process's part of the tree at `depth`: its outcome (see the module's docs). A child
/// never returns from here: it exits with its outcome.
fn tree(depth: u32, births: i32) -> i32 {
    let mut outcome = 0;
    for _ in 0..if depth < DEPTH { 2 } else { 0 } {
        match process::fork() {
            Ok(0) => {
                let _ = io::write(births, b"b");
                process::exit(tree(depth + 1, births))
            }
            Ok(_) => {}
            Err(Errno::EAGAIN) => outcome = outcome.max(1),
            Err(_) => outcome = 2,
        }
    }
    let _ = time::sleep_ns(100_000_000);
    while let Ok((_, exit)) = process::wait(-1) {
        outcome = outcome.max(match exit {
            Exit::Exited(s @ 0..=2) => s,
            _ => 2,
        });
    }
    outcome
}
