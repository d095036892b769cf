//! `microbench`: what the kernel's paths cost, seen from a program — the figures of
//! docs/performance.md's table. Under QEMU's `-icount shift=0` one guest instruction is one virtual
//! nanosecond, so on cfslab (`make bench`) each figure is a count of guest instructions;
//! natively it is host time. Each path is timed over many repetitions with
//! CLOCK_MONOTONIC and divided, in five batches of which the fastest counts; the kernel's
//! own cost of the two clock reads is included once per batch, not per call.
//!
//! Paths: `getpid`; `sched_yield` with nothing else to run; a one-byte pipe ping-pong
//! between two processes (round trip); fork + exit + wait; vfork + exit + wait; vfork +
//! execve (of this program, which exits at once) + exit + wait; a signal sent to itself,
//! delivered to a handler and returned from (`kill` + the handler + `rt_sigreturn`); and how
//! late an idle 100 ms `nanosleep` wakes.
//!
//! The same vfork + execve of a static musl C program (userland/c/cexit.c), and of that
//! program with a mebibyte more of .data, of .rodata and of .bss: what an exec of a C program
//! costs, and which part of a binary makes it cost more.
//!
//! `microbench NAME` runs one path only (getpid, yield, pingpong, fork, vfork, execve,
//! execve-c, execve-c-data, execve-c-rodata, execve-c-bss, signal, sleep): what
//! `cargo boot run --profile` wants to look at.
//!
//! It is the one program built optimised (userland/Cargo.toml): Linux's figures beside it
//! come from C programs built with `-O2`, and an unoptimised loop would add its own hundred
//! instructions to each `getpid`.

#![no_std]
#![no_main]

use rt::process;
use rt::sys::{nr, simple};
use rt::{io, println, time};

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    // Exec'd by the vfork + execve path: exit at once.
    if args.str(1) == Some("exit") {
        return 0;
    }
    let only = args.str(1);
    let wanted = |name: &str| only.is_none() || only == Some(name);
    if only.is_some_and(|name| !PATHS.contains(&name)) {
        rt::eprintln!(
            "microbench: no path {:?}; the paths are {PATHS:?}",
            only.unwrap_or_default()
        );
        return 2;
    }
    if wanted("getpid") {
        report(
            "getpid",
            per_call(2000, || {
                simple(nr::GETPID);
            }),
        );
    }
    if wanted("yield") {
        report(
            "sched_yield alone",
            per_call(2000, || {
                time::yield_now();
            }),
        );
    }
    if wanted("pingpong") {
        report(
            "pipe ping-pong round trip",
            fastest_of_batches(|| ping_pong(500)),
        );
    }
    if wanted("fork") {
        report(
            "fork + exit + wait",
            per_call(30, || match process::fork() {
                Ok(0) => process::exit(0),
                Ok(child) => drop(process::wait(child)),
                Err(_) => {}
            }),
        );
    }
    if wanted("vfork") {
        report(
            "vfork + exit + wait",
            per_call(30, || {
                if let Ok(child) = process::vfork_exit() {
                    let _ = process::wait(child);
                }
            }),
        );
    }
    if wanted("execve") {
        execve_path(args);
    }
    for (name, program, label) in C_EXECS {
        if wanted(name) {
            execve_c_path(program, label);
        }
    }
    if wanted("signal") {
        signal_path();
    }
    if wanted("sleep") {
        sleep_path();
    }
    0
}

/// The paths `microbench NAME` can pick.
const PATHS: [&str; 12] = [
    "getpid",
    "yield",
    "pingpong",
    "fork",
    "vfork",
    "execve",
    "execve-c",
    "execve-c-data",
    "execve-c-rodata",
    "execve-c-bss",
    "signal",
    "sleep",
];

/// The exec paths of static musl C programs (userland/c/cexit.c, built four ways by
/// boot/src/userland.rs): the path's name, the program, what the figure is called. The
/// first is the cost of an exec of a C program; the others, each with a mebibyte more of
/// one kind, show which part of a binary an exec pays for by its size.
const C_EXECS: [(&str, &core::ffi::CStr, &str); 4] = [
    (
        "execve-c",
        c"/bin/cexit",
        "vfork + execve (static C) + exit + wait",
    ),
    (
        "execve-c-data",
        c"/bin/cexit-data",
        "vfork + execve (static C, 1 MiB more .data) + exit + wait",
    ),
    (
        "execve-c-rodata",
        c"/bin/cexit-rodata",
        "vfork + execve (static C, 1 MiB more .rodata) + exit + wait",
    ),
    (
        "execve-c-bss",
        c"/bin/cexit-bss",
        "vfork + execve (static C, 1 MiB more .bss) + exit + wait",
    ),
];

/// Handlers run by the signal path.
static HANDLED: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

extern "C" fn on_signal(_signal: i32) {
    HANDLED.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
}

/// `kill(getpid(), SIGUSR1)` with a handler: the call, the frame on the way back, the
/// handler, and `rt_sigreturn`.
fn signal_path() {
    if process::catch_signal(process::SIGUSR1, on_signal, 0, 0).is_err() {
        rt::eprintln!("microbench: cannot install a handler");
        return;
    }
    let me = process::getpid();
    let ns = per_call(2000, || {
        let _ = process::kill(me, process::SIGUSR1);
    });
    let handled = HANDLED.load(core::sync::atomic::Ordering::Relaxed);
    // Five batches of 2000 (and each batch's warm-up): every signal reached the handler.
    if handled < 5 * 2000 {
        rt::eprintln!("microbench: only {handled} signals were handled");
        return;
    }
    report("signal to a handler and back", ns);
}

fn execve_path(args: &rt::Args) {
    let (argv0, _) = args.raw();
    // SAFETY: argv[0] is the NUL-terminated path this program was started by.
    let path = unsafe { *argv0 };
    let argv = [path, c"exit".as_ptr().cast::<u8>(), core::ptr::null()];
    let envp = [core::ptr::null::<u8>()];
    report(
        "vfork + execve + exit + wait",
        per_call(30, || {
            // SAFETY: NUL-terminated strings in null-terminated arrays.
            if let Ok(child) = unsafe { process::vfork_exec(path, argv.as_ptr(), envp.as_ptr()) } {
                let _ = process::wait(child);
            }
        }),
    );
}

/// vfork + execve of the static C program `path`, which exits at once, + wait.
fn execve_c_path(path: &core::ffi::CStr, label: &str) {
    let path = path.as_ptr().cast::<u8>();
    let argv = [path, core::ptr::null()];
    let envp = [core::ptr::null::<u8>()];
    report(
        label,
        per_call(30, || {
            // SAFETY: NUL-terminated strings in null-terminated arrays.
            match unsafe { process::vfork_exec(path, argv.as_ptr(), envp.as_ptr()) } {
                Ok(child) => {
                    let _ = process::wait(child);
                }
                Err(_) => rt::eprintln!("microbench: cannot exec a C program"),
            }
        }),
    );
}

fn sleep_path() {
    let overshoot = (0..5)
        .map(|_| {
            let start = time::now_ns();
            let _ = time::sleep_ns(100_000_000);
            time::now_ns() - start - 100_000_000
        })
        .max()
        .unwrap_or(0);
    println!("microbench: idle 100 ms nanosleep overshoot (worst of 5): {overshoot} ns");
}

fn report(what: &str, ns: u64) {
    println!("microbench: {what}: {ns} ns per call");
}

/// Nanoseconds per call of `f`: the fastest of five batches of `n` calls.
fn per_call(n: u64, mut f: impl FnMut()) -> u64 {
    fastest_of_batches(|| one_batch(n, &mut f))
}

/// Nanoseconds per call of `f` over one batch of `n` calls.
fn one_batch(n: u64, mut f: impl FnMut()) -> u64 {
    let start = time::now_ns();
    for _ in 0..n {
        f();
    }
    (time::now_ns() - start) / n
}

/// The fastest of five batches: a batch that a timer tick (every 4 ms) falls into pays for
/// the tick's work too, which is not the path's cost, and whether one falls in moves with
/// every change to the code.
fn fastest_of_batches(mut batch: impl FnMut() -> u64) -> u64 {
    (0..5).map(|_| batch()).min().unwrap_or(0)
}

/// Nanoseconds per round trip of one byte between this process and a child, over `n`.
fn ping_pong(n: u64) -> u64 {
    let (Ok((to_child, from_parent)), Ok((to_parent, from_child))) = (io::pipe(), io::pipe())
    else {
        return 0;
    };
    // to_child/from_parent: parent writes [1], child reads [0]; likewise the other pipe.
    let mut byte = [0u8; 1];
    match process::fork() {
        Ok(0) => {
            for _ in 0..n {
                let _ = io::read(to_child, &mut byte);
                let _ = io::write(from_child, &byte);
            }
            process::exit(0)
        }
        Ok(child) => {
            let ns = one_batch(n, || {
                let _ = io::write(from_parent, b"x");
                let _ = io::read(to_parent, &mut byte);
            });
            let _ = process::wait(child);
            for fd in [to_child, from_parent, to_parent, from_child] {
                let _ = io::close(fd);
            }
            ns
        }
        Err(_) => 0,
    }
}
