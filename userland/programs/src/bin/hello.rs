//! `hello`: prints its arguments and the size of its environment — the first program to run
//! on a new kernel, and the smallest proof that the initial stack is laid out right.

#![no_std]
#![no_main]

use rt::println;

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    println!("hello from cfslab's userland: {} arguments", args.len());
    for i in 0..args.len() {
        println!("  argv[{i}] = {}", args.str(i).unwrap_or("?"));
    }
    println!("  {} environment strings", args.env_len());
    0
}
