//! `hog [-t SECONDS | --until NS] [--name NAME]`: a CPU hog, as in every seed: spins in user mode for SECONDS of wall
//! time (the seeds' hogs spun forever; a lab run has an end), then reports how much CPU it
//! got — its share is what the scheduler gave it.

#![no_std]
#![no_main]

use workloads::options::Options;
use workloads::{report, spin_until};

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    let options = Options::parse(args, "[-t SECONDS | --until NS] [--name NAME]");
    if !options.words.is_empty() {
        rt::eprintln!("hog: takes no words (got {:?})", options.words);
        return 2;
    }
    // Its share is of the time it spun: the CPU its start-up took (exec, the first page
    // faults) is left out, as the window it ran in starts after it.
    let (start, cpu_before) = (rt::time::now_ns(), rt::time::thread_cpu_ns());
    spin_until(options.end_ns());
    let window = rt::time::now_ns() - start;
    let name = options.name_or("hog");
    report::cpu("hog", name, rt::time::thread_cpu_ns() - cpu_before, window);
    0
}
