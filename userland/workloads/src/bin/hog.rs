//! `hog [-t SECONDS]`: a CPU hog, as in every seed: spins in user mode for SECONDS of wall
//! time (the seeds' hogs spun forever; a lab run has an end), then reports how much CPU it
//! got — its share is what the scheduler gave it.

#![no_std]
#![no_main]

use workloads::options::Options;
use workloads::{report, spin_until};

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    let options = Options::parse(args, "[-t SECONDS]");
    if !options.words.is_empty() {
        rt::eprintln!("hog: takes no words (got {:?})", options.words);
        return 2;
    }
    let start = rt::time::now_ns();
    spin_until(start + options.run_ns);
    let window = rt::time::now_ns() - start;
    report::cpu("hog", "hog", rt::time::thread_cpu_ns(), window);
    0
}
