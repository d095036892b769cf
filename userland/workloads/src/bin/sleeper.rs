//! `sleeper [-t SECONDS | --until NS] [--seed N] [--name NAME] PERIOD`: seed 000's sleeper
//! alone (`workloads::sleeper`), as a lab scenario's `sleeper` task runs it: sleeps PERIOD
//! (`100ms`, `500us`; a bare number is ms) in a loop and reports how late each wake-up was.
//! `sched_py` runs the same sleeper beside its hogs, as the seed's scripts did.

#![no_std]
#![no_main]

use workloads::Rng;
use workloads::options::{Options, Unit};

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    let options = Options::parse(
        args,
        "[-t SECONDS | --until NS] [--seed N] [--name NAME] PERIOD",
    );
    if options.words.len() != 1 {
        rt::eprintln!("sleeper: give one PERIOD, e.g. 100ms");
        return 2;
    }
    let period = options.duration(0, "PERIOD", Unit::Milliseconds, 100_000..=60_000_000_000);
    let end = options.end_ns();
    workloads::sleeper::run(
        "sleeper",
        options.name_or("sleeper"),
        period,
        Rng::for_stream(options.seed, 0),
        end,
    );
    0
}
