//! User programs in ring 3, on Linux's x86_64 syscall ABI: the initramfs they come from,
//! their address spaces, loading them (ELF, initial stack), the system calls, and the first
//! program, which runs instead of the lab's scenarios when the boot command line has
//! ` -- /bin/NAME args` (README, "Userland").
//!
//! What runs today: programs from the initramfs as processes (a task each, their own lower
//! half, their own FPU/SSE state and FS base), files and pipes with poll/select, the file tree by path (the initramfs,
//! `/proc`, the scheduler's knobs in `/proc/sys` and `/sys`: `fs`), anonymous
//! memory, copy-on-write fork, vfork, threads (CLONE_THREAD groups, TLS, futexes), execve,
//! wait4 with rusage, signals with their handlers (`signal`), process groups, sessions and
//! job control on the console (`tty`), priorities and the uid rules, the id and clock calls
//! (the table is in `syscall/`), limits, and a fault in ring 3 killing only the process.
//! What does not: a handler for a fault the program causes (the fault ends the process).

pub mod address_space;
pub mod cow;
pub mod elf;
pub mod errno;
pub mod fault;
pub mod files;
pub mod fs;
pub mod initramfs;
pub mod layout;
pub mod mappings;
mod page_walk;
pub mod process;
pub mod protection;
pub mod signal;
pub mod stack;
pub mod syscall;
pub mod tty;
pub mod umip;
mod user_memory;
pub mod user_window;

pub use process::run_program;
