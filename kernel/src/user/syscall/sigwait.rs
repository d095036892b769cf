//! The calls that wait for a signal, and the alternate stack handlers run on:
//! `rt_sigsuspend`, `pause`, `rt_sigtimedwait` and `sigaltstack` (Linux's
//! `kernel/signal.c`). `rt_sigreturn` is `user::signal`'s, as it rewrites the registers.

use super::{errno, space};
use crate::arch::irq;
use crate::sched;
use crate::sched::proc::sighand::UNBLOCKABLE;
use crate::time::clock;
use crate::user::signal::altstack::StackT;
use crate::user::signal::frame::siginfo_bytes;

/// Sleeps until the running thread has a signal to take or the clock reads `deadline`. The
/// check and the sleep are one step with interrupts off, so a signal sent between them
/// still wakes it.
fn wait_for_signal(deadline: Option<u64>) {
    loop {
        let done = irq::without(|| {
            if sched::signal_pending() || deadline.is_some_and(|d| clock::now() >= d) {
                return true;
            }
            sched::sleep_until_woken(deadline, crate::time::TIMER_SLACK_NS);
            false
        });
        if done {
            return;
        }
    }
}

/// Reads a `sigset_t` of `size` bytes (8, as Linux's x86_64 takes).
fn read_sigset(addr: u64, size: u64) -> Result<u64, i64> {
    if size != 8 {
        return Err(-errno::EINVAL);
    }
    let mut raw = [0u8; 8];
    space().read(addr, &mut raw).map_err(|_| -errno::EFAULT)?;
    Ok(u64::from_le_bytes(raw))
}

/// `rt_sigsuspend(mask, sigsetsize)`: waits with `mask` in place of the thread's mask until
/// a signal's handler runs (the old mask comes back after it) or one ends the process.
/// Always "fails" with EINTR.
pub fn rt_sigsuspend(mask: u64, sigsetsize: u64) -> i64 {
    let mask = match read_sigset(mask, sigsetsize) {
        Ok(m) => m,
        Err(e) => return e,
    };
    sched::suspend_mask(mask & !UNBLOCKABLE);
    wait_for_signal(None);
    -errno::ERESTARTNOHAND
}

/// `pause()`: waits until a signal's handler runs or one ends the process (EINTR).
pub fn pause() -> i64 {
    wait_for_signal(None);
    -errno::ERESTARTNOHAND
}

/// `rt_sigtimedwait(set, info, timeout, sigsetsize)`: takes a signal of `set` that is
/// pending, waiting for one up to `timeout` (a timespec; null: for ever). Returns its number
/// and fills `info`; EAGAIN when the time is up; EINTR if another signal's handler is to run.
pub fn rt_sigtimedwait(set: u64, info: u64, timeout: u64, sigsetsize: u64) -> i64 {
    let set = match read_sigset(set, sigsetsize) {
        Ok(s) => s & !UNBLOCKABLE,
        Err(e) => return e,
    };
    let deadline = if timeout == 0 {
        None
    } else {
        match super::info::read_timespec(timeout) {
            Ok(ns) => Some(clock::now().saturating_add(ns)),
            Err(e) => return e,
        }
    };
    let group = sched::current_group().expect("a process");
    // The set's signals wake this thread while it waits, blocked or not.
    sched::set_waiting_for(set);
    let taken = loop {
        if let Some(taken) = group.sighand.take_one(set, sched::current()) {
            break Some(taken);
        }
        if sched::signal_pending() || deadline.is_some_and(|d| clock::now() >= d) {
            break None;
        }
        wait_for_signal(deadline);
    };
    sched::set_waiting_for(0);
    let Some((signal, siginfo, _)) = taken else {
        return if sched::signal_pending() {
            -errno::EINTR
        } else {
            -errno::EAGAIN
        };
    };
    if info != 0
        && space()
            .write(info, &siginfo_bytes(signal, &siginfo))
            .is_err()
    {
        return -errno::EFAULT;
    }
    i64::from(signal)
}

/// `sigaltstack(ss, old_ss)`: reads back the alternate stack (`stack_t`: sp, flags, size)
/// and sets a new one (`user::signal::set_altstack` has the rules).
pub fn sigaltstack(ss: u64, old_ss: u64, user_sp: u64) -> i64 {
    let mut new = None;
    if ss != 0 {
        let mut raw = [0u8; 24];
        if space().read(ss, &mut raw).is_err() {
            return -errno::EFAULT;
        }
        let word = |i: usize| u64::from_le_bytes(raw[i..i + 8].try_into().unwrap_or_default());
        new = Some(StackT {
            sp: word(0),
            flags: word(8) as i32,
            size: word(16),
        });
    }
    let (old, set) = crate::user::signal::set_altstack(new, user_sp);
    if old_ss != 0 {
        let mut raw = [0u8; 24];
        raw[0..8].copy_from_slice(&old.sp.to_le_bytes());
        raw[8..12].copy_from_slice(&old.flags.to_le_bytes());
        raw[16..24].copy_from_slice(&old.size.to_le_bytes());
        if space().write(old_ss, &raw).is_err() {
            return -errno::EFAULT;
        }
    }
    set.map_or_else(|e| e, |()| 0)
}
