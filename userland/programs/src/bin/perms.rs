//! `perms`: Linux's uid rules (kernel/sys.c, kernel/signal.c), checked from user space.
//! Run it as root. Each check forks a child that drops to an unprivileged uid with `setuid`
//! and tries what the rules allow and forbid; the parent, still root, does what only root
//! may. Each check prints `ok <what>` or `FAIL <what>: <why>`; the lines are the same on
//! Linux (as root) and on cfslab, which the test suite compares.

#![no_std]
#![no_main]

use rt::process::{self, Exit, Which};
use rt::{Errno, io, println};

rt::main!(run);

/// The unprivileged uid the children take: one no real account is likely to have, since
/// a PRIO_USER renice on the host reaches every process of the uid.
const USER: u32 = 54_321;

type Check = fn() -> Result<(), &'static str>;

fn run(_: &rt::Args) -> i32 {
    if process::getuid() != 0 {
        println!("perms: run me as root (uid 0)");
        return 2;
    }
    let checks: [(&str, Check); 6] = [
        (
            "setuid: root takes another uid, which can take itself but not root",
            setuid_rules,
        ),
        (
            "kill: a user may signal itself, not root's process (EPERM)",
            kill_rules,
        ),
        (
            "setpriority: a user may raise its own nice, not lower it (EACCES)",
            own_nice_rules,
        ),
        (
            "setpriority: a user may not renice root's process (EPERM)",
            renice_root,
        ),
        (
            "setpriority: root lowers a user's process's nice to -5",
            root_renices,
        ),
        (
            "setpriority PRIO_USER: root renices every process of a uid",
            renice_user,
        ),
    ];
    let mut failed = 0;
    for (what, check) in checks {
        match check() {
            Ok(()) => println!("ok {what}"),
            Err(why) => {
                println!("FAIL {what}: {why}");
                failed += 1;
            }
        }
    }
    if failed == 0 {
        println!("perms: all {} checks passed", checks.len());
    }
    i32::from(failed != 0)
}

/// Runs `f` in a child that has taken uid [`USER`]; Ok if it returned true.
fn as_user(f: fn() -> bool) -> Result<(), &'static str> {
    match process::fork() {
        Ok(0) => {
            let ok = process::setuid(USER).is_ok() && f();
            process::exit(i32::from(!ok))
        }
        Ok(child) => match process::wait(child) {
            Ok((_, Exit::Exited(0))) => Ok(()),
            Ok(_) => Err("the unprivileged child saw another answer"),
            Err(_) => Err("wait4 failed"),
        },
        Err(_) => Err("fork failed"),
    }
}

fn setuid_rules() -> Result<(), &'static str> {
    as_user(|| {
        process::getuid() == USER
            && process::setuid(0) == Err(Errno::EPERM)
            && process::setuid(USER).is_ok()
            && process::getuid() == USER
    })
}

fn kill_rules() -> Result<(), &'static str> {
    as_user(|| {
        process::kill(process::getpid(), 0).is_ok()
            && process::kill(process::getppid(), 0) == Err(Errno::EPERM)
    })
}

fn own_nice_rules() -> Result<(), &'static str> {
    as_user(|| {
        process::setpriority(Which::Process, 0, 5).is_ok()
            && process::getpriority(Which::Process, 0) == Ok(5)
            && process::setpriority(Which::Process, 0, 2) == Err(Errno::EACCES)
            && process::setpriority(Which::Process, 0, 19).is_ok()
            && process::getpriority(Which::Process, 0) == Ok(19)
    })
}

fn renice_root() -> Result<(), &'static str> {
    as_user(|| process::setpriority(Which::Process, process::getppid(), 10) == Err(Errno::EPERM))
}

/// A child that has taken uid [`USER`] (this returns once it has) and waits for a byte from
/// the parent, so the parent can act on it while it lives; then it exits with status 0 if
/// its nice is `expect`. Returns its pid and the pipe end to write the byte to. (A byte,
/// not end-of-file: a later child inherits a copy of the write end.)
fn waiting_user(expect: i32) -> Result<(i32, i32), &'static str> {
    let (go_read, go_write) = io::pipe().map_err(|_| "pipe failed")?;
    let (ready_read, ready_write) = io::pipe().map_err(|_| "pipe failed")?;
    match process::fork() {
        Ok(0) => {
            let _ = io::close(go_write);
            let _ = io::close(ready_read);
            let ok = process::setuid(USER).is_ok();
            let _ = io::write(ready_write, b"r");
            let mut byte = [0u8; 1];
            let _ = io::read(go_read, &mut byte);
            let nice = process::getpriority(Which::Process, 0);
            process::exit(i32::from(!(ok && nice == Ok(expect))))
        }
        Ok(child) => {
            let _ = io::close(go_read);
            let _ = io::close(ready_write);
            let mut byte = [0u8; 1];
            let ready = io::read(ready_read, &mut byte);
            let _ = io::close(ready_read);
            match ready {
                Ok(1) => Ok((child, go_write)),
                _ => Err("the child never said it was ready"),
            }
        }
        Err(_) => Err("fork failed"),
    }
}

/// Lets the waiting child go and checks it exited with 0.
fn release(child: i32, write_end: i32) -> Result<(), &'static str> {
    let _ = io::write(write_end, b"g");
    let _ = io::close(write_end);
    match process::wait(child) {
        Ok((_, Exit::Exited(0))) => Ok(()),
        _ => Err("the child saw another nice value"),
    }
}

fn root_renices() -> Result<(), &'static str> {
    let (child, write_end) = waiting_user(-5)?;
    let set = process::setpriority(Which::Process, child, -5);
    let read = process::getpriority(Which::Process, child);
    release(child, write_end)?;
    match (set, read) {
        (Ok(()), Ok(-5)) => Ok(()),
        (Err(_), _) => Err("root's setpriority failed"),
        _ => Err("getpriority does not read -5"),
    }
}

fn renice_user() -> Result<(), &'static str> {
    let (first, first_end) = waiting_user(7)?;
    let (second, second_end) = waiting_user(7)?;
    let set = process::setpriority(Which::User, USER as i32, 7);
    let results = (release(first, first_end), release(second, second_end));
    if set.is_err() {
        return Err("root's PRIO_USER setpriority failed");
    }
    results.0.and(results.1)
}
