//! `futex`: sleeping until a word in user memory changes, the one primitive thread libraries
//! build their locks, condition variables and `pthread_join` on (Linux's kernel/futex/).
//! FUTEX_WAIT sleeps if the word still holds the value the caller saw; FUTEX_WAKE wakes up
//! to N sleepers on the word. The `_BITSET` forms (which musl and glibc use for timed waits)
//! take an absolute deadline and a mask that must overlap. Private and shared futexes are
//! the same here: cfslab has no shared memory, so a word lives in one address space.

use super::{errno, space};
use crate::arch::irq;
use crate::sched;
use crate::sync::{Rank, SpinLock};
use crate::task::TaskId;
use crate::time::clock;
use crate::user::address_space::AddressSpace;
use alloc::vec::Vec;

const FUTEX_WAIT: u64 = 0;
const FUTEX_WAKE: u64 = 1;
const FUTEX_WAIT_BITSET: u64 = 9;
const FUTEX_WAKE_BITSET: u64 = 10;
/// The option bits: FUTEX_PRIVATE_FLAG (128) and FUTEX_CLOCK_REALTIME (256, one clock here).
const OPTIONS: u64 = 128 | 256;
const ETIMEDOUT: i64 = 110;
const EINTR: i64 = 4;

/// A task asleep on a futex word: its address space (by pointer), the word's address, the
/// mask it waits with.
struct Waiter {
    space: usize,
    addr: u64,
    bitset: u32,
    task: TaskId,
}

/// Every sleeper, oldest first (FUTEX_WAKE wakes in arrival order, as Linux's plist does for
/// tasks of equal priority).
static WAITERS: SpinLock<Vec<Waiter>> = SpinLock::new(Rank::Futex, Vec::new());

fn key(space: &AddressSpace) -> usize {
    core::ptr::from_ref(space) as usize
}

/// `futex(uaddr, op, val, timeout, uaddr2, val3)`.
pub fn futex(uaddr: u64, op: u64, val: u64, timeout: u64, val3: u64) -> i64 {
    if !uaddr.is_multiple_of(4) {
        return -errno::EINVAL;
    }
    let space = space();
    match op & !OPTIONS {
        FUTEX_WAIT => match read_timeout(timeout) {
            Ok(t) => wait(
                &space,
                uaddr,
                val as u32,
                t.map(|ns| clock::now().saturating_add(ns)),
                !0,
            ),
            Err(e) => e,
        },
        FUTEX_WAIT_BITSET if val3 as u32 == 0 => -errno::EINVAL,
        FUTEX_WAIT_BITSET => match read_timeout(timeout) {
            Ok(deadline) => wait(&space, uaddr, val as u32, deadline, val3 as u32),
            Err(e) => e,
        },
        FUTEX_WAKE => wake(&space, uaddr, val as u32, !0),
        FUTEX_WAKE_BITSET if val3 as u32 == 0 => -errno::EINVAL,
        FUTEX_WAKE_BITSET => wake(&space, uaddr, val as u32, val3 as u32),
        _ => -errno::ENOSYS,
    }
}

/// The timeout's nanoseconds (`None`: none given).
fn read_timeout(timeout: u64) -> Result<Option<u64>, i64> {
    if timeout == 0 {
        return Ok(None);
    }
    super::info::read_timespec(timeout).map(Some)
}

/// Sleeps if the word at `addr` holds `expected`, until a wake names it or `deadline`.
fn wait(space: &AddressSpace, addr: u64, expected: u32, deadline: Option<u64>, bitset: u32) -> i64 {
    let me = sched::current();
    let slept = irq::without(|| {
        // Checked and queued with interrupts off: a waker (another thread, on this one CPU)
        // cannot change the word and wake between the two, so no wake-up is lost.
        let mut word = [0u8; 4];
        if space.read(addr, &mut word).is_err() {
            return Err(-errno::EFAULT);
        }
        if u32::from_le_bytes(word) != expected {
            return Err(-errno::EAGAIN);
        }
        WAITERS.lock().push(Waiter {
            space: key(space),
            addr,
            bitset,
            task: me,
        });
        sched::sleep_until_woken(deadline, crate::time::TIMER_SLACK_NS);
        Ok(())
    });
    if let Err(e) = slept {
        return e;
    }
    // Still queued: no FUTEX_WAKE came; the deadline passed, or a kill woke the task.
    let still_queued = {
        let mut waiters = WAITERS.lock();
        let before = waiters.len();
        waiters.retain(|w| w.task != me);
        waiters.len() != before
    };
    match still_queued {
        false => 0,
        true if deadline.is_some_and(|d| clock::now() >= d) => -ETIMEDOUT,
        true => -EINTR,
    }
}

/// Wakes up to `count` sleepers on the word at `addr` whose mask overlaps `bitset`; returns
/// how many woke.
fn wake(space: &AddressSpace, addr: u64, count: u32, bitset: u32) -> i64 {
    let key = key(space);
    irq::without(|| {
        let mut woken = Vec::new();
        {
            let mut waiters = WAITERS.lock();
            let mut i = 0;
            while i < waiters.len() && woken.len() < count as usize {
                let w = &waiters[i];
                if w.space == key && w.addr == addr && w.bitset & bitset != 0 {
                    woken.push(waiters.remove(i).task);
                } else {
                    i += 1;
                }
            }
        }
        for &task in &woken {
            sched::wake_task(task);
        }
        woken.len() as i64
    })
}

/// Wakes one sleeper on the word at `addr` (a thread's exit, CLONE_CHILD_CLEARTID).
pub fn futex_wake(space: &AddressSpace, addr: u64, count: u32) {
    wake(space, addr, count, !0);
}
