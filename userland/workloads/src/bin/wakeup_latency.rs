//! `wakeup_latency [-t SECONDS | --until NS] [--seed N] [--name NAME] PERIOD`: seed 003's `wakeup-latency`. A
//! periodic POSIX timer with SIGEV_THREAD: glibc runs a helper thread that waits for each
//! expiry and creates a new thread for it, which runs the handler. Here the program's main
//! thread is that helper: it sleeps until each expiry (`clock_nanosleep`, TIMER_ABSTIME)
//! and creates the thread (`clone`), which records how late it runs against the ideal
//! expiry — the same tasks for the scheduler: one waker per period, one new thread per
//! expiry, whether or not the previous expiry's thread has run yet. An expiry that passes
//! while the helper itself has not woken for the one before is missed (the timer's
//! overrun, what `timer_getoverrun` counts while glibc's signal is still pending), as the
//! kernel lab's waker counts it. It starts at a random point of its first period
//! (`--seed`). PERIOD is in ms as the seed's program took it, or `500us`. At the end, the
//! program's three lines and the reports.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use rt::process::{Thread, spawn_thread};
use rt::time::{now_ns, sleep_until_ns};
use workloads::options::{Options, Unit};
use workloads::{Rng, report, say};

rt::main!(run);

/// The stack of an expiry's thread.
const STACK_BYTES: usize = 16 * 1024;

/// Not yet run: the thread's slot before it records its lateness.
const NOT_RUN: u64 = u64::MAX;

/// One expiry's thread: when it was due, how late it ran, and its stack.
struct Expiry {
    due: u64,
    late: AtomicU64,
    stack: Vec<u8>,
}

/// The thread body for an expiry (`arg` is its `Expiry`).
extern "C" fn on_expiry(arg: usize) {
    // SAFETY: the helper keeps the boxed Expiry alive until this thread has been joined.
    let expiry = unsafe { &*(arg as *const Expiry) };
    expiry
        .late
        .store(now_ns().saturating_sub(expiry.due), Ordering::Release);
}

fn run(args: &rt::Args) -> i32 {
    let options = Options::parse(
        args,
        "[-t SECONDS | --until NS] [--seed N] [--name NAME] PERIOD",
    );
    let period = options.duration(0, "PERIOD", Unit::Milliseconds, 100_000..=60_000_000_000);
    let start = now_ns();
    let end = options.end_ns();
    let mut next = now_ns() + period + Rng::for_stream(options.seed, 0).start_offset(period);
    let (mut samples, mut missed) = (Vec::new(), 0u64);
    let mut live: Vec<(Thread, Box<Expiry>)> = Vec::new();
    // Joined threads' slots and stacks, used again as glibc keeps a cache of thread stacks:
    // a long run needs as many as threads live at once, not one per expiry.
    let mut spare: Vec<Box<Expiry>> = Vec::new();
    while next < end {
        let _ = sleep_until_ns(next);
        // Expiries slept through entirely: overruns.
        while next + period <= now_ns() && next + period < end {
            missed += 1;
            next += period;
        }
        reap(&mut live, &mut samples, &mut spare, false);
        let mut expiry = spare.pop().unwrap_or_else(|| {
            Box::new(Expiry {
                due: 0,
                late: AtomicU64::new(NOT_RUN),
                stack: alloc::vec![0u8; STACK_BYTES],
            })
        });
        expiry.due = next;
        expiry.late.store(NOT_RUN, Ordering::Relaxed);
        let arg = &*expiry as *const Expiry as usize;
        // SAFETY: the stack lives in the boxed Expiry, kept (and not touched) until the
        // thread is joined in `reap`.
        match unsafe { spawn_thread(&mut expiry.stack, on_expiry, arg) } {
            Ok(thread) => live.push((thread, expiry)),
            Err(_) => missed += 1,
        }
        next += period;
    }
    reap(&mut live, &mut samples, &mut spare, true);
    let max = samples.iter().copied().max().unwrap_or(0);
    let avg = samples.iter().sum::<u64>() / (samples.len() as u64).max(1);
    say!("maximum latency: {}.{} µs", max / 1_000, max % 1_000 / 100);
    say!("average latency: {}.{} µs", avg / 1_000, avg % 1_000 / 100);
    say!("missed timer events: {missed}");
    let name = options.name_or("waker");
    report::latency("wakeup_latency", name, period, &samples, missed);
    report::cpu(
        "wakeup_latency",
        name,
        rt::time::thread_cpu_ns(),
        now_ns() - start,
    );
    0
}

/// Joins the threads that have ended (every thread, with `all`, waiting for each), keeps
/// their samples and puts their slots in `spare`. Between expiries the helper never waits
/// for a thread: glibc's timer threads are detached, and a helper blocked in a join — on a
/// thread that recorded its lateness and was preempted before its exit — could be late for
/// the next expiry's thread. The slots stay boxed: a thread holds its slot's address, so a slot must not move
/// when the vector grows.
#[allow(clippy::vec_box)]
fn reap(
    live: &mut Vec<(Thread, Box<Expiry>)>,
    samples: &mut Vec<u64>,
    spare: &mut Vec<Box<Expiry>>,
    all: bool,
) {
    let mut i = 0;
    while i < live.len() {
        if !all && !live[i].0.has_ended() {
            i += 1;
            continue;
        }
        let (thread, expiry) = live.remove(i);
        thread.join();
        let late = expiry.late.load(Ordering::Acquire);
        debug_assert_ne!(late, NOT_RUN, "a joined thread has recorded its lateness");
        samples.push(late);
        spare.push(expiry);
    }
}
