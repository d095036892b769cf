//! Futexes: sleeping until a word in user memory changes, the one primitive thread
//! libraries build their locks, condition variables and `pthread_join` on (Linux's
//! `kernel/futex/`) — a wait queue keyed by a user address. Private and shared futexes are
//! the same here: cfslab has no shared memory, so a word lives in one address space. The
//! `futex` call itself is `user::syscall::futex`'s; a thread's exit wakes its joiner here
//! too (`proc::exit`).

use crate::arch::irq;
use crate::sched;
use crate::sync::{Rank, SpinLock};
use crate::task::TaskRef;
use crate::time::clock;
use crate::user::address_space::AddressSpace;
use crate::user::errno;
use alloc::vec::Vec;

/// A task asleep on a futex word: its address space (by pointer), the word's address, the
/// mask it waits with.
struct Waiter {
    space: usize,
    addr: u64,
    bitset: u32,
    task: TaskRef,
}

/// Every sleeper, oldest first (FUTEX_WAKE wakes in arrival order, as Linux's plist does for
/// tasks of equal priority).
static WAITERS: SpinLock<Vec<Waiter>> = SpinLock::new(Rank::Futex, Vec::new());

fn key(space: &AddressSpace) -> usize {
    core::ptr::from_ref(space) as usize
}

/// Sleeps if the word at `addr` holds `expected`, until a wake names it or `deadline`.
pub fn wait(
    space: &AddressSpace,
    addr: u64,
    expected: u32,
    deadline: Option<u64>,
    bitset: u32,
) -> i64 {
    let me = sched::current_ref();
    let slept = irq::without(|| {
        // The word is read and the waiter queued under the waiters' lock (Linux's hash
        // bucket lock): a waker changes the word first and takes the lock after, so either
        // this read sees the new value, or the waker finds this waiter queued. A wake-up
        // that comes after the queueing and before the sleep is not lost either: the sleep
        // then returns at once (`sched::sleep`).
        let mut waiters = WAITERS.lock();
        let mut word = [0u8; 4];
        if space.read(addr, &mut word).is_err() {
            return Err(-errno::EFAULT);
        }
        if u32::from_le_bytes(word) != expected {
            return Err(-errno::EAGAIN);
        }
        if sched::signal_pending() {
            return Err(-errno::ERESTARTSYS);
        }
        waiters.push(Waiter {
            space: key(space),
            addr,
            bitset,
            task: me,
        });
        drop(waiters);
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
        waiters.retain(|w| w.task.id != me.id);
        waiters.len() != before
    };
    // Still queued and not timed out: a signal (restart, or EINTR after a handler), or a
    // spurious wake-up, which a futex's caller must expect anyway (0).
    match still_queued {
        false => 0,
        true if deadline.is_some_and(|d| clock::now() >= d) => -errno::ETIMEDOUT,
        true if sched::signal_pending() => -errno::ERESTARTSYS,
        true => 0,
    }
}

/// Wakes up to `count` sleepers on the word at `addr` whose mask overlaps `bitset` (all
/// bits: any); returns how many woke.
pub fn wake(space: &AddressSpace, addr: u64, count: u32, bitset: u32) -> i64 {
    let key = key(space);
    irq::without(|| {
        // The sleepers are taken off under the lock and woken after it, all at once
        // (Linux's `wake_q`). A few — nearly always one — go on the stack: a heap round
        // trip would cost a futex ping-pong a good share of its wake-up.
        const FEW: usize = 4;
        let (mut few, mut more) = ([TaskRef::UNUSED; FEW], Vec::new());
        let mut n = 0;
        {
            let mut waiters = WAITERS.lock();
            let mut i = 0;
            while i < waiters.len() && n < count as usize {
                let w = &waiters[i];
                if w.space == key && w.addr == addr && w.bitset & bitset != 0 {
                    let task = waiters.remove(i).task;
                    match few.get_mut(n) {
                        Some(place) => *place = task,
                        None => more.push(task),
                    }
                    n += 1;
                } else {
                    i += 1;
                }
            }
        }
        sched::wake_tasks(&few[..n.min(FEW)]);
        if !more.is_empty() {
            sched::wake_tasks(&more);
        }
        n as i64
    })
}

/// A robust futex word's bits (Linux's include/uapi/linux/futex.h): a waiter sleeps on it,
/// its owner died, and the owner's tid.
const FUTEX_WAITERS: u32 = 0x8000_0000;
const FUTEX_OWNER_DIED: u32 = 0x4000_0000;
const FUTEX_TID_MASK: u32 = 0x3fff_ffff;
/// Linux walks at most this many entries (ROBUST_LIST_LIMIT), so a list made circular by
/// a bug cannot hold the exit for ever.
const ROBUST_LIST_LIMIT: usize = 2048;

/// The running thread ends holding the locks on its robust list at `head` (a `struct
/// robust_list_head`: the first entry, the offset from an entry to its futex word, and an
/// entry being added or removed): each word it owns gets FUTEX_OWNER_DIED and one waiter
/// is woken to take it (Linux's `exit_robust_list`). A list it cannot read ends the walk.
pub fn release_robust_list(head: u64) {
    if head == 0 {
        return;
    }
    let Some(space) = sched::current_address_space() else {
        return;
    };
    let word = |addr: u64| {
        let mut raw = [0u8; 8];
        space
            .read(addr, &mut raw)
            .ok()
            .map(|_| u64::from_le_bytes(raw))
    };
    let (Some(mut entry), Some(offset), Some(pending)) =
        (word(head), word(head + 8), word(head + 16))
    else {
        return;
    };
    let tid = crate::task::pid_of(sched::current()) as u32;
    let mut seen = 0;
    while entry != head && entry != 0 && seen < ROBUST_LIST_LIMIT {
        let next = word(entry);
        if entry != pending {
            owner_died(&space, entry.wrapping_add(offset), tid);
        }
        let Some(next) = next else {
            break;
        };
        entry = next;
        seen += 1;
    }
    if pending != 0 {
        owner_died(&space, pending.wrapping_add(offset), tid);
    }
}

/// Marks the futex word at `addr` as its owner `tid` died, if `tid` holds it, and wakes a
/// waiter. Read and written with interrupts off: on one CPU no other thread runs between.
fn owner_died(space: &AddressSpace, addr: u64, tid: u32) {
    let woke = irq::without(|| {
        let mut raw = [0u8; 4];
        space.read(addr, &mut raw).ok()?;
        let value = u32::from_le_bytes(raw);
        if value & FUTEX_TID_MASK != tid {
            return None;
        }
        let died = (value & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
        space.write(addr, &died.to_le_bytes()).ok()?;
        Some(value & FUTEX_WAITERS != 0)
    });
    if woke == Some(true) {
        wake(space, addr, 1, !0);
    }
}
