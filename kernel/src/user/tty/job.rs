//! The terminal's side of job control (Linux's drivers/tty/tty_jobctrl.c): the session it
//! belongs to and its foreground process group, the signals its keys send there, the
//! checks that stop a background job touching it (SIGTTIN, SIGTTOU), and the ioctls a
//! shell drives all this with (TIOCGPGRP, TIOCSPGRP, TIOCGSID, TIOCSCTTY, TIOCNOTTY),
//! beside the settings ones (TCGETS, TCSETS, TCSETSW, TCSETSF, TIOCGWINSZ, FIONREAD).

use super::termios::{Termios, WINSIZE};
use super::{READERS, with};
use crate::arch::irq;
use crate::sched;
use crate::sched::proc::groups;
use crate::sched::proc::sighand::{SI_KERNEL, SIG_IGN, SIGTTIN, SIGTTOU, SigInfo, bit};
use crate::user::errno;

/// The console becomes the controlling terminal of the first program's session, whose
/// process group is in the foreground.
pub fn set_controlling(pid: u32) {
    with(|t| {
        t.session = pid;
        t.foreground = pid;
    });
}

fn kernel_info() -> SigInfo {
    SigInfo {
        code: SI_KERNEL,
        ..SigInfo::default()
    }
}

/// A key's signal to the foreground process group (from the serial interrupt). Before any
/// program has the console, no one.
pub fn signal_foreground(signal: u8) {
    let foreground = with(|t| t.foreground);
    if foreground != 0 {
        groups::signal_group(foreground, None, signal, kernel_info());
    }
}

/// Whether the running process belongs to the console's session, but not to its
/// foreground group: a background job of the session. Its group, if so.
fn background_group() -> Option<(
    u32,
    alloc::sync::Arc<crate::sched::proc::thread_group::ThreadGroup>,
)> {
    let group = sched::current_group()?;
    let (session, foreground) = with(|t| (t.session, t.foreground));
    (foreground != 0 && group.sid() == session && group.pgid() != foreground)
        .then(|| (group.pgid(), group))
}

/// A background process may not read the terminal: its group gets SIGTTIN (which stops
/// it) and the read is tried again once it is continued; if it ignores or blocks SIGTTIN,
/// or its group is orphaned (no one would continue it), EIO (Linux's `n_tty_read` →
/// `tty_check_change`).
pub fn may_read() -> Result<(), i64> {
    let Some((pgid, group)) = background_group() else {
        return Ok(());
    };
    let ignored = group.sighand.action(SIGTTIN).handler == SIG_IGN;
    if ignored || sched::blocked_signals() & bit(SIGTTIN) != 0 || groups::is_orphaned(pgid) {
        return Err(-errno::EIO);
    }
    groups::signal_group(pgid, None, SIGTTIN, kernel_info());
    Err(-errno::ERESTARTSYS)
}

/// A background process that changes the terminal (its settings, its foreground group)
/// gets SIGTTOU, unless it ignores or blocks it: then the change is made (a shell ignores
/// SIGTTOU to hand the terminal to a job).
fn may_change() -> Result<(), i64> {
    let Some((pgid, group)) = background_group() else {
        return Ok(());
    };
    let ignored = group.sighand.action(SIGTTOU).handler == SIG_IGN;
    if ignored || sched::blocked_signals() & bit(SIGTTOU) != 0 {
        return Ok(());
    }
    // An orphaned group would stay stopped: EIO instead (`tty_check_change`).
    if groups::is_orphaned(pgid) {
        return Err(-errno::EIO);
    }
    groups::signal_group(pgid, None, SIGTTOU, kernel_info());
    Err(-errno::ERESTARTSYS)
}

/// Sleeps until `ready()` (more input, or a signal) or the clock reads `deadline` (VTIME).
pub(super) fn wait_for_input(deadline: u64, ready: &impl Fn() -> bool) {
    let me = sched::current();
    loop {
        let done = irq::without(|| {
            // On the queue before the look, so a console interrupt on another CPU that
            // queues input after it still finds this reader (see `WaitQueue`).
            READERS.add_current();
            let expired = crate::time::clock::now() >= deadline;
            if expired || ready() {
                return true;
            }
            sched::sleep_until_woken(Some(deadline), 0);
            false
        });
        READERS.remove(me);
        if done {
            return;
        }
    }
}

/// The running process's session and group, if the console is its controlling terminal.
/// A console that has none yet becomes the terminal of the first session leader that asks
/// (as a session leader's `open` of a terminal makes it its controlling one on Linux).
fn controlled() -> Option<(u32, u32)> {
    let group = sched::current_group()?;
    let pid = crate::task::pid_of(sched::current_process()) as u32;
    let session = with(|t| {
        if t.session == 0 && group.sid() == pid {
            t.session = pid;
            t.foreground = group.pgid();
        }
        t.session
    });
    (group.sid() == session).then(|| (group.sid(), group.pgid()))
}

/// The console's ioctls, as Linux's tty layer answers them; ENOTTY for one it does not know.
pub fn ioctl(request: u64, arg: u64) -> i64 {
    const TCGETS: u64 = 0x5401;
    const TCSETS: u64 = 0x5402;
    const TCSETSW: u64 = 0x5403;
    const TCSETSF: u64 = 0x5404;
    const TIOCSCTTY: u64 = 0x540e;
    const TIOCGPGRP: u64 = 0x540f;
    const TIOCSPGRP: u64 = 0x5410;
    const TIOCGWINSZ: u64 = 0x5413;
    const TIOCSWINSZ: u64 = 0x5414;
    const FIONREAD: u64 = 0x541b;
    const TIOCNOTTY: u64 = 0x5422;
    const TIOCGSID: u64 = 0x5429;
    let space = sched::current_address_space().expect("a process");
    let put = |bytes: &[u8]| match space.write(arg, bytes) {
        Ok(()) => 0,
        Err(_) => -errno::EFAULT,
    };
    match request {
        TCGETS => put(&with(|t| t.settings).0),
        TCSETS | TCSETSW | TCSETSF => {
            let mut raw = [0u8; 36];
            if space.read(arg, &mut raw).is_err() {
                return -errno::EFAULT;
            }
            if let Err(e) = may_change() {
                return e;
            }
            with(|t| t.set(Termios(raw), request == TCSETSF));
            READERS.wake_all();
            0
        }
        TIOCGWINSZ => put(&WINSIZE),
        TIOCSWINSZ => 0,
        FIONREAD => {
            let n = with(|t| t.raw.len() + t.lines.iter().map(alloc::vec::Vec::len).sum::<usize>());
            put(&(n as i32).to_le_bytes())
        }
        TIOCGPGRP => match controlled() {
            Some(_) => put(&(with(|t| t.foreground) as i32).to_le_bytes()),
            None => -errno::ENOTTY,
        },
        TIOCGSID => match controlled() {
            Some((sid, _)) => put(&(sid as i32).to_le_bytes()),
            None => -errno::ENOTTY,
        },
        TIOCSPGRP => set_foreground(&space, arg),
        TIOCSCTTY => {
            let group = sched::current_group().expect("a process");
            let pid = crate::task::pid_of(sched::current_process()) as u32;
            if group.sid() != pid {
                return -errno::EPERM;
            }
            set_controlling(pid);
            0
        }
        TIOCNOTTY => match controlled() {
            Some((sid, _)) => {
                let pid = crate::task::pid_of(sched::current_process()) as u32;
                if sid == pid {
                    set_controlling(0);
                }
                0
            }
            None => -errno::ENOTTY,
        },
        _ => -errno::ENOTTY,
    }
}

/// TIOCSPGRP (`tcsetpgrp`): the process group at `arg` becomes the foreground one. ENOTTY
/// if the console is not the caller's controlling terminal, EINVAL for a negative group,
/// EPERM for one that is not in the caller's session.
fn set_foreground(space: &crate::user::address_space::AddressSpace, arg: u64) -> i64 {
    let Some((sid, _)) = controlled() else {
        return -errno::ENOTTY;
    };
    let mut raw = [0u8; 4];
    if space.read(arg, &mut raw).is_err() {
        return -errno::EFAULT;
    }
    let pgid = i32::from_le_bytes(raw);
    if pgid < 0 {
        return -errno::EINVAL;
    }
    if !groups::group_in_session(pgid as u32, sid) {
        return -errno::EPERM;
    }
    if let Err(e) = may_change() {
        return e;
    }
    with(|t| t.foreground = pgid as u32);
    0
}
