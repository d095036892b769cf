//! `ustest`: the runtime and the kernel's syscalls, checked from user space. Each check
//! prints `ok <what>` (or `FAIL <what>: <why>` and the program exits 1); the output is the
//! same on Linux and on cfslab, which is what the test suite compares.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};
use rt::io;
use rt::process::{self, Exit};
use rt::time;
use rt::{Errno, println};

rt::main!(run);

const MS: u64 = 1_000_000;

/// A check: `Ok`, or why it failed.
type Check = fn(&rt::Args) -> Result<(), &'static str>;
const AT_PAGESZ: usize = 6;

fn run(args: &rt::Args) -> i32 {
    // Re-executed by the vfork check: exit at once with a status the parent checks.
    if args.str(1) == Some("exit7") {
        return 7;
    }
    let checks: [(&str, Check); 20] = [
        ("ids", ids),
        ("errno: close(-1) is EBADF", bad_close),
        ("auxv: AT_PAGESZ is 4096", page_size),
        ("pipe: written bytes read back", pipe),
        ("pipe: end of file once the write end is closed", pipe_eof),
        (
            "pipe: a write with no reader left kills the writer with SIGPIPE",
            pipe_sigpipe,
        ),
        ("dup2: a second descriptor for the same pipe", dup2),
        ("brk: the break grows, and the new memory reads zero", brk),
        ("heap: small, large and many allocations", heap),
        ("fork: the child's exit status 3 reaches wait4", fork_exit),
        ("fork: the child's parent is the caller", fork_parent),
        (
            "fork: parent and child each see only their own writes",
            fork_private_memory,
        ),
        (
            "wait4 WNOHANG: 0 while the child runs, then its status",
            wait_nohang,
        ),
        ("execve of a missing file: ENOENT", exec_missing),
        ("kill: a child killed by SIGKILL", fork_kill),
        (
            "vfork + execve: the new program's exit status 7",
            vfork_exec,
        ),
        (
            "thread: CLONE_THREAD shares memory, is joined through a futex, is no child",
            thread,
        ),
        ("nanosleep: 10 ms", sleep),
        ("clock: process CPU time grows while spinning", cpu_time),
        ("sched_yield and kill(self, 0)", yield_and_signal_zero),
    ];
    for (what, check) in checks {
        match check(args) {
            Ok(()) => println!("ok {what}"),
            Err(why) => {
                println!("FAIL {what}: {why}");
                return 1;
            }
        }
    }
    println!("ustest: all {} checks passed", checks.len());
    0
}

fn ids(_: &rt::Args) -> Result<(), &'static str> {
    let pid = process::getpid();
    if pid <= 0 {
        return Err("getpid <= 0");
    }
    if process::gettid() != pid {
        return Err("a single-threaded process's tid is not its pid");
    }
    if process::getppid() < 0 {
        return Err("getppid < 0");
    }
    Ok(())
}

fn bad_close(_: &rt::Args) -> Result<(), &'static str> {
    match io::close(-1) {
        Err(Errno::EBADF) => Ok(()),
        _ => Err("not EBADF"),
    }
}

fn page_size(args: &rt::Args) -> Result<(), &'static str> {
    (args.aux(AT_PAGESZ) == Some(4096))
        .then_some(())
        .ok_or("AT_PAGESZ missing or not 4096")
}

fn pipe(_: &rt::Args) -> Result<(), &'static str> {
    let (r, w) = io::pipe().map_err(|_| "pipe failed")?;
    io::write_all(w, b"ping").map_err(|_| "write failed")?;
    let mut buf = [0u8; 8];
    let n = io::read(r, &mut buf).map_err(|_| "read failed")?;
    io::close(r).and(io::close(w)).map_err(|_| "close failed")?;
    (&buf[..n] == b"ping").then_some(()).ok_or("wrong bytes")
}

fn heap(_: &rt::Args) -> Result<(), &'static str> {
    let small = Box::new(41u64);
    let large: Vec<u64> = (0..200_000).collect();
    let many: Vec<Box<u32>> = (0..1000).map(Box::new).collect();
    let sum: u64 = large.iter().sum();
    let ok = *small + 1 == 42 && sum == 199_999 * 200_000 / 2 && *many[999] == 999;
    ok.then_some(()).ok_or("wrong values")
}

fn fork_exit(_: &rt::Args) -> Result<(), &'static str> {
    match process::fork().map_err(|_| "fork failed")? {
        0 => process::exit(3),
        child => match process::wait(child) {
            Ok((pid, Exit::Exited(3))) if pid == child => Ok(()),
            _ => Err("wait4 did not see exit status 3"),
        },
    }
}

/// After a fork the two processes' memory is private: the child's stores, and the kernel's
/// copy into the child's buffer (a pipe read), change nothing the parent sees.
fn fork_private_memory(_: &rt::Args) -> Result<(), &'static str> {
    let mut buf: Box<[u8; 8192]> = Box::new([1; 8192]);
    let (read_end, write_end) = io::pipe().map_err(|_| "pipe failed")?;
    match process::fork().map_err(|_| "fork failed")? {
        0 => {
            buf[4096..].fill(2);
            let n = io::read(read_end, &mut buf[..6]);
            let ok = n == Ok(6) && &buf[..6] == b"parent" && buf[6..4096].iter().all(|&b| b == 1);
            process::exit(i32::from(!(ok && buf[4096..].iter().all(|&b| b == 2))))
        }
        child => {
            io::write_all(write_end, b"parent").map_err(|_| "write failed")?;
            let status = process::wait(child);
            let _ = (io::close(read_end), io::close(write_end));
            if buf.iter().any(|&b| b != 1) {
                return Err("the child's writes reached the parent");
            }
            match status {
                Ok((_, Exit::Exited(0))) => Ok(()),
                _ => Err("the child did not see its own writes"),
            }
        }
    }
}

fn pipe_sigpipe(_: &rt::Args) -> Result<(), &'static str> {
    match process::fork().map_err(|_| "fork failed")? {
        0 => {
            let Ok((read_end, write_end)) = io::pipe() else {
                process::exit(2)
            };
            let _ = io::close(read_end);
            let _ = io::write(write_end, b"nobody reads this");
            process::exit(3)
        }
        child => match process::wait(child) {
            Ok((_, Exit::Killed(13))) => Ok(()),
            _ => Err("the writer was not killed by SIGPIPE"),
        },
    }
}

fn fork_kill(_: &rt::Args) -> Result<(), &'static str> {
    match process::fork().map_err(|_| "fork failed")? {
        0 => loop {
            let _ = time::sleep_ns(MS);
        },
        child => {
            process::kill(child, 9).map_err(|_| "kill failed")?;
            match process::wait(child) {
                Ok((_, Exit::Killed(9))) => Ok(()),
                _ => Err("wait4 did not see SIGKILL"),
            }
        }
    }
}

fn vfork_exec(args: &rt::Args) -> Result<(), &'static str> {
    let path = args.get(0).ok_or("no argv[0]")?;
    // argv[0] is NUL-terminated where the kernel put it; build ["argv0", "exit7", NULL].
    let (argv, envp) = args.raw();
    // SAFETY: `argv` has at least one entry (argv[0]).
    let new_argv = [
        unsafe { *argv },
        c"exit7".as_ptr().cast(),
        core::ptr::null(),
    ];
    // SAFETY: path, the arguments and the environment are NUL-terminated, arrays null-ended.
    let child = unsafe { process::vfork_exec(path.as_ptr(), new_argv.as_ptr(), envp) }
        .map_err(|_| "vfork failed")?;
    match process::wait(child) {
        Ok((_, Exit::Exited(7))) => Ok(()),
        Ok((_, Exit::Exited(127))) => Err("execve failed in the child"),
        _ => Err("wait4 did not see exit status 7"),
    }
}

static SHARED: AtomicUsize = AtomicUsize::new(0);

extern "C" fn set_shared(value: usize) {
    SHARED.store(value, Ordering::SeqCst);
}

fn thread(_: &rt::Args) -> Result<(), &'static str> {
    let mut stack = alloc::vec![0u8; 64 * 1024];
    // SAFETY: the stack outlives the thread: it is waited for below.
    let thread =
        unsafe { process::spawn_thread(&mut stack, set_shared, 42) }.map_err(|_| "clone failed")?;
    let tid = thread.tid();
    thread.join();
    if SHARED.load(Ordering::SeqCst) != 42 {
        return Err("the thread's write is not visible");
    }
    // A thread is no child: wait4 has nothing to wait for.
    match process::wait(tid) {
        Err(Errno::ECHILD) => Ok(()),
        _ => Err("wait4 treated the thread as a child"),
    }
}

fn sleep(_: &rt::Args) -> Result<(), &'static str> {
    let start = time::now_ns();
    time::sleep_ns(10 * MS).map_err(|_| "nanosleep failed")?;
    let slept = time::now_ns() - start;
    (10 * MS..1000 * MS)
        .contains(&slept)
        .then_some(())
        .ok_or("slept less than 10 ms or more than a second")
}

fn cpu_time(_: &rt::Args) -> Result<(), &'static str> {
    let before = time::clock_ns(time::CLOCK_PROCESS_CPUTIME_ID).map_err(|_| "clock failed")?;
    let start = time::now_ns();
    while time::now_ns() - start < 5 * MS {}
    let after = time::clock_ns(time::CLOCK_PROCESS_CPUTIME_ID).map_err(|_| "clock failed")?;
    (after > before).then_some(()).ok_or("no CPU time counted")
}

fn yield_and_signal_zero(_: &rt::Args) -> Result<(), &'static str> {
    if time::yield_now() != 0 {
        return Err("sched_yield failed");
    }
    process::kill(process::getpid(), 0).map_err(|_| "kill(self, 0) failed")
}

fn pipe_eof(_: &rt::Args) -> Result<(), &'static str> {
    let (r, w) = io::pipe().map_err(|_| "pipe failed")?;
    io::close(w).map_err(|_| "close failed")?;
    let mut buf = [0u8; 4];
    let n = io::read(r, &mut buf).map_err(|_| "read failed")?;
    io::close(r).map_err(|_| "close failed")?;
    (n == 0).then_some(()).ok_or("read returned bytes")
}

fn dup2(_: &rt::Args) -> Result<(), &'static str> {
    let (r, w) = io::pipe().map_err(|_| "pipe failed")?;
    if io::dup2(w, 9) != Ok(9) {
        return Err("dup2 did not return 9");
    }
    io::write_all(9, b"dup").map_err(|_| "write to 9 failed")?;
    let mut buf = [0u8; 8];
    let n = io::read(r, &mut buf).map_err(|_| "read failed")?;
    for fd in [r, w, 9] {
        io::close(fd).map_err(|_| "close failed")?;
    }
    (&buf[..n] == b"dup").then_some(()).ok_or("wrong bytes")
}

fn brk(_: &rt::Args) -> Result<(), &'static str> {
    // SAFETY: brk(0) only reports the break.
    let start = unsafe { rt::sys::syscall6(rt::sys::nr::BRK, [0; 6]) } as usize;
    let want = start + 8192;
    // SAFETY: moves the break up by two pages, which nothing else uses.
    let now = unsafe { rt::sys::syscall6(rt::sys::nr::BRK, [want, 0, 0, 0, 0, 0]) } as usize;
    if now != want {
        return Err("the break did not move");
    }
    let p = (want - 8) as *mut u64;
    // SAFETY: the last word below the new break is ours now.
    let zero = unsafe { p.read_volatile() };
    // SAFETY: as above.
    unsafe { p.write_volatile(42) };
    // SAFETY: as above.
    let back = unsafe { p.read_volatile() };
    (zero == 0 && back == 42)
        .then_some(())
        .ok_or("the new memory is not fresh and writable")
}

fn fork_parent(_: &rt::Args) -> Result<(), &'static str> {
    let me = process::getpid();
    match process::fork().map_err(|_| "fork failed")? {
        0 => process::exit(if process::getppid() == me { 0 } else { 1 }),
        child => match process::wait(child) {
            Ok((_, Exit::Exited(0))) => Ok(()),
            _ => Err("the child saw another parent"),
        },
    }
}

fn wait_nohang(_: &rt::Args) -> Result<(), &'static str> {
    match process::fork().map_err(|_| "fork failed")? {
        0 => {
            let _ = time::sleep_ns(20 * MS);
            process::exit(5)
        }
        child => {
            if process::wait_nohang(child) != Ok(None) {
                return Err("WNOHANG did not return 0 while the child slept");
            }
            match process::wait(child) {
                Ok((_, Exit::Exited(5))) => Ok(()),
                _ => Err("wait4 did not see exit status 5"),
            }
        }
    }
}

fn exec_missing(_: &rt::Args) -> Result<(), &'static str> {
    let path = c"/bin/does-not-exist";
    let argv = [path.as_ptr().cast::<u8>(), core::ptr::null()];
    let envp = [core::ptr::null::<u8>()];
    // SAFETY: NUL-terminated path, null-terminated arrays; on success we would be replaced,
    // but the file does not exist.
    let e = unsafe { process::execve(path.as_ptr().cast(), argv.as_ptr(), envp.as_ptr()) };
    (e == Errno::ENOENT).then_some(()).ok_or("not ENOENT")
}
