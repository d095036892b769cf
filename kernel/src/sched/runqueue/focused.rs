//! The runqueues as a newly-idle pass holds them: only those it works on at the moment, the
//! two a pull touches (Linux's `double_lock_balance`; from 3.18 `load_balance` detaches under
//! the busiest runqueue's lock and attaches under its own), or the one whose figures it
//! reads — each CPU's read whole, one at a time, as Linux reads them without their locks.
//!
//! Beside the other lenders, which hold a prefix of the runqueues (`locks::Runqueues`),
//! this is safe for the same reason a wake-up's `lock_three` is: it takes its locks in CPU
//! order too. A holder of the prefix that reaches a runqueue this pass holds waits for the
//! pass to let go of both; a pass that wants one the holder has reached waits for the
//! holder's end. So none sees the other half-way, and a holder that counts the tasks of
//! several runqueues counts each before or after a move, never both.
//!
//! What the pass may find changed between two looks is the price of not holding
//! everything, as in Linux: a CPU's load read a moment ago, or this CPU's domains rebuilt
//! while it let go of them (`sched::smp::runqueues`' `with_domains` then drops the pass's
//! states), or the CPUs online (re-read each time this CPU's runqueue is taken: see
//! `balance::Lent`).

use super::Runqueue;
use super::locks::{RUNQUEUES, check_held, made};
use core::ops::{Index, IndexMut};

/// The runqueues a pass holds now, by CPU (see the module's docs).
pub(in crate::sched) struct Focused {
    /// The CPUs whose runqueue locks are held, one bit each.
    held: u64,
}

impl Focused {
    /// None held yet. Interrupts must be off, and stay off until this is dropped.
    pub(in crate::sched) fn new() -> Focused {
        assert!(
            !crate::arch::irq::enabled(),
            "runqueues focused on with interrupts on"
        );
        Focused { held: 0 }
    }

    /// How many CPUs have a runqueue.
    pub(in crate::sched) fn len(&self) -> usize {
        made()
    }

    /// Holds the runqueues of `cpus` (one bit each) and no other: those held and not
    /// wanted are let go of, highest CPU first, and the wanted ones taken lowest first —
    /// all let go of first if one wanted comes before one held, so that the order holds.
    /// Returns whether any lock was taken.
    pub(in crate::sched) fn focus(&mut self, cpus: u64) -> bool {
        let keep = self.held & cpus;
        let take = cpus & !keep;
        if take == 0 {
            self.let_go(self.held & !cpus);
            return false;
        }
        // A lock is taken only above every one held (`double_rq_lock`'s order).
        let lowest_taken = take.trailing_zeros();
        let keep = keep & ((1u64 << lowest_taken) - 1);
        self.let_go(self.held & !keep);
        let mut rest = cpus & !keep;
        while rest != 0 {
            let cpu = rest.trailing_zeros() as usize;
            RUNQUEUES[cpu].acquire_held();
            self.held |= 1 << cpu;
            rest &= rest - 1;
        }
        true
    }

    /// Lets go of the runqueues of `cpus` (held ones), highest CPU first.
    fn let_go(&mut self, cpus: u64) {
        let mut rest = cpus & self.held;
        while rest != 0 {
            let cpu = 63 - rest.leading_zeros() as usize;
            RUNQUEUES[cpu].release_held();
            self.held &= !(1 << cpu);
            rest &= !(1 << cpu);
        }
    }

    /// Whether CPU `cpu`'s runqueue is held.
    pub(in crate::sched) fn holds(&self, cpu: usize) -> bool {
        self.held & 1 << cpu != 0
    }
}

impl Drop for Focused {
    fn drop(&mut self) {
        self.let_go(self.held);
    }
}

impl Index<usize> for Focused {
    type Output = Runqueue;

    #[inline(always)]
    fn index(&self, cpu: usize) -> &Runqueue {
        check_held(cpu);
        // SAFETY: this CPU holds the runqueue's lock (checked), so no other CPU touches the
        // value; on this CPU nothing else reaches it while this pass runs (interrupts are
        // off, and taking its lock again would break the key order, which panics). A lock
        // is let go of only through `&mut self`, which no reference handed out outlives.
        unsafe { (*RUNQUEUES[cpu].as_mut_ptr()).as_ref() }.expect("a CPU's runqueue")
    }
}

impl IndexMut<usize> for Focused {
    #[inline(always)]
    fn index_mut(&mut self, cpu: usize) -> &mut Runqueue {
        check_held(cpu);
        // SAFETY: as for `index`, and `self` is borrowed mutably for as long as this lives.
        unsafe { (*RUNQUEUES[cpu].as_mut_ptr()).as_mut() }.expect("a CPU's runqueue")
    }
}
