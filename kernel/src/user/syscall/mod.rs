//! The system-call table: Linux's x86_64 numbers and semantics (arguments in rdi, rsi, rdx,
//! r10, r8, r9; the result in rax, `-errno` on failure). A number cfslab does not implement
//! answers ENOSYS, and the console says so once per number.
//!
//! The dispatcher runs on the calling task's kernel stack with interrupts on, so a call may
//! sleep (nanosleep, a pipe read, wait4) or be preempted like any kernel code; it returns
//! with them off, as the SYSRET path needs. A task killed meanwhile (`kill`) dies here
//! instead of returning.

mod descriptors;
mod exec_strings;
mod fs;
mod futex;
mod info;
mod io;
mod itimer;
mod job;
mod limits;
mod membarrier;
mod memory;
mod poll;
mod priority;
mod process;
mod random;
mod rusage;
mod signal;
mod sigwait;

use super::address_space::AddressSpace;
use crate::arch::user_mode::TrapFrame;
use crate::sched;
use crate::sync::{Rank, SpinLock};
use crate::task::pid_of;
use alloc::sync::Arc;

pub use super::errno;

/// Linux's numbers (arch/x86/entry/syscalls/syscall_64.tbl) for the calls handled here.
mod nr {
    pub const READ: u64 = 0;
    pub const WRITE: u64 = 1;
    pub const OPEN: u64 = 2;
    pub const CLOSE: u64 = 3;
    pub const STAT: u64 = 4;
    pub const FSTAT: u64 = 5;
    pub const LSTAT: u64 = 6;
    pub const POLL: u64 = 7;
    pub const LSEEK: u64 = 8;
    pub const MMAP: u64 = 9;
    pub const MPROTECT: u64 = 10;
    pub const MUNMAP: u64 = 11;
    pub const BRK: u64 = 12;
    pub const RT_SIGACTION: u64 = 13;
    pub const RT_SIGPROCMASK: u64 = 14;
    pub const RT_SIGRETURN: u64 = 15;
    pub const PAUSE: u64 = 34;
    pub const GETITIMER: u64 = 36;
    pub const ALARM: u64 = 37;
    pub const SETITIMER: u64 = 38;
    pub const RT_SIGPENDING: u64 = 127;
    pub const RT_SIGTIMEDWAIT: u64 = 128;
    pub const RT_SIGQUEUEINFO: u64 = 129;
    pub const RT_SIGSUSPEND: u64 = 130;
    pub const SIGALTSTACK: u64 = 131;
    pub const SETPGID: u64 = 109;
    pub const GETPGRP: u64 = 111;
    pub const SETSID: u64 = 112;
    pub const GETPGID: u64 = 121;
    pub const GETSID: u64 = 124;
    pub const IOCTL: u64 = 16;
    pub const WRITEV: u64 = 20;
    pub const PIPE: u64 = 22;
    pub const SELECT: u64 = 23;
    pub const SCHED_YIELD: u64 = 24;
    pub const DUP: u64 = 32;
    pub const DUP2: u64 = 33;
    pub const FCNTL: u64 = 72;
    pub const DUP3: u64 = 292;
    pub const NANOSLEEP: u64 = 35;
    pub const GETPID: u64 = 39;
    pub const GETRUSAGE: u64 = 98;
    pub const FUTEX: u64 = 202;
    pub const CLONE: u64 = 56;
    pub const FORK: u64 = 57;
    pub const VFORK: u64 = 58;
    pub const EXECVE: u64 = 59;
    pub const EXIT: u64 = 60;
    pub const WAIT4: u64 = 61;
    pub const KILL: u64 = 62;
    pub const UNAME: u64 = 63;
    pub const GETCWD: u64 = 79;
    pub const CHDIR: u64 = 80;
    pub const FCHDIR: u64 = 81;
    pub const GETRLIMIT: u64 = 97;
    pub const GETUID: u64 = 102;
    pub const GETGROUPS: u64 = 115;
    pub const TIME: u64 = 201;
    pub const TKILL: u64 = 200;
    pub const SCHED_SETAFFINITY: u64 = 203;
    pub const SCHED_GETAFFINITY: u64 = 204;
    pub const GETCPU: u64 = 309;
    pub const TGKILL: u64 = 234;
    pub const RT_TGSIGQUEUEINFO: u64 = 297;
    pub const PRLIMIT64: u64 = 302;
    pub const SETRLIMIT: u64 = 160;
    pub const MADVISE: u64 = 28;
    pub const SENDFILE: u64 = 40;
    pub const READLINK: u64 = 89;
    pub const PRCTL: u64 = 157;
    pub const READLINKAT: u64 = 267;
    pub const SET_ROBUST_LIST: u64 = 273;
    pub const GET_ROBUST_LIST: u64 = 274;
    pub const ACCESS: u64 = 21;
    pub const SYSINFO: u64 = 99;
    pub const FACCESSAT: u64 = 269;
    pub const FACCESSAT2: u64 = 439;
    pub const GETRANDOM: u64 = 318;
    pub const MEMBARRIER: u64 = 324;
    pub const SETUID: u64 = 105;
    pub const GETGID: u64 = 104;
    pub const GETEUID: u64 = 107;
    pub const GETEGID: u64 = 108;
    pub const GETPPID: u64 = 110;
    pub const GETPRIORITY: u64 = 140;
    pub const SETPRIORITY: u64 = 141;
    pub const ARCH_PRCTL: u64 = 158;
    pub const REBOOT: u64 = 169;
    pub const GETTID: u64 = 186;
    pub const GETDENTS64: u64 = 217;
    pub const SET_TID_ADDRESS: u64 = 218;
    pub const CLOCK_GETTIME: u64 = 228;
    pub const CLOCK_NANOSLEEP: u64 = 230;
    pub const EXIT_GROUP: u64 = 231;
    pub const OPENAT: u64 = 257;
    pub const NEWFSTATAT: u64 = 262;
    pub const PSELECT6: u64 = 270;
    pub const PIPE2: u64 = 293;
}

/// `openat`'s "from the working directory", as the descriptor argument it is passed in.
const AT_FDCWD: u64 = -100i32 as u32 as u64;

/// An `unsigned int` argument (a file descriptor): Linux reads its low 32 bits, whatever the
/// register's upper half holds (a C library may leave anything there).
fn uint(arg: u64) -> u64 {
    u64::from(arg as u32)
}

/// An `int` argument (a pid, a signal, options): its low 32 bits, sign-extended.
fn int(arg: u64) -> i64 {
    i64::from(arg as i32)
}

/// Runs the system call the saved registers name (`trap::syscall` calls it, interrupts on)
/// and returns its result: Linux's `sys_call_table`. Each `int` argument of Linux's
/// signature is read as 32 bits ([`uint`], [`int`]) before its handler sees it.
#[inline(always)]
pub fn dispatch(frame: &mut TrapFrame) -> i64 {
    let a = [
        frame.rdi, frame.rsi, frame.rdx, frame.r10, frame.r8, frame.r9,
    ];
    match frame.rax {
        nr::READ => io::read(uint(a[0]), a[1], a[2]),
        nr::WRITE => io::write(uint(a[0]), a[1], a[2]),
        nr::WRITEV => io::writev(uint(a[0]), a[1], a[2]),
        nr::SENDFILE => io::sendfile(uint(a[0]), uint(a[1]), a[2], a[3]),
        nr::CLOSE => io::close(uint(a[0])),
        nr::OPEN => fs::open(a[0], uint(a[1])),
        nr::OPENAT => fs::openat(uint(a[0]), a[1], uint(a[2])),
        nr::LSEEK => fs::lseek(uint(a[0]), a[1], uint(a[2])),
        nr::GETDENTS64 => fs::getdents64(uint(a[0]), a[1], uint(a[2])),
        nr::STAT | nr::LSTAT => fs::stat(a[0], a[1]),
        nr::GETCWD => fs::getcwd(a[0], a[1]),
        nr::READLINK => fs::readlinkat(AT_FDCWD, a[0], a[1], uint(a[2])),
        nr::ACCESS => fs::faccessat(AT_FDCWD, a[0], uint(a[1])),
        nr::FACCESSAT | nr::FACCESSAT2 => fs::faccessat(uint(a[0]), a[1], uint(a[2])),
        nr::READLINKAT => fs::readlinkat(uint(a[0]), a[1], a[2], uint(a[3])),
        nr::CHDIR => fs::chdir(a[0]),
        nr::FCHDIR => fs::fchdir(uint(a[0])),
        nr::FSTAT => fs::fstat(uint(a[0]), a[1]),
        nr::NEWFSTATAT => fs::newfstatat(uint(a[0]), a[1], a[2], uint(a[3])),
        nr::PIPE => io::pipe(a[0]),
        nr::PIPE2 => io::pipe2(a[0], uint(a[1])),
        nr::DUP => descriptors::dup(uint(a[0])),
        nr::DUP2 => descriptors::dup2(uint(a[0]), uint(a[1])),
        nr::DUP3 => descriptors::dup3(uint(a[0]), uint(a[1]), uint(a[2])),
        nr::FCNTL => descriptors::fcntl(uint(a[0]), uint(a[1]), a[2]),
        nr::IOCTL => io::ioctl(uint(a[0]), uint(a[1]), a[2]),
        nr::POLL => poll::poll(a[0], a[1], uint(a[2])),
        nr::SELECT => poll::select(uint(a[0]), a[1], a[2], a[3], a[4]),
        nr::PSELECT6 => poll::pselect6(uint(a[0]), a[1], a[2], a[3], a[4], a[5]),
        nr::MMAP => memory::mmap(a[0], a[1], uint(a[2]), uint(a[3])),
        nr::MPROTECT => memory::mprotect(a[0], a[1], uint(a[2])),
        nr::MUNMAP => memory::munmap(a[0], a[1]),
        nr::BRK => memory::brk(a[0]),
        nr::MADVISE => memory::madvise(a[0], a[1], int(a[2]) as u64),
        nr::RT_SIGACTION => signal::rt_sigaction(uint(a[0]), a[1], a[2], a[3]),
        nr::RT_SIGPROCMASK => signal::rt_sigprocmask(uint(a[0]), a[1], a[2], a[3]),
        nr::RT_SIGRETURN => crate::user::signal::rt_sigreturn(frame),
        nr::RT_SIGPENDING => signal::rt_sigpending(a[0], a[1]),
        nr::RT_SIGSUSPEND => sigwait::rt_sigsuspend(a[0], a[1]),
        nr::RT_SIGTIMEDWAIT => sigwait::rt_sigtimedwait(a[0], a[1], a[2], a[3]),
        nr::SIGALTSTACK => sigwait::sigaltstack(a[0], a[1], frame.rsp),
        nr::PAUSE => sigwait::pause(),
        nr::SETPGID => job::setpgid(int(a[0]), int(a[1])),
        nr::GETPGID => job::getpgid(int(a[0])),
        nr::GETPGRP => job::getpgid(0),
        nr::SETSID => job::setsid(),
        nr::GETSID => job::getsid(int(a[0])),
        nr::ALARM => itimer::alarm(uint(a[0])),
        nr::GETITIMER => itimer::getitimer(uint(a[0]), a[1]),
        nr::SETITIMER => itimer::setitimer(uint(a[0]), a[1], a[2]),
        nr::SCHED_YIELD => {
            sched::yield_now();
            0
        }
        nr::NANOSLEEP => info::nanosleep(a[0], a[1]),
        nr::CLOCK_NANOSLEEP => info::clock_nanosleep(uint(a[0]), uint(a[1]), a[2], a[3]),
        nr::CLOCK_GETTIME => info::clock_gettime(uint(a[0]), a[1]),
        nr::UNAME => info::uname(a[0]),
        nr::SYSINFO => info::sysinfo(a[0]),
        nr::REBOOT => info::reboot(uint(a[0]), uint(a[1]), uint(a[2])),
        nr::GETPID => pid_of(sched::current_process()),
        nr::GETTID => pid_of(sched::current()),
        nr::SET_TID_ADDRESS => {
            sched::set_clear_child_tid(a[0]);
            pid_of(sched::current())
        }
        nr::GETPPID => sched::parent_of(sched::current_process()).map_or(0, pid_of),
        nr::GETRUSAGE => rusage::getrusage(int(a[0]), a[1]),
        nr::FUTEX => futex::futex(a[0], uint(a[1]), uint(a[2]), a[3], uint(a[5])),
        nr::GETUID | nr::GETEUID | nr::GETGID | nr::GETEGID => i64::from(sched::current_uid()),
        nr::SETUID => priority::setuid(uint(a[0])),
        nr::GETPRIORITY => priority::getpriority(uint(a[0]), uint(a[1])),
        nr::SETPRIORITY => priority::setpriority(uint(a[0]), uint(a[1]), uint(a[2])),
        nr::ARCH_PRCTL => process::arch_prctl(a[0], a[1]),
        nr::PRCTL => process::prctl(uint(a[0]), a[1]),
        nr::SET_ROBUST_LIST => process::set_robust_list(a[0], a[1]),
        nr::GET_ROBUST_LIST => process::get_robust_list(int(a[0]), a[1], a[2]),
        nr::FORK => process::clone(process::SIGCHLD, 0, [0; 2], 0, frame),
        nr::VFORK => process::clone(process::VFORK_FLAGS, 0, [0; 2], 0, frame),
        nr::CLONE => process::clone(a[0], a[1], [a[2], a[3]], a[4], frame),
        nr::EXECVE => process::execve(a[0], a[1], a[2]),
        nr::WAIT4 => process::wait4(int(a[0]), a[1], uint(a[2]), a[3]),
        nr::KILL => signal::kill(int(a[0]), int(a[1])),
        nr::TKILL => signal::tkill(int(a[0]), int(a[1])),
        nr::TGKILL => signal::tgkill(int(a[0]), int(a[1]), int(a[2])),
        nr::RT_SIGQUEUEINFO => signal::rt_sigqueueinfo(int(a[0]), int(a[1]), a[2]),
        nr::RT_TGSIGQUEUEINFO => signal::rt_tgsigqueueinfo(int(a[0]), int(a[1]), int(a[2]), a[3]),
        nr::GETGROUPS => priority::getgroups(int(a[0])),
        nr::SCHED_GETAFFINITY => priority::sched_getaffinity(int(a[0]), uint(a[1]), a[2]),
        nr::SCHED_SETAFFINITY => priority::sched_setaffinity(int(a[0]), uint(a[1]), a[2]),
        nr::GETCPU => priority::getcpu(a[0], a[1]),
        nr::GETRLIMIT => limits::getrlimit(uint(a[0]), a[1]),
        nr::PRLIMIT64 => limits::prlimit64(int(a[0]), uint(a[1]), a[2], a[3]),
        nr::SETRLIMIT => limits::setrlimit(uint(a[0]), a[1]),
        nr::TIME => info::time(a[0]),
        nr::GETRANDOM => random::getrandom(a[0], a[1], uint(a[2])),
        nr::MEMBARRIER => membarrier::membarrier(int(a[0]), a[1], int(a[2])),
        nr::EXIT => crate::sched::proc::exit::exit_thread(a[0] as u8),
        nr::EXIT_GROUP => crate::sched::proc::exit::exit(a[0] as u8),
        other => {
            unimplemented(other);
            -errno::ENOSYS
        }
    }
}

/// The running process's address space (every caller is a process).
fn space() -> Arc<AddressSpace> {
    sched::current_address_space().expect("a system call from a process")
}

/// Says once per number that a program called something cfslab does not implement (once
/// for all numbers from 512 up, which Linux does not use either).
fn unimplemented(number: u64) {
    static SEEN: SpinLock<[u64; 9]> = SpinLock::new(Rank::Leaf, [0; 9]);
    let number = number.min(512);
    let first = {
        let mut seen = SEEN.lock();
        let word = (number / 64) as usize;
        let first = seen[word] & (1 << (number % 64)) == 0;
        seen[word] |= 1 << (number % 64);
        first
    };
    if first && number == 512 {
        crate::println!("cfslab: system calls 512 and up do not exist (ENOSYS)");
    } else if first {
        crate::println!("cfslab: system call {number} is not implemented (ENOSYS)");
    }
}
