//! Processes: fork, vfork + execve, wait4 with Linux's status encoding, exit, kill, signal
//! dispositions, priorities and the ids. Threads are `thread`'s (re-exported here).

use crate::Errno;
use crate::sys::{call, nr, simple, syscall6};

/// Ends the whole process (`exit_group`) with `status`.
pub fn exit(status: i32) -> ! {
    // SAFETY: no memory is involved; the call does not return.
    unsafe { syscall6(nr::EXIT_GROUP, [status as usize, 0, 0, 0, 0, 0]) };
    unreachable!("exit_group returned")
}

pub fn getpid() -> i32 {
    simple(nr::GETPID) as i32
}

pub fn getppid() -> i32 {
    simple(nr::GETPPID) as i32
}

pub fn gettid() -> i32 {
    simple(nr::GETTID) as i32
}

pub fn getuid() -> u32 {
    simple(nr::GETUID) as u32
}

pub fn setuid(uid: u32) -> Result<(), Errno> {
    // SAFETY: no memory is involved.
    unsafe { call(nr::SETUID, uid as usize, 0, 0) }.map(drop)
}

/// Whether the kernel is cfslab (`uname`'s sysname). The programs that would harm a real
/// machine — a fork bomb, the fuzzer, a power-off — refuse to run anywhere else.
pub fn on_cfslab() -> bool {
    let mut uts = [0u8; 6 * 65];
    // SAFETY: the kernel writes one `struct utsname` (six 65-byte fields) into `uts`.
    let ok = unsafe { call(nr::UNAME, uts.as_mut_ptr() as usize, 0, 0) }.is_ok();
    ok && uts.starts_with(b"cfslab\0")
}

/// For a program that must run on cfslab only: true there; anywhere else it says so in one
/// line naming `program` and returns false (the program then exits with status 2).
pub fn cfslab_only(program: &str) -> bool {
    let here = on_cfslab();
    if !here {
        crate::println!("{program}: refusing to run: this program is for cfslab only");
    }
    here
}

/// What `getpriority`/`setpriority` name: a process, a process group, or every process of
/// a user (`who` 0: the caller, its group, its uid).
#[derive(Debug, Clone, Copy)]
pub enum Which {
    Process = 0,
    Group = 1,
    User = 2,
}

/// The nice value of the highest-priority process `which`/`who` names. The raw call
/// returns 20 - nice (1..=40, so that no nice value looks like an error); this undoes it.
pub fn getpriority(which: Which, who: i32) -> Result<i32, Errno> {
    // SAFETY: no memory is involved.
    unsafe { call(nr::GETPRIORITY, which as usize, who as usize, 0) }.map(|p| 20 - p as i32)
}

/// Sets the nice value of every process `which`/`who` names.
pub fn setpriority(which: Which, who: i32, nice: i32) -> Result<(), Errno> {
    // SAFETY: no memory is involved.
    unsafe { call(nr::SETPRIORITY, which as usize, who as usize, nice as usize) }.map(drop)
}

/// `reboot`'s first magic number (LINUX_REBOOT_MAGIC1); the second is fixed here.
pub const REBOOT_MAGIC1: usize = 0xfee1_dead;
const REBOOT_MAGIC2: usize = 672_274_793;
/// LINUX_REBOOT_CMD_POWER_OFF.
pub const REBOOT_POWER_OFF: usize = 0x4321_fedc;

/// `reboot(magic1, MAGIC2, cmd)`: only returns on failure for a power-off.
pub fn reboot(magic1: usize, cmd: usize) -> Result<usize, Errno> {
    // SAFETY: reboot takes no memory with the commands used here (no restart string).
    Errno::result(unsafe { syscall6(nr::REBOOT, [magic1, REBOOT_MAGIC2, cmd, 0, 0, 0]) })
}

/// `kill(pid, signal)`; signal 0 only checks that the process exists and may be signalled.
pub fn kill(pid: i32, signal: i32) -> Result<(), Errno> {
    // SAFETY: no memory is involved.
    unsafe { call(nr::KILL, pid as usize, signal as usize, 0) }.map(drop)
}

/// Linux's SIGINT: what Ctrl-C on a terminal sends.
pub const SIGINT: i32 = 2;
/// Linux's SIGQUIT and SIGTSTP: what Ctrl-\ and Ctrl-Z send.
pub const SIGQUIT: i32 = 3;
pub const SIGTSTP: i32 = 20;
/// Linux's SIGUSR1: a signal for programs' own use.
pub const SIGUSR1: i32 = 10;

/// The signals a terminal's keys send to its foreground process group.
pub const TERMINAL_KEYS: [i32; 3] = [SIGINT, SIGQUIT, SIGTSTP];

/// `rt_sigaction(signal, {SIG_IGN}, NULL)`: the signal is ignored from now on, and after
/// `execve` too (an ignored signal stays ignored in the new program).
pub fn ignore_signal(signal: i32) -> Result<(), Errno> {
    set_signal_handler(signal, 1)
}

/// `rt_sigaction(signal, {SIG_DFL}, NULL)`: the signal takes its default action again.
pub fn default_signal(signal: i32) -> Result<(), Errno> {
    set_signal_handler(signal, 0)
}

// The way back from every handler `catch_signal` installs: `rt_sigreturn` (15), as the C
// libraries' `__restore_rt`. The handler returns here, with the stack pointer at the
// signal frame's ucontext, which the kernel restores.
core::arch::global_asm!(
    ".globl rt_signal_restorer",
    "rt_signal_restorer:",
    "mov eax, 15",
    "syscall",
    "ud2",
);

unsafe extern "C" {
    fn rt_signal_restorer();
}

/// `sa_flags`: the restorer is in the action (Linux's x86_64 requires one).
const SA_RESTORER: usize = 0x0400_0000;

/// `rt_sigaction(signal, {handler, flags | SA_RESTORER, restorer, mask}, NULL)`: `handler`
/// runs when `signal` comes, with `mask` blocked besides the signal itself (unless `flags`
/// has SA_NODEFER).
pub fn catch_signal(
    signal: i32,
    handler: extern "C" fn(i32),
    flags: usize,
    mask: u64,
) -> Result<(), Errno> {
    let action: [usize; 4] = [
        handler as usize,
        flags | SA_RESTORER,
        rt_signal_restorer as *const () as usize,
        mask as usize,
    ];
    // SAFETY: the kernel reads one struct sigaction; no old action is asked for.
    unsafe {
        Errno::result(syscall6(
            nr::RT_SIGACTION,
            [signal as usize, action.as_ptr() as usize, 0, 8, 0, 0],
        ))
    }
    .map(drop)
}

fn set_signal_handler(signal: i32, handler: usize) -> Result<(), Errno> {
    // struct sigaction: handler, flags, restorer, mask.
    let action: [usize; 4] = [handler, 0, 0, 0];
    // SAFETY: the kernel reads one struct sigaction; no old action is asked for.
    unsafe {
        Errno::result(syscall6(
            nr::RT_SIGACTION,
            [signal as usize, action.as_ptr() as usize, 0, 8, 0, 0],
        ))
    }
    .map(drop)
}

/// `fork()`: the child's pid in the parent, 0 in the child.
pub fn fork() -> Result<i32, Errno> {
    // SAFETY: the child gets a copy of the address space; nothing is shared.
    unsafe { call(nr::FORK, 0, 0, 0) }.map(|pid| pid as i32)
}

/// `vfork()` then, in the child, `execve(path, argv, envp)` (or `exit(127)` if it fails):
/// the child's pid. Written in assembly because a vfork child runs on its parent's stack
/// until it execs: no Rust code may run there (it would overwrite the parent's frames). The
/// return address is kept in a register across the call, as musl's vfork does.
///
/// # Safety
/// `path` is a NUL-terminated string; `argv` and `envp` are null-terminated arrays of them.
pub unsafe fn vfork_exec(
    path: *const u8,
    argv: *const *const u8,
    envp: *const *const u8,
) -> Result<i32, Errno> {
    // SAFETY: the caller vouches for the strings; see `vfork_exec_raw`.
    Errno::result(unsafe { vfork_exec_raw(path, argv, envp) }).map(|pid| pid as i32)
}

/// `vfork()` whose child exits at once with status 0: the child's pid. For measuring what a
/// vfork itself costs (the child runs on the parent's stack, so it does nothing but exit).
pub fn vfork_exit() -> Result<i32, Errno> {
    // SAFETY: the child touches no memory: it makes the exit call from registers.
    Errno::result(unsafe { vfork_exit_raw() }).map(|pid| pid as i32)
}

#[unsafe(naked)]
unsafe extern "C" fn vfork_exit_raw() -> isize {
    core::arch::naked_asm!(
        "mov eax, {vfork}",
        "syscall",
        "test rax, rax",
        "jnz 2f",
        "xor edi, edi",
        "mov eax, {exit}",
        "syscall",
        "ud2",
        "2:",
        "ret",
        vfork = const nr::VFORK,
        exit = const nr::EXIT,
    )
}

#[unsafe(naked)]
unsafe extern "C" fn vfork_exec_raw(
    path: *const u8,
    argv: *const *const u8,
    envp: *const *const u8,
) -> isize {
    core::arch::naked_asm!(
        // Arguments for execve, kept in registers the vfork leaves alone.
        "mov r8, rdi",
        "mov r9, rsi",
        "mov r10, rdx",
        "mov eax, {vfork}",
        "syscall",
        "test rax, rax",
        "jnz 2f",
        // The child: execve(path, argv, envp); on failure exit(127).
        "mov rdi, r8",
        "mov rsi, r9",
        "mov rdx, r10",
        "mov eax, {execve}",
        "syscall",
        "mov edi, 127",
        "mov eax, {exit}",
        "syscall",
        "ud2",
        // The parent (or an error): return the pid (or -errno).
        "2:",
        "ret",
        vfork = const nr::VFORK,
        execve = const nr::EXECVE,
        exit = const nr::EXIT,
    )
}

/// `execve(path, argv, envp)`: returns only on failure.
///
/// # Safety
/// As [`vfork_exec`].
pub unsafe fn execve(path: *const u8, argv: *const *const u8, envp: *const *const u8) -> Errno {
    // SAFETY: the caller vouches for the strings.
    match unsafe { call(nr::EXECVE, path as usize, argv as usize, envp as usize) } {
        Err(e) => e,
        Ok(_) => Errno::EINVAL,
    }
}

/// How a child ended, from `wait4`'s status word (Linux's encoding: exit status in bits
/// 8–15 with the low 7 bits zero; otherwise the low 7 bits are the killing signal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Exited(i32),
    Killed(i32),
}

impl Exit {
    pub fn from_status(status: i32) -> Exit {
        if status & 0x7f == 0 {
            Exit::Exited((status >> 8) & 0xff)
        } else {
            Exit::Killed(status & 0x7f)
        }
    }
}

/// `wait4(pid, &status, 0, NULL)`: the child that ended and how (`pid` -1 = any child).
pub fn wait(pid: i32) -> Result<(i32, Exit), Errno> {
    let mut status = 0i32;
    // SAFETY: the kernel writes one int into `status`.
    let child = unsafe {
        Errno::result(syscall6(
            nr::WAIT4,
            [pid as usize, &raw mut status as usize, 0, 0, 0, 0],
        ))
    }?;
    Ok((child as i32, Exit::from_status(status)))
}

/// The CPU time a child used, as `wait4`'s rusage reports it (its reaped children's
/// included), in ns.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub user_ns: u64,
    pub system_ns: u64,
}

/// `wait4(pid, &status, 0, &rusage)`: as [`wait`], with the child's CPU time.
pub fn wait_with_usage(pid: i32) -> Result<(i32, Exit, Usage), Errno> {
    // struct rusage: ru_utime and ru_stime (two timevals of two i64 each), then 14 longs.
    let mut rusage = [0i64; 18];
    let mut status = 0i32;
    // SAFETY: the kernel writes one int into `status` and one struct rusage (144 bytes)
    // into `rusage`.
    let child = unsafe {
        Errno::result(syscall6(
            nr::WAIT4,
            [
                pid as usize,
                &raw mut status as usize,
                0,
                rusage.as_mut_ptr() as usize,
                0,
                0,
            ],
        ))
    }?;
    let ns = |sec: i64, usec: i64| (sec as u64) * 1_000_000_000 + (usec as u64) * 1_000;
    let usage = Usage {
        user_ns: ns(rusage[0], rusage[1]),
        system_ns: ns(rusage[2], rusage[3]),
    };
    Ok((child as i32, Exit::from_status(status), usage))
}

/// `wait4(pid, &status, WNOHANG, NULL)`: how the child ended, or `None` if it still runs.
pub fn wait_nohang(pid: i32) -> Result<Option<Exit>, Errno> {
    const WNOHANG: usize = 1;
    let mut status = 0i32;
    // SAFETY: the kernel writes one int into `status`.
    let child = unsafe {
        Errno::result(syscall6(
            nr::WAIT4,
            [pid as usize, &raw mut status as usize, WNOHANG, 0, 0, 0],
        ))
    }?;
    Ok((child != 0).then(|| Exit::from_status(status)))
}

pub use crate::thread::{Thread, futex_wait, futex_wake, spawn_thread};
