//! Raw system calls on Linux's x86_64 ABI (arch/x86/entry/syscalls/syscall_64.tbl): the
//! number in rax, arguments in rdi, rsi, rdx, r10, r8, r9; `syscall` clobbers rcx and r11;
//! the result comes back in rax, `-errno` on failure. Typed wrappers are in the other
//! modules; these are for them and for programs that want the bare call (the fuzzer).

use crate::Errno;

/// Linux's numbers for the calls cfslab implements.
pub mod nr {
    pub const READ: usize = 0;
    pub const WRITE: usize = 1;
    pub const OPEN: usize = 2;
    pub const CLOSE: usize = 3;
    pub const STAT: usize = 4;
    pub const FSTAT: usize = 5;
    pub const POLL: usize = 7;
    pub const LSEEK: usize = 8;
    pub const MMAP: usize = 9;
    pub const MUNMAP: usize = 11;
    pub const BRK: usize = 12;
    pub const RT_SIGACTION: usize = 13;
    pub const RT_SIGPROCMASK: usize = 14;
    pub const IOCTL: usize = 16;
    pub const WRITEV: usize = 20;
    pub const PIPE: usize = 22;
    pub const SELECT: usize = 23;
    pub const SCHED_YIELD: usize = 24;
    pub const DUP: usize = 32;
    pub const DUP2: usize = 33;
    pub const NANOSLEEP: usize = 35;
    pub const GETPID: usize = 39;
    pub const CLONE: usize = 56;
    pub const FORK: usize = 57;
    pub const VFORK: usize = 58;
    pub const EXECVE: usize = 59;
    pub const EXIT: usize = 60;
    pub const WAIT4: usize = 61;
    pub const KILL: usize = 62;
    pub const UNAME: usize = 63;
    pub const MKDIR: usize = 83;
    pub const GETRUSAGE: usize = 98;
    pub const GETUID: usize = 102;
    pub const GETGID: usize = 104;
    pub const SETUID: usize = 105;
    pub const GETEUID: usize = 107;
    pub const GETEGID: usize = 108;
    pub const GETPPID: usize = 110;
    pub const GETPRIORITY: usize = 140;
    pub const SETPRIORITY: usize = 141;
    pub const ARCH_PRCTL: usize = 158;
    pub const MOUNT: usize = 165;
    pub const REBOOT: usize = 169;
    pub const GETTID: usize = 186;
    pub const FUTEX: usize = 202;
    pub const SET_TID_ADDRESS: usize = 218;
    pub const CLOCK_GETTIME: usize = 228;
    pub const CLOCK_NANOSLEEP: usize = 230;
    pub const EXIT_GROUP: usize = 231;
    pub const OPENAT: usize = 257;
    pub const GETDENTS64: usize = 217;
    pub const NEWFSTATAT: usize = 262;
    pub const PSELECT6: usize = 270;
    pub const PIPE2: usize = 293;
}

/// A system call with six arguments (unused ones are ignored by the kernel).
///
/// # Safety
/// The call may read or write memory through its arguments, as the number's contract says.
#[inline]
pub unsafe fn syscall6(n: usize, a: [usize; 6]) -> isize {
    let ret: isize;
    // SAFETY: the caller vouches for the arguments; `syscall` clobbers only rcx and r11
    // besides rax, and does not touch our stack.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") n as isize => ret,
            in("rdi") a[0],
            in("rsi") a[1],
            in("rdx") a[2],
            in("r10") a[3],
            in("r8") a[4],
            in("r9") a[5],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// A system call with up to three arguments, as a `Result`.
///
/// # Safety
/// As [`syscall6`].
#[inline]
pub unsafe fn call(n: usize, a0: usize, a1: usize, a2: usize) -> Result<usize, Errno> {
    // SAFETY: the caller's.
    Errno::result(unsafe { syscall6(n, [a0, a1, a2, 0, 0, 0]) })
}

/// A call that takes no pointer and cannot fail in a way that matters here.
#[inline]
pub fn simple(n: usize) -> usize {
    // SAFETY: calls such as getpid take no arguments and touch no memory.
    unsafe { syscall6(n, [0; 6]) as usize }
}
