//! Waiting on several files at once, with a timeout: `poll`, `select` and `pselect6`
//! (Linux's fs/select.c), over the console and pipes. Seed 002's lat3 sleeps with
//! `select(0, NULL, NULL, NULL, &tv)`: no file at all, only the timeout.
//!
//! The caller checks every file with interrupts off; if none is ready it puts itself on
//! each file's wait queue and sleeps until one of them, the timeout or a signal wakes it,
//! then takes itself off them all and checks again. A signal with nothing ready restarts
//! the call, or ends it with EINTR if a handler runs. pselect6's signal mask (its sixth
//! argument) replaces the thread's mask while it waits, atomically, as `rt_sigsuspend`'s
//! does: a signal it unblocks ends the wait, and its handler runs with that mask, the old
//! one coming back after it (Linux's `set_user_sigmask` and
//! `restore_saved_sigmask_unless`).

use super::{errno, space};
use crate::arch::irq;
use crate::sched::{self, WaitQueue};
use crate::time::clock;
use crate::user::files::{File, MAX_FDS, Readiness};
use alloc::sync::Arc;
use alloc::vec::Vec;

/// The open file at `fd` (`None` if it is not open).
fn open_file(fd: i64) -> Option<Arc<File>> {
    let files = sched::current_files()?;
    files.lock().get(fd)
}

/// Whether a read or a write of `file` would wait now (each kind of file's `poll`). The
/// console's writes go straight out; a read waits for a line typed (`user::tty`).
/// Generated text is always there to read, and a knob always takes a write.
fn readiness(file: &File) -> Readiness {
    match file {
        File::Console => Readiness {
            readable: crate::user::tty::readable(),
            writable: true,
            ..Readiness::default()
        },
        File::Node(_) => Readiness {
            readable: true,
            writable: true,
            ..Readiness::default()
        },
        File::Pipe { pipe, write } => pipe.readiness(*write),
    }
}

/// The queue a task waiting for `file`'s readiness to change sleeps on (the console's is
/// its readers': it is always writable).
fn wait_queue(file: &File) -> Option<&WaitQueue> {
    match file {
        File::Console => Some(crate::user::tty::wait_queue()),
        File::Pipe { pipe, write } => Some(pipe.wait_queue(*write)),
        File::Node(_) => None,
    }
}

/// Waits until `done(readiness of each file)` holds, the clock reads `deadline` or the task
/// is killed; returns the files' last readiness (a file that is `None` is never ready).
fn wait_ready(
    files: &[Option<Arc<File>>],
    deadline: Option<u64>,
    done: impl Fn(&[Readiness]) -> bool,
) -> Vec<Readiness> {
    let me = sched::current();
    let queues = || files.iter().flatten().filter_map(|f| wait_queue(f));
    let slack = deadline.map_or(0, |d| {
        crate::time::poll_slack(d.saturating_sub(clock::now()))
    });
    loop {
        let result = irq::without(|| {
            // On the queues before the look: a file made ready on another CPU after it
            // still finds this task to wake (see `WaitQueue`).
            queues().for_each(|q| q.add_current());
            let ready: Vec<Readiness> = files
                .iter()
                .map(|f| f.as_ref().map(|f| readiness(f)).unwrap_or_default())
                .collect();
            let expired = deadline.is_some_and(|d| clock::now() >= d);
            if done(&ready) || expired || sched::signal_pending() {
                return Some(ready);
            }
            sched::sleep_until_woken(deadline, slack);
            None
        });
        queues().for_each(|q| q.remove(me));
        if let Some(ready) = result {
            return ready;
        }
    }
}

/// Whether a wait that found nothing ready ended for a signal rather than its timeout: the
/// call is then restarted, or fails with EINTR if a handler runs (`user::signal`).
fn interrupted(deadline: Option<u64>) -> bool {
    !deadline.is_some_and(|d| clock::now() >= d) && sched::signal_pending()
}

/// Reads a `{seconds, fraction}` pair (timeval: microseconds, timespec: nanoseconds) as a
/// deadline; `None` for a null pointer (wait for ever).
fn read_deadline(ptr: u64, units_per_second: u64) -> Result<Option<u64>, i64> {
    if ptr == 0 {
        return Ok(None);
    }
    let mut raw = [0u8; 16];
    space().read(ptr, &mut raw).map_err(|_| -errno::EFAULT)?;
    let sec = i64::from_le_bytes(raw[..8].try_into().unwrap_or_default());
    let frac = i64::from_le_bytes(raw[8..].try_into().unwrap_or_default());
    if sec < 0 || frac < 0 || frac as u64 >= units_per_second {
        return Err(-errno::EINVAL);
    }
    let ns = (sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(frac as u64 * (1_000_000_000 / units_per_second));
    Ok(Some(clock::now().saturating_add(ns)))
}

/// Writes back the time left until `deadline`, as Linux's select does.
fn write_remaining(ptr: u64, deadline: u64, units_per_second: u64) -> Result<(), i64> {
    let left = deadline.saturating_sub(clock::now());
    let mut raw = [0u8; 16];
    raw[..8].copy_from_slice(&(left / 1_000_000_000).to_le_bytes());
    let frac = left % 1_000_000_000 / (1_000_000_000 / units_per_second);
    raw[8..].copy_from_slice(&frac.to_le_bytes());
    space().write(ptr, &raw).map_err(|_| -errno::EFAULT)
}

const POLLIN: u16 = 0x1;
const POLLOUT: u16 = 0x4;
const POLLERR: u16 = 0x8;
const POLLHUP: u16 = 0x10;
const POLLNVAL: u16 = 0x20;
const POLLRDNORM: u16 = 0x40;
const POLLWRNORM: u16 = 0x100;

/// The `revents` of one `struct pollfd`: what was asked for and is true, plus the
/// conditions always reported (POLLERR, POLLHUP, POLLNVAL).
fn revents(fd: i32, events: u16, file: Option<&Arc<File>>, ready: Readiness) -> u16 {
    if fd < 0 {
        return 0;
    }
    if file.is_none() {
        return POLLNVAL;
    }
    let mut out = 0;
    if ready.readable {
        out |= events & (POLLIN | POLLRDNORM);
    }
    if ready.writable {
        out |= events & (POLLOUT | POLLWRNORM);
    }
    if ready.hangup {
        out |= POLLHUP;
    }
    if ready.error {
        out |= POLLERR;
    }
    out
}

/// `poll(fds, nfds, timeout_ms)`: a negative timeout waits for ever.
pub fn poll(fds: u64, nfds: u64, timeout_ms: u64) -> i64 {
    if nfds > MAX_FDS as u64 {
        return -errno::EINVAL;
    }
    let mut raw = alloc::vec![0u8; nfds as usize * 8];
    if space().read(fds, &mut raw).is_err() {
        return -errno::EFAULT;
    }
    // struct pollfd { int fd; short events; short revents; }
    let entries: Vec<(i32, u16)> = raw
        .as_chunks::<8>()
        .0
        .iter()
        .map(|e| {
            let fd = i32::from_le_bytes([e[0], e[1], e[2], e[3]]);
            (fd, u16::from_le_bytes([e[4], e[5]]))
        })
        .collect();
    let files: Vec<Option<Arc<File>>> = entries
        .iter()
        .map(|&(fd, _)| (fd >= 0).then(|| open_file(i64::from(fd))).flatten())
        .collect();
    let timeout_ms = timeout_ms as i32;
    let deadline =
        (timeout_ms >= 0).then(|| clock::now().saturating_add(timeout_ms as u64 * 1_000_000));
    let all_revents = |ready: &[Readiness]| -> Vec<u16> {
        entries
            .iter()
            .zip(&files)
            .zip(ready)
            .map(|((&(fd, events), file), &r)| revents(fd, events, file.as_ref(), r))
            .collect()
    };
    let ready = wait_ready(&files, deadline, |r| all_revents(r).iter().any(|&e| e != 0));
    let out = all_revents(&ready);
    if out.iter().all(|&e| e == 0) && interrupted(deadline) {
        return -errno::ERESTARTNOHAND;
    }
    for (entry, revents) in raw.as_chunks_mut::<8>().0.iter_mut().zip(&out) {
        entry[6..8].copy_from_slice(&revents.to_le_bytes());
    }
    if space().write(fds, &raw).is_err() {
        return -errno::EFAULT;
    }
    out.iter().filter(|&&e| e != 0).count() as i64
}

/// `select(nfds, readfds, writefds, exceptfds, timeval)`.
pub fn select(nfds: u64, read: u64, write: u64, except: u64, timeout: u64) -> i64 {
    select_common(nfds, [read, write, except], timeout, 1_000_000)
}

/// `pselect6(nfds, readfds, writefds, exceptfds, timespec, sigmask)`: select with a
/// timespec and, if `sigmask` points at a `{ const sigset_t *ss; size_t ss_len; }` whose
/// `ss` is not null, that mask while it waits (see the module's docs).
pub fn pselect6(nfds: u64, read: u64, write: u64, except: u64, timeout: u64, sigmask: u64) -> i64 {
    let mask = match read_sigmask_argument(sigmask) {
        Ok(mask) => mask,
        Err(e) => return e,
    };
    if let Some(mask) = mask {
        sched::suspend_mask(mask & !crate::sched::proc::sighand::UNBLOCKABLE);
    }
    let result = select_common(nfds, [read, write, except], timeout, 1_000_000_000);
    // Interrupted: the mask stays until the handler has run (the way back to ring 3 puts
    // it back). Otherwise it comes back now.
    if mask.is_some() && result != -errno::ERESTARTNOHAND {
        sched::with_thread_signals(|blocked, saved, _| {
            if let Some(old) = saved.take() {
                *blocked = old;
            }
        });
    }
    result
}

/// pselect6's sixth argument: the mask it points at, if any. EFAULT for a bad pointer,
/// EINVAL for a size other than a `sigset_t`'s 8 bytes.
fn read_sigmask_argument(argument: u64) -> Result<Option<u64>, i64> {
    if argument == 0 {
        return Ok(None);
    }
    let mut raw = [0u8; 16];
    space()
        .read(argument, &mut raw)
        .map_err(|_| -errno::EFAULT)?;
    let word = |at: usize| u64::from_le_bytes(raw[at..at + 8].try_into().unwrap_or_default());
    let (set, size) = (word(0), word(8));
    if set == 0 {
        return Ok(None);
    }
    if size != 8 {
        return Err(-errno::EINVAL);
    }
    let mut mask = [0u8; 8];
    space().read(set, &mut mask).map_err(|_| -errno::EFAULT)?;
    Ok(Some(u64::from_le_bytes(mask)))
}

/// Reads an `fd_set` of `n` bits (`None` for a null pointer).
fn read_set(ptr: u64, n: usize) -> Result<Option<Vec<u64>>, i64> {
    if ptr == 0 {
        return Ok(None);
    }
    let mut raw = alloc::vec![0u8; n.div_ceil(64) * 8];
    space().read(ptr, &mut raw).map_err(|_| -errno::EFAULT)?;
    let mut words: Vec<u64> = raw
        .as_chunks::<8>()
        .0
        .iter()
        .map(|w| u64::from_le_bytes(*w))
        .collect();
    if !n.is_multiple_of(64)
        && let Some(last) = words.last_mut()
    {
        *last &= (1 << (n % 64)) - 1;
    }
    Ok(Some(words))
}

fn select_common(nfds: u64, sets: [u64; 3], timeout: u64, units_per_second: u64) -> i64 {
    let Ok(n) = i32::try_from(nfds as u32 as i64) else {
        return -errno::EINVAL;
    };
    if n < 0 {
        return -errno::EINVAL;
    }
    // Linux trims nfds to the size of the descriptor table.
    let n = (n as usize).min(MAX_FDS);
    let mut asked = [None, None, None];
    for (i, &ptr) in sets.iter().enumerate() {
        match read_set(ptr, n) {
            Ok(set) => asked[i] = set,
            Err(e) => return e,
        }
    }
    let deadline = match read_deadline(timeout, units_per_second) {
        Ok(d) => d,
        Err(e) => return e,
    };
    let bit = |set: &Option<Vec<u64>>, fd: usize| {
        set.as_ref()
            .is_some_and(|w| w[fd / 64] >> (fd % 64) & 1 == 1)
    };
    let wanted: Vec<usize> = (0..n)
        .filter(|&fd| asked.iter().any(|s| bit(s, fd)))
        .collect();
    let mut files = Vec::with_capacity(wanted.len());
    for &fd in &wanted {
        match open_file(fd as i64) {
            Some(f) => files.push(Some(f)),
            None => return -errno::EBADF,
        }
    }
    // Which of the wanted files are ready for what was asked: (read, write) per file. As
    // Linux's POLLIN_SET and POLLOUT_SET: a hang-up or an error counts as readable (a read
    // returns at once), an error as writable (a write fails at once). No file here has
    // exceptional conditions.
    let answer = |ready: &[Readiness]| -> Vec<(bool, bool)> {
        wanted
            .iter()
            .zip(ready)
            .map(|(&fd, r)| {
                (
                    r.readable && bit(&asked[0], fd),
                    r.writable && bit(&asked[1], fd),
                )
            })
            .collect()
    };
    let ready = wait_ready(&files, deadline, |r| answer(r).iter().any(|&(r, w)| r || w));
    let answer = answer(&ready);
    if answer.iter().all(|&(r, w)| !r && !w) && interrupted(deadline) {
        return -errno::ERESTARTNOHAND;
    }
    let mut out = [
        alloc::vec![0u64; n.div_ceil(64)],
        alloc::vec![0u64; n.div_ceil(64)],
    ];
    let mut count = 0;
    for (&fd, &(r, w)) in wanted.iter().zip(&answer) {
        for (set, yes) in out.iter_mut().zip([r, w]) {
            if yes {
                set[fd / 64] |= 1 << (fd % 64);
                count += 1;
            }
        }
    }
    let empty = alloc::vec![0u64; n.div_ceil(64)];
    for (i, &ptr) in sets.iter().enumerate() {
        let words = out.get(i).unwrap_or(&empty);
        if ptr != 0 {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            if space().write(ptr, &bytes).is_err() {
                return -errno::EFAULT;
            }
        }
    }
    if let Some(deadline) = deadline
        && let Err(e) = write_remaining(timeout, deadline, units_per_second)
    {
        return e;
    }
    count
}
