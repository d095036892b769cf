//! `pipe_pingpong [ROUNDS]`: two processes pass one byte back and forth through two pipes,
//! ROUNDS times (default 10 000): each round trip is two writes, two reads and two
//! wake-ups with a switch each — the wake-up path, as a program of its own. Prints the time
//! per round trip.

#![no_std]
#![no_main]

use rt::io;
use rt::process::{self, Exit};
use workloads::options::Options;

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    let options = Options::parse(args, "[ROUNDS]");
    let rounds = if options.words.is_empty() {
        10_000
    } else {
        options.number(0, "ROUNDS", 1..=10_000_000)
    };
    let (Ok((to_child, from_parent)), Ok((to_parent, from_child))) = (io::pipe(), io::pipe())
    else {
        rt::eprintln!("pipe_pingpong: pipe failed");
        return 1;
    };
    let mut byte = [0u8; 1];
    let start = rt::time::now_ns();
    match process::fork() {
        Ok(0) => {
            for _ in 0..rounds {
                if io::read(to_child, &mut byte) != Ok(1) || io::write(from_child, &byte).is_err() {
                    process::exit(1);
                }
            }
            process::exit(0)
        }
        Ok(child) => {
            for _ in 0..rounds {
                if io::write(from_parent, b"x").is_err() || io::read(to_parent, &mut byte) != Ok(1)
                {
                    return 1;
                }
            }
            let ns = rt::time::now_ns() - start;
            let ok = matches!(process::wait(child), Ok((_, Exit::Exited(0))));
            rt::println!(
                "pipe_pingpong: {rounds} round trips, {} ns each",
                ns / rounds
            );
            rt::println!(
                "RESULT {{\"kind\":\"pingpong\",\"program\":\"pipe_pingpong\",\"rounds\":{rounds},\"ns_each\":{}}}",
                ns / rounds
            );
            i32::from(!ok)
        }
        Err(e) => {
            rt::eprintln!("pipe_pingpong: fork: {e:?}");
            1
        }
    }
}
