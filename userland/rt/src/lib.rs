//! `rt`: the runtime of cfslab's user programs. What it does: `_start` (argc, argv, envp and
//! the auxiliary vector read from the stack as the SysV ABI lays them out), raw `syscall`s
//! with Linux's x86_64 numbers and `-errno` returns ([`sys`]), printing ([`print!`],
//! [`println!`], [`eprintln!`]), a global allocator over `mmap` ([`heap`]), and process and
//! thread helpers ([`process`]): fork, vfork + execve, clone for threads, wait4.
//!
//! What it does not do: no libc, no threads library (a thread is a `clone` sharing the
//! address space, reaped with `wait4` like a child), no signals beyond `kill`, no buffered
//! stdio (each print is one `write`), no floating point (the target is soft-float).
//!
//! Every program is a static, non-PIE ELF (userland/.cargo/config.toml), so the same binary
//! runs on Linux and on cfslab: the test suite runs each on both.

#![no_std]

extern crate alloc;

pub mod errno;
pub mod fs;
pub mod heap;
pub mod io;
pub mod process;
mod start;
pub mod sys;
pub mod thread;
pub mod time;

pub use errno::Errno;
pub use start::{Args, env, environ};

/// Declares the program's entry: `rt::main!(run);` with `fn run(args: &rt::Args) -> i32`,
/// whose result is the exit status.
#[macro_export]
macro_rules! main {
    ($main:path) => {
        #[unsafe(no_mangle)]
        fn __rt_main(args: &$crate::Args) -> i32 {
            $main(args)
        }
    };
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    eprintln!("panic: {info}");
    process::exit(101)
}
