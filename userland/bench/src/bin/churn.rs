//! `churn`: what a program that maps and unmaps memory in a loop costs itself and the
//! others. A child makes 100,000 `mmap`/`munmap` pairs of one page, in ten batches of
//! 10,000, and prints each batch's cost per pair: with addresses reused and page tables
//! freed, the last batch costs what the first did. Meanwhile this process sleeps 1 ms again
//! and again and measures how late each sleep ends, beside the churn and, first, beside a
//! plain hog: the churn's kernel work must not hold the sleeper's wake-up back much longer
//! than a hog's time slice does.
//!
//! Under `-icount shift=0` (`make bench`) a nanosecond is one guest instruction. Lines:
//! `churn: batch K of 10: N ns per pair`, then
//! `churn: 1 ms nanosleep overshoot beside a hog (worst of 50): N ns` and
//! `churn: 1 ms nanosleep overshoot beside the churn (worst of M): N ns`.

#![no_std]
#![no_main]

use rt::process::{self, Exit};
use rt::sys::{nr, syscall6};
use rt::{println, time};

rt::main!(run);

const BATCHES: u64 = 10;
const PAIRS_PER_BATCH: u64 = 10_000;
const SLEEP_NS: u64 = 1_000_000;
const SIGKILL: i32 = 9;

fn run(_: &rt::Args) -> i32 {
    let Some((hog, samples)) = overshoot_beside(hog, Some(50)) else {
        return 1;
    };
    let Some((churned, during)) = overshoot_beside(churn, None) else {
        return 1;
    };
    println!("churn: 1 ms nanosleep overshoot beside a hog (worst of {samples}): {hog} ns");
    println!("churn: 1 ms nanosleep overshoot beside the churn (worst of {during}): {churned} ns");
    0
}

/// Runs `body` in a child and sleeps 1 ms at a time beside it — `samples` times, then the
/// child is killed, or until it ends — and returns the worst overshoot and how many sleeps.
fn overshoot_beside(body: fn(), samples: Option<u64>) -> Option<(u64, u64)> {
    let child = match process::fork() {
        Ok(0) => {
            body();
            process::exit(0)
        }
        Ok(child) => child,
        Err(_) => return None,
    };
    let (mut worst, mut count) = (0, 0);
    loop {
        let start = time::now_ns();
        time::sleep_ns(SLEEP_NS).ok()?;
        worst = worst.max(time::now_ns() - start - SLEEP_NS);
        count += 1;
        if samples == Some(count) {
            process::kill(child, SIGKILL).ok()?;
            process::wait(child).ok()?;
            return Some((worst, count));
        }
        match process::wait_nohang(child).ok()? {
            Some(Exit::Exited(0)) => return Some((worst, count)),
            Some(_) => return None,
            None => {}
        }
    }
}

/// A plain hog: it never enters the kernel.
fn hog() {
    loop {
        core::hint::spin_loop();
    }
}

/// The churn: ten batches of one-page mmap/munmap pairs, each batch's cost printed.
fn churn() {
    const PAGE: usize = 4096;
    const PROT_READ_WRITE: usize = 0x1 | 0x2;
    const MAP_PRIVATE_ANONYMOUS: usize = 0x02 | 0x20;
    for batch in 1..=BATCHES {
        let start = time::now_ns();
        for _ in 0..PAIRS_PER_BATCH {
            // SAFETY: an anonymous mapping of a fresh page, unmapped at once; nothing else
            // refers to it.
            unsafe {
                let at = syscall6(
                    nr::MMAP,
                    [
                        0,
                        PAGE,
                        PROT_READ_WRITE,
                        MAP_PRIVATE_ANONYMOUS,
                        usize::MAX,
                        0,
                    ],
                );
                if at < 0 {
                    process::exit(2);
                }
                syscall6(nr::MUNMAP, [at as usize, PAGE, 0, 0, 0, 0]);
            }
        }
        let ns = (time::now_ns() - start) / PAIRS_PER_BATCH;
        println!("churn: batch {batch} of {BATCHES}: {ns} ns per pair");
    }
}
