//! Locks whose rules are in their types (as asterinas's `SpinLock<T, LocalIrqDisabled>`):
//! a [`SpinLock`] turns interrupts off while it is held, so an interrupt handler that takes
//! the same lock can never spin on its own CPU's holder; and it has a [`Rank`], so that a
//! build panics when two locks are taken in the wrong order (see [`lock_order`]). A
//! [`KeyedLock`] is one of several locks of a rank that may be held together, in the order
//! of their keys (the runqueues', by CPU).

pub mod cross_call;
mod keyed_lock;
pub mod lock_order;
pub mod lock_stat;
mod spin_lock;

pub use keyed_lock::{KeyedGuard, KeyedLock};
pub use lock_order::Rank;
pub use spin_lock::{SpinLock, SpinLockGuard};
