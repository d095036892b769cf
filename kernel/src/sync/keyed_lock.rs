//! A spin lock of a rank whose locks may be held together, taken in the order of their keys:
//! the runqueues', keyed by CPU number, as Linux's `double_rq_lock` takes two runqueues
//! lowest CPU first (and a pass over every runqueue takes them all so). The lock-order
//! checker treats the keys as ranks within the rank: taking a key at or below one held
//! panics, naming both keys and the CPU, as a rank out of order does.
//!
//! A [`SpinLock`] otherwise: interrupts off while held, the same flag, the same wait.

use super::{Rank, SpinLock};
use crate::arch::irq;
use crate::percpu::this_cpu;
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};

/// A [`SpinLock`] with a key (see the module's docs).
pub struct KeyedLock<T> {
    lock: SpinLock<T>,
    key: u32,
}

/// Access to a [`KeyedLock`]'s value, as a [`super::SpinLockGuard`] is to a `SpinLock`'s.
pub struct KeyedGuard<'a, T> {
    lock: &'a KeyedLock<T>,
    irq_were_on: bool,
    _this_cpu: PhantomData<*const ()>,
}

impl<T> KeyedLock<T> {
    /// A lock of `rank` keyed `key` (below 64) around `value`.
    pub const fn new(rank: Rank, key: u32, value: T) -> Self {
        assert!(key < u64::BITS, "a lock's key is one bit of a word");
        KeyedLock {
            lock: SpinLock::new(rank, value),
            key,
        }
    }

    /// Gives the lock key `key` (below 64): for statics made as an array of one value, each
    /// then keyed by its place.
    pub const fn set_key(&mut self, key: u32) {
        assert!(key < u64::BITS, "a lock's key is one bit of a word");
        self.key = key;
    }

    /// Takes the lock, with interrupts off until the guard is dropped.
    #[inline(always)]
    pub fn lock(&self) -> KeyedGuard<'_, T> {
        let irq_were_on = irq::save_and_disable();
        this_cpu().keyed_lock_taken(self.lock.rank() as u32, self.key);
        if !self.lock.try_acquire() {
            self.lock.wait();
        }
        KeyedGuard {
            lock: self,
            irq_were_on,
            _this_cpu: PhantomData,
        }
    }

    /// Takes the lock of `locks` that `which` names, choosing it once interrupts are off:
    /// for a lock picked by the CPU the caller runs on, which holds still only then (with
    /// interrupts on, the task could be preempted and moved between the choice and the
    /// lock, and take another CPU's).
    #[inline(always)]
    pub fn lock_chosen(locks: &[KeyedLock<T>], which: impl FnOnce() -> usize) -> KeyedGuard<'_, T> {
        let irq_were_on = irq::save_and_disable();
        let lock = &locks[which()];
        this_cpu().keyed_lock_taken(lock.lock.rank() as u32, lock.key);
        if !lock.lock.try_acquire() {
            lock.lock.wait();
        }
        KeyedGuard {
            lock,
            irq_were_on,
            _this_cpu: PhantomData,
        }
    }

    /// Takes the lock with interrupts already off, leaving no guard: for a holder that
    /// takes several and keeps count of them itself (the runqueues' lender, `sched`), and
    /// gives each back with [`KeyedLock::release_held`].
    #[inline(always)]
    pub fn acquire_held(&self) {
        debug_assert!(!irq::enabled(), "a lock without a guard, interrupts on");
        this_cpu().keyed_lock_taken(self.lock.rank() as u32, self.key);
        if !self.lock.try_acquire() {
            self.lock.wait();
        }
    }

    /// Takes the lock with interrupts already off if it is free now, leaving no guard (as
    /// [`KeyedLock::acquire_held`]); returns whether it did. Never waits, so never out of
    /// order; the order is checked all the same.
    #[inline(always)]
    pub fn try_acquire_held(&self) -> bool {
        debug_assert!(!irq::enabled(), "a lock without a guard, interrupts on");
        if !self.lock.try_acquire() {
            return false;
        }
        this_cpu().keyed_lock_taken(self.lock.rank() as u32, self.key);
        true
    }

    /// Releases a lock taken with [`KeyedLock::acquire_held`] or
    /// [`KeyedLock::try_acquire_held`]: this CPU must hold it
    /// (checked in every build: releasing another CPU's lock would let two in).
    #[inline(always)]
    pub fn release_held(&self) {
        let rank = self.lock.rank() as u32;
        assert!(
            this_cpu().holds_key(rank, self.key),
            "released a lock this CPU does not hold"
        );
        self.lock.release();
        this_cpu().keyed_lock_released(rank, self.key);
    }

    /// The lock's key.
    pub fn key(&self) -> u32 {
        self.key
    }

    /// The value, without locking: for gdb's helpers (see [`SpinLock::as_mut_ptr`]).
    pub fn as_mut_ptr(&self) -> *mut T {
        self.lock.as_mut_ptr()
    }
}

impl<T> KeyedGuard<'_, T> {
    /// Releases the lock but leaves interrupts off; returns whether they were on when it
    /// was taken (see [`super::SpinLockGuard::unlock_keeping_irqs_off`]).
    #[inline(always)]
    pub fn unlock_keeping_irqs_off(self) -> bool {
        let this = core::mem::ManuallyDrop::new(self);
        this.release();
        this.irq_were_on
    }

    #[inline(always)]
    fn release(&self) {
        self.lock.lock.release();
        let rank = self.lock.lock.rank() as u32;
        this_cpu().keyed_lock_released(rank, self.lock.key);
    }
}

impl<T> Deref for KeyedGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard holds the lock, so no other reference to the value exists.
        unsafe { &*self.lock.lock.as_mut_ptr() }
    }
}

impl<T> DerefMut for KeyedGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard holds the lock and is borrowed mutably, so this is the one
        // reference to the value.
        unsafe { &mut *self.lock.lock.as_mut_ptr() }
    }
}

impl<T> Drop for KeyedGuard<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        self.release();
        irq::restore(self.irq_were_on);
    }
}
