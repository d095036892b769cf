//! `fuzz [CALLS] [SEED]`: at least CALLS (default 1 000 000) random system calls, seeded
//! (default 1), in child processes that drop to an unprivileged uid and are replaced when
//! they die. The numbers are mostly Linux's real ones, with unknown ones mixed in; the
//! arguments include kernel addresses, unmapped and misaligned pointers, huge lengths and
//! negative fds. The kernel must survive all of it, and the kernel's own
//! `RESULT {"kind":"memory"}` line afterwards shows its frames and heap back at baseline.
//! It runs on cfslab only (anywhere else it refuses, status 2): not on a real machine.
//!
//! A child also catches signals: it installs handlers (with random SA_ flags, a random mask
//! and now and then an alternate stack) and sends itself signals, so that handlers run, on
//! frames the kernel writes, between any two of its calls, and `rt_sigreturn`,
//! `rt_sigsuspend`, the process-group calls and the timers are among the numbers it draws.
//!
//! Each child reports its progress with one byte per [`BATCH`] calls on a pipe kept at a
//! descriptor the calls are unlikely to name; a child still alive after [`CHILD_NS`] (asleep
//! for ever in `nanosleep`, a read, `wait4`...) is killed, and after each child every
//! process it left behind is killed too (`kill(-1, SIGKILL)`).

#![no_std]
#![no_main]

extern crate alloc;

use rt::process::{self, Exit};
use rt::sys::{nr, syscall6};
use rt::{io, println, time};

rt::main!(run);

/// The uid the children take (no real account has it).
const FUZZ_UID: u32 = 54_321;
/// Calls per child, and per progress byte.
const CALLS_PER_CHILD: u64 = 2048;
const BATCH: u64 = 64;
/// How long a child may live (virtual time).
const CHILD_NS: u64 = 20_000_000;
/// Where a child keeps its progress pipe.
const REPORT_FD: usize = 1000;

/// xorshift64*: small, fast, and the same sequence on every run for a seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The numbers a call is mostly drawn from: those cfslab implements, and a few it does not.
const NUMBERS: [usize; 86] = [
    nr::READ,
    nr::WRITE,
    nr::CLOSE,
    nr::POLL,
    nr::MMAP,
    nr::MUNMAP,
    nr::BRK,
    nr::RT_SIGACTION,
    nr::RT_SIGPROCMASK,
    nr::IOCTL,
    nr::WRITEV,
    nr::PIPE,
    nr::SELECT,
    nr::SCHED_YIELD,
    nr::DUP,
    nr::DUP2,
    nr::NANOSLEEP,
    nr::GETPID,
    nr::CLONE,
    nr::FORK,
    nr::VFORK,
    nr::EXECVE,
    nr::WAIT4,
    nr::KILL,
    nr::UNAME,
    nr::GETRUSAGE,
    nr::GETUID,
    nr::GETGID,
    nr::SETUID,
    nr::GETEUID,
    nr::GETEGID,
    nr::GETPPID,
    nr::GETPRIORITY,
    nr::SETPRIORITY,
    nr::ARCH_PRCTL,
    nr::REBOOT,
    nr::GETTID,
    nr::SET_TID_ADDRESS,
    nr::CLOCK_GETTIME,
    nr::CLOCK_NANOSLEEP,
    nr::PSELECT6,
    nr::PIPE2,
    nr::OPEN,
    nr::OPENAT,
    nr::STAT,
    nr::FSTAT,
    nr::NEWFSTATAT,
    nr::LSEEK,
    nr::GETDENTS64,
    21,  // access
    79,  // getcwd
    80,  // chdir
    81,  // fchdir
    72,  // fcntl
    292, // dup3
    201, // time
    318, // getrandom
    115, // getgroups
    203, // sched_setaffinity
    204, // sched_getaffinity
    97,  // getrlimit
    302, // prlimit64
    200, // tkill
    234, // tgkill
    89,  // readlink
    435, // clone3 (not implemented)
    15,  // rt_sigreturn (from no handler: a frame of whatever the stack holds)
    34,  // pause
    36,  // getitimer
    37,  // alarm
    38,  // setitimer
    127, // rt_sigpending
    128, // rt_sigtimedwait
    130, // rt_sigsuspend
    131, // sigaltstack
    109, // setpgid
    111, // getpgrp
    112, // setsid
    121, // getpgid
    124, // getsid
    160, // setrlimit
    28,  // madvise
    40,  // sendfile
    99,  // sysinfo
    157, // prctl
    273, // set_robust_list
];

/// Signals a child catches and sends itself (not SIGKILL or SIGSTOP, which cannot be
/// caught, nor the progress pipe's SIGPIPE).
const CAUGHT: [i32; 8] = [1, 2, 10, 12, 14, 17, 23, 28];
/// The SA_ flags a handler gets a random subset of: SA_SIGINFO, SA_ONSTACK, SA_RESTART,
/// SA_NODEFER, SA_RESETHAND.
const HANDLER_FLAGS: [usize; 5] = [0x4, 0x0800_0000, 0x1000_0000, 0x4000_0000, 0x8000_0000];

/// Handlers run, in this child.
static HANDLED: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

/// A handler: counts, and makes a call of its own, as handlers do (on the frame's stack).
extern "C" fn on_signal(_signal: i32) {
    HANDLED.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    // SAFETY: getpid takes no memory.
    unsafe { syscall6(nr::GETPID, [0; 6]) };
}

/// Now and then, between the random calls: catch a signal, or send one to itself, or set
/// an alternate stack in the scratch buffer.
fn signal_step(rng: &mut Rng, scratch: &mut [u8]) {
    let signal = CAUGHT[rng.below(CAUGHT.len() as u64) as usize];
    match rng.below(3) {
        0 => {
            let flags = HANDLER_FLAGS
                .iter()
                .filter(|_| rng.below(2) == 0)
                .fold(0, |all, &f| all | f);
            let _ = process::catch_signal(signal, on_signal, flags, rng.next());
        }
        1 => {
            let _ = process::kill(process::getpid(), signal);
        }
        _ => {
            // stack_t: sp, flags, size, in the scratch buffer's first 24 bytes; the stack
            // itself past them.
            let base = scratch.as_mut_ptr() as usize;
            let size = [1024usize, 8192, 32768][rng.below(3) as usize];
            let flags: u32 = [0, 2, 1 << 31][rng.below(3) as usize];
            scratch[..8].copy_from_slice(&(base + 64).to_le_bytes());
            scratch[8..12].copy_from_slice(&flags.to_le_bytes());
            scratch[16..24].copy_from_slice(&size.to_le_bytes());
            // SAFETY: the kernel reads 24 bytes of the scratch buffer.
            unsafe { syscall6(131, [base, 0, 0, 0, 0, 0]) };
        }
    }
}

/// Real paths, for the file calls to reach the tree (the scheduler's files among them; the
/// children are not root, so writes to those must be refused).
const PATHS: [&[u8]; 11] = [
    b"/\0",
    b"/dev/null\0",
    b"/dev/zero\0",
    b"/dev/tty\0",
    b"/proc\0",
    b"/proc/self/status\0",
    b"/proc/sched_debug\0",
    b"/proc/sys/kernel/sched_latency_ns\0",
    b"/sys/kernel/debug/sched_features\0",
    b"/bin/hello\0",
    b"/proc/../sys/./kernel//debug\0",
];

fn run(args: &rt::Args) -> i32 {
    if !process::cfslab_only("fuzz") {
        return 2;
    }
    let calls: u64 = args
        .str(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let seed: u64 = args.str(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    println!("fuzz: {calls} random system calls, seed {seed}, as uid {FUZZ_UID}");
    let (mut made, mut children, mut signalled, mut stopped) = (0u64, 0u64, 0u64, 0u64);
    let mut next_report = calls / 10;
    while made < calls {
        let child_seed = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ children.wrapping_add(1);
        let Ok((progress, exit)) = one_child(child_seed) else {
            println!("fuzz: FAIL: could not start child {children}");
            return 1;
        };
        children += 1;
        made += progress;
        match exit {
            Some(Exit::Killed(_)) => signalled += 1,
            Some(Exit::Exited(_)) => {}
            None => stopped += 1,
        }
        // Whatever the child left behind (forked children, clones) goes too.
        let _ = process::kill(-1, 9);
        while process::wait(-1).is_ok() {}
        if made >= next_report && made < calls {
            println!("fuzz: {made} of {calls} calls ({children} children)");
            next_report += calls / 10;
        }
    }
    println!(
        "fuzz: done: {made} calls in {children} children ({signalled} killed by a signal, \
         {stopped} stopped after {} ms); the kernel is still here",
        CHILD_NS / 1_000_000
    );
    0
}

/// Runs one child with `seed`: the calls it reported, and how it ended (`None`: it had to
/// be killed when its time was up).
fn one_child(seed: u64) -> Result<(u64, Option<Exit>), rt::Errno> {
    let (report_read, report_write) = io::pipe()?;
    let child = process::fork()?;
    if child == 0 {
        let _ = io::close(report_read);
        child_main(seed, report_write)
    }
    let _ = io::close(report_write);
    let started = time::now_ns();
    let exit = loop {
        match process::wait_nohang(child) {
            Ok(Some(exit)) => break Some(exit),
            Ok(None) if time::now_ns() - started < CHILD_NS => {
                let _ = time::sleep_ns(1_000_000);
            }
            _ => {
                let _ = process::kill(child, 9);
                let _ = process::wait(child);
                break None;
            }
        }
    };
    let mut progress = 0;
    let mut buf = [0u8; 64];
    while let Ok(n @ 1..) = io::read(report_read, &mut buf) {
        progress += n as u64 * BATCH;
    }
    let _ = io::close(report_read);
    Ok((progress, exit))
}

/// The child: unprivileged, no console (random writes must not reach it), the progress pipe
/// out of the way, then the calls.
fn child_main(seed: u64, report: i32) -> ! {
    if process::setuid(FUZZ_UID).is_err() {
        process::exit(3);
    }
    let _ = io::dup2(report, REPORT_FD as i32);
    for fd in [0, 1, 2, report] {
        let _ = io::close(fd);
    }
    let mut scratch = alloc::vec![0u8; 65536];
    let mut rng = Rng(seed | 1);
    for i in 0..CALLS_PER_CHILD {
        if i % BATCH == 0 {
            let _ = io::write(REPORT_FD as i32, b"+");
        }
        if rng.below(8) == 0 {
            signal_step(&mut rng, &mut scratch);
        }
        let number = match rng.below(10) {
            0..=6 => NUMBERS[rng.below(NUMBERS.len() as u64) as usize],
            7 | 8 => rng.below(600) as usize,
            _ => rng.next() as usize,
        };
        let args = core::array::from_fn(|_| argument(&mut rng, &mut scratch));
        // SAFETY: not safe at all, on purpose: the calls may write anywhere in this
        // process, unmap its code or stack, or end it. Only this process can suffer.
        let ret = unsafe { syscall6(number, args) };
        if ret == 0 && matches!(number, nr::FORK | nr::VFORK | nr::CLONE) {
            // A new process or thread, running on whatever stack it got: leave at once.
            // SAFETY: `exit` takes no memory.
            unsafe { syscall6(nr::EXIT, [0; 6]) };
        }
    }
    process::exit(0)
}

/// One argument: small numbers and fds, pointers into the scratch buffer (misaligned too,
/// or running off its end), real paths, unmapped and kernel addresses, huge and random
/// values.
fn argument(rng: &mut Rng, scratch: &mut [u8]) -> usize {
    let base = scratch.as_mut_ptr() as usize;
    match rng.below(13) {
        12 => PATHS[rng.below(PATHS.len() as u64) as usize].as_ptr() as usize,
        0 => 0,
        1 => rng.below(64) as usize,
        2 => (rng.below(8) as isize - 6) as usize, // -6..=1: negative fds
        3 | 4 => base + rng.below(scratch.len() as u64) as usize,
        5 => base + scratch.len() - rng.below(16) as usize,
        6 => 0xffff_ffff_8000_0000 + rng.below(1 << 30) as usize,
        7 => 0x1000 + rng.below(1 << 20) as usize,
        8 => usize::MAX - rng.below(4096) as usize,
        9 => 1 << (rng.below(48) as usize),
        10 => rng.below(4096) as usize,
        _ => rng.next() as usize,
    }
}
