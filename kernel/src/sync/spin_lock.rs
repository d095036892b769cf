//! A spin lock that keeps interrupts off while held and counts itself on the CPU (xv6's
//! `acquire`/`release`, with asterinas's "interrupts off while held" in the type).
//!
//! The lock is one atomic flag: taking it is one `lock cmpxchg` when it is free, and only a
//! CPU that finds it taken leaves the inlined path for [`SpinLock::wait`], which serves
//! cross-CPU calls while it spins and counts the wait.

use super::Rank;
use crate::arch::irq;
use crate::percpu::this_cpu;
use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{
    AtomicBool,
    Ordering::{Acquire, Relaxed, Release},
};

/// A spin lock around a `T`, IRQ-safe by construction: [`SpinLock::lock`] turns interrupts
/// off before spinning and the guard turns them back on (if they were) after releasing.
pub struct SpinLock<T> {
    locked: AtomicBool,
    rank: Rank,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a guard, and one guard exists at a time (the
// flag is taken with Acquire and released with Release), so a `T` that may move between
// CPUs may be shared behind the lock.
unsafe impl<T: Send> Sync for SpinLock<T> {}
// SAFETY: the lock owns its `T`; moving the lock moves the `T`.
unsafe impl<T: Send> Send for SpinLock<T> {}

/// Access to a [`SpinLock`]'s value; interrupts are off while it lives. Neither `Send` nor
/// `Sync` (the raw pointer's marker): it stands for this CPU's holding of the lock (its
/// preemption count, its interrupts off), which cannot go to another thread, and it lends
/// the `T` to one thread alone.
pub struct SpinLockGuard<'a, T> {
    lock: &'a SpinLock<T>,
    irq_were_on: bool,
    _this_cpu: PhantomData<*const ()>,
}

impl<T> SpinLock<T> {
    /// A lock of `rank` around `value`.
    pub const fn new(rank: Rank, value: T) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            rank,
            value: UnsafeCell::new(value),
        }
    }

    /// Sets the flag if it was clear: whether this call took the lock.
    #[inline(always)]
    pub(super) fn try_acquire(&self) -> bool {
        self.locked
            .compare_exchange(false, true, Acquire, Relaxed)
            .is_ok()
    }

    /// Clears the flag: the stores made under the lock are seen by its next holder.
    #[inline(always)]
    pub(super) fn release(&self) {
        self.locked.store(false, Release);
    }

    /// Takes the lock, with interrupts off until the guard is dropped.
    #[inline(always)]
    pub fn lock(&self) -> SpinLockGuard<'_, T> {
        let irq_were_on = irq::save_and_disable();
        this_cpu().lock_taken(self.rank as u32);
        if !self.try_acquire() {
            self.wait();
        }
        SpinLockGuard {
            lock: self,
            irq_were_on,
            _this_cpu: PhantomData,
        }
    }

    /// Spins until the lock is free, serving this CPU's cross-CPU calls meanwhile (a CPU
    /// that holds it may be waiting for one: a TLB shootdown), and counts the wait
    /// and the cycles it took ([`super::lock_stat`]).
    #[cold]
    #[inline(never)]
    pub(super) fn wait(&self) {
        let started = crate::arch::tsc::read();
        let mut spins = 0;
        loop {
            // Read before trying: a CPU that spins on a plain load leaves the line shared
            // instead of pulling it back and forth with `cmpxchg` (test-and-test-and-set).
            if !self.locked.load(Relaxed) && self.try_acquire() {
                break;
            }
            super::cross_call::serve();
            spins += 1;
            core::hint::spin_loop();
        }
        let cycles = crate::arch::tsc::read().wrapping_sub(started);
        super::lock_stat::record(self.rank, spins, cycles);
    }

    /// Takes the lock if it is free (a fault report, which may come while it is held). A
    /// try never waits, so it cannot close a cycle of waits: it is not held to the order.
    /// It fails while a lock of its rank is held, so that the held ranks still count the
    /// locks held.
    pub fn try_lock(&self) -> Option<SpinLockGuard<'_, T>> {
        let irq_were_on = irq::save_and_disable();
        if !this_cpu().holds_rank(self.rank as u32) && self.try_acquire() {
            this_cpu().lock_tried(self.rank as u32);
            Some(SpinLockGuard {
                lock: self,
                irq_were_on,
                _this_cpu: PhantomData,
            })
        } else {
            irq::restore(irq_were_on);
            None
        }
    }

    /// The lock's rank.
    pub(super) fn rank(&self) -> Rank {
        self.rank
    }

    /// The value, without locking: for gdb's helpers, which read it while the machine is
    /// stopped (a pointer into the lock, not a guard).
    pub fn as_mut_ptr(&self) -> *mut T {
        self.value.get()
    }
}

impl<T> SpinLockGuard<'_, T> {
    /// Releases the lock but leaves interrupts off; returns whether they were on when it
    /// was taken, for `irq::restore` once the caller is done (the scheduler releases its
    /// lock this way before it switches).
    #[inline(always)]
    pub fn unlock_keeping_irqs_off(self) -> bool {
        let this = core::mem::ManuallyDrop::new(self);
        this.lock.release();
        this_cpu().lock_released(this.lock.rank as u32);
        this.irq_were_on
    }
}

impl<T> Deref for SpinLockGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard holds the lock, so no other reference to the value exists.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for SpinLockGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard holds the lock and is borrowed mutably, so this is the one
        // reference to the value.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for SpinLockGuard<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        self.lock.release();
        this_cpu().lock_released(self.lock.rank as u32);
        irq::restore(self.irq_were_on);
    }
}
