//! `lat3 [-t SECONDS | --until NS] [-p FIRST] [--name NAME] SPIN...`: seed 002's `lat3`,
//! one process per SPIN (a bare number is µs, or `1s`, `50ms`), numbered P = FIRST,
//! FIRST + 1, … (default 1) as the thread's two terminals were, each probe named `lat3-P`
//! (or NAME, with one SPIN: a lab scenario names its tasks). With one SPIN the loop runs in
//! this process itself. Each spins SPIN_US of wall time reading
//! the clock, then sleeps 1 ms with `select(0, NULL, NULL, NULL, &tv)`, until the end; one
//! line per cycle, `P: Date_sec.usec select loop maxlat nbmax` (µs): how long the 1 ms
//! sleep took, how long the spin took, the longest gap between two clock reads in the spin
//! (the longest time the process was kept off the CPU) and how many gaps exceeded 1 ms.
//! Run A of the thread is `lat3 1000000 1000000`, run B `lat3 1000000 10000000`.

#![no_std]
#![no_main]

extern crate alloc;

use rt::time::{CLOCK_REALTIME, clock_ns, now_ns, select_sleep_us};
use workloads::options::{Options, Unit};
use workloads::{MS, report, say};

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    let options = Options::parse(
        args,
        "[-t SECONDS | --until NS] [-p FIRST] [--name NAME] SPIN...",
    );
    if options.words.is_empty() || options.words.len() > 16 {
        rt::eprintln!("lat3: give 1 to 16 spin lengths in µs (run A: 1000000 1000000)");
        return 2;
    }
    if options.name.is_some() && options.words.len() > 1 {
        rt::eprintln!("lat3: --name names one loop; give one SPIN with it");
        return 2;
    }
    let first = options.first_p();
    let spins: alloc::vec::Vec<u64> = (0..options.words.len())
        .map(|i| options.duration(i, "SPIN", Unit::Microseconds, 1_000..=60_000_000_000))
        .collect();
    let end = options.end_ns();
    let probe = |p: usize| match options.name {
        Some(name) => name.into(),
        None => alloc::format!("lat3-{p}"),
    };
    if let [spin] = spins[..] {
        return lat3(first, &probe(first), spin, end);
    }
    let mut children = alloc::vec::Vec::new();
    for (i, spin) in spins.into_iter().enumerate() {
        let p = first + i;
        match rt::process::fork() {
            Ok(0) => rt::process::exit(lat3(p, &probe(p), spin, end)),
            Ok(child) => children.push(child),
            Err(e) => {
                rt::eprintln!("lat3: fork: {e:?}");
                return 1;
            }
        }
    }
    let mut status = 0;
    for child in children {
        if !matches!(
            rt::process::wait(child),
            Ok((_, rt::process::Exit::Exited(0)))
        ) {
            status = 1;
        }
    }
    status
}

/// One lat3 loop, numbered `p` and reported as `probe`: spins `spin` ns per cycle until
/// `end`.
fn lat3(p: usize, probe: &str, spin: u64, end: u64) -> i32 {
    let start = now_ns();
    let mut select = 0;
    let mut samples = alloc::vec::Vec::new();
    while now_ns() < end {
        let start = now_ns();
        let (mut previous, mut max_gap, mut gaps) = (start, 0, 0);
        while previous - start < spin && previous < end {
            let now = now_ns();
            let gap = now - previous;
            max_gap = max_gap.max(gap);
            gaps += u64::from(gap > MS);
            previous = now;
        }
        samples.push(max_gap);
        let date = clock_ns(CLOCK_REALTIME).unwrap_or(0);
        say!(
            "{p}: {}.{:06} {} {} {} {gaps}",
            date / 1_000_000_000,
            date % 1_000_000_000 / 1_000,
            select / 1_000,
            (previous - start) / 1_000,
            max_gap / 1_000
        );
        if previous >= end {
            break;
        }
        let before = now_ns();
        let _ = select_sleep_us(1_000);
        select = now_ns() - before;
    }
    // A cycle is the spin and the 1 ms sleep: its period for the cyclictest line.
    report::latency("lat3", probe, spin + MS, &samples, 0);
    report::cpu("lat3", probe, rt::time::thread_cpu_ns(), now_ns() - start);
    0
}
