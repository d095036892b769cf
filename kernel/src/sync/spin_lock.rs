//! A spin lock that keeps interrupts off while held and counts itself on the CPU.

use super::Rank;
use crate::arch::irq;
use crate::percpu::this_cpu;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};

/// A spin lock around a `T`, IRQ-safe by construction: [`SpinLock::lock`] turns interrupts
/// off before spinning and the guard turns them back on (if they were) after releasing.
pub struct SpinLock<T> {
    rank: Rank,
    inner: spin::mutex::SpinMutex<T>,
}

/// Access to a [`SpinLock`]'s value; interrupts are off while it lives.
pub struct SpinLockGuard<'a, T> {
    guard: ManuallyDrop<spin::mutex::SpinMutexGuard<'a, T>>,
    rank: Rank,
    irq_were_on: bool,
}

impl<T> SpinLock<T> {
    /// A lock of `rank` around `value`.
    pub const fn new(rank: Rank, value: T) -> Self {
        SpinLock {
            rank,
            inner: spin::mutex::SpinMutex::new(value),
        }
    }

    /// Takes the lock, with interrupts off until the guard is dropped.
    #[inline(always)]
    pub fn lock(&self) -> SpinLockGuard<'_, T> {
        let irq_were_on = irq::save_and_disable();
        this_cpu().lock_taken(self.rank as u32);
        let guard = match self.inner.try_lock() {
            Some(guard) => guard,
            None => self.wait(),
        };
        SpinLockGuard {
            guard: ManuallyDrop::new(guard),
            rank: self.rank,
            irq_were_on,
        }
    }

    /// Spins until the lock is free, serving this CPU's cross-CPU calls meanwhile (a CPU
    /// that holds it may be waiting for one: a TLB shootdown), and counts the wait
    /// ([`super::lock_stat`]).
    #[cold]
    fn wait(&self) -> spin::mutex::SpinMutexGuard<'_, T> {
        let mut spins = 0;
        let guard = loop {
            if let Some(guard) = self.inner.try_lock() {
                break guard;
            }
            super::cross_call::serve();
            spins += 1;
            core::hint::spin_loop();
        };
        super::lock_stat::record(self.rank, spins);
        guard
    }

    /// Takes the lock if it is free (a fault report, which may come while it is held).
    pub fn try_lock(&self) -> Option<SpinLockGuard<'_, T>> {
        let irq_were_on = irq::save_and_disable();
        match self.inner.try_lock() {
            Some(guard) => {
                this_cpu().lock_taken(self.rank as u32);
                Some(SpinLockGuard {
                    guard: ManuallyDrop::new(guard),
                    rank: self.rank,
                    irq_were_on,
                })
            }
            None => {
                irq::restore(irq_were_on);
                None
            }
        }
    }

    /// The value, without locking: for gdb's helpers, which read it while the machine is
    /// stopped (a pointer into the lock, not a guard).
    pub fn as_mut_ptr(&self) -> *mut T {
        self.inner.as_mut_ptr()
    }
}

impl<T> SpinLockGuard<'_, T> {
    /// Releases the lock but leaves interrupts off; returns whether they were on when it
    /// was taken, for `irq::restore` once the caller is done (the scheduler releases its
    /// lock this way before it switches).
    #[inline(always)]
    pub fn unlock_keeping_irqs_off(self) -> bool {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: the guard is dropped once, here, and `this` is never dropped.
        unsafe { ManuallyDrop::drop(&mut this.guard) };
        this_cpu().lock_released(this.rank as u32);
        this.irq_were_on
    }
}

impl<T> Deref for SpinLockGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> DerefMut for SpinLockGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

impl<T> Drop for SpinLockGuard<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: the guard is dropped once, here, and not used after.
        unsafe { ManuallyDrop::drop(&mut self.guard) };
        this_cpu().lock_released(self.rank as u32);
        irq::restore(self.irq_were_on);
    }
}
