//! `job CPU_US END_NS [io SEED]`: one of seed 003's compile jobs, exec'd by `makej`: burns
//! CPU_US of CPU time (cc1 on a small file) and exits, never running past END_NS on the
//! monotonic clock (the end of the run). With `io`, it burns in bursts of 1–5 ms with
//! sleeps of 0.2–2 ms between them (a pipe between cpp, cc1 and as, a disk read), drawn
//! from `sched::programs` with SEED.

#![no_std]
#![no_main]

use workloads::options::Options;
use workloads::programs::{JOB_IO_BURST_NS, JOB_IO_SLEEP_NS};
use workloads::{Rng, burn_cpu};

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    let usage = "CPU_US END_NS [io SEED]";
    let options = Options::parse(args, usage);
    let cpu = options.number(0, "CPU_US", 1..=60_000_000) * 1_000;
    let end = options.number(1, "END_NS", 0..=u64::MAX);
    let io = options.words.get(2) == Some(&"io");
    let mut rng = Rng::new(if io {
        options.number(3, "SEED", 0..=u64::MAX)
    } else {
        1
    });
    let mut left = cpu;
    while left > 0 && rt::time::now_ns() < end {
        let burst = if io {
            rng.within(JOB_IO_BURST_NS).min(left)
        } else {
            left
        };
        left = left.saturating_sub(burn_cpu(burst, end).max(1));
        if io && left > 0 {
            let _ = rt::time::sleep_ns(rng.within(JOB_IO_SLEEP_NS));
        }
    }
    0
}
