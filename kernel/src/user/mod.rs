//! User programs in ring 3, on Linux's x86_64 syscall ABI: the initramfs they come from,
//! their address spaces, loading them (ELF, initial stack), the system calls, and the first
//! program, which runs instead of the lab's scenarios when the boot command line has
//! ` -- /bin/NAME args` (README, "Userland").
//!
//! What runs today: a program from the initramfs as a process of its own (one task, its own
//! lower half), `write` to the console, the id and clock calls, `exit`/`exit_group`, and a
//! fault in ring 3 killing only the process. What does not yet (issue [3/5], left for the
//! next steps): fork, vfork, execve, wait4, clone, pipes, signals beyond the kill of a
//! faulting process, mmap/brk, FPU state.

pub mod address_space;
pub mod elf;
pub mod fault;
pub mod files;
pub mod initramfs;
pub mod process;
pub mod stack;
pub mod syscall;

pub use process::run_program;
