//! User programs in ring 3, on Linux's x86_64 syscall ABI: the initramfs they come from,
//! their address spaces, loading them (ELF, initial stack), the system calls, and the first
//! program, which runs instead of the lab's scenarios when the boot command line has
//! ` -- /bin/NAME args` (README, "Userland").
//!
//! What runs today: programs from the initramfs as processes (a task each, their own lower
//! half), files and pipes, anonymous memory, fork (an eager copy), vfork, clone threads,
//! execve, wait4, kill, the id and clock calls (the table is in `syscall/`), and a fault in
//! ring 3 killing only the process. What does not yet (issue [3/5], next steps):
//! copy-on-write, select/poll, priorities and the uid rules, signal handlers, exit_group
//! ending sibling threads, FPU state, limits.

pub mod address_space;
pub mod elf;
pub mod fault;
pub mod files;
pub mod initramfs;
pub mod process;
pub mod stack;
pub mod syscall;

pub use process::run_program;
