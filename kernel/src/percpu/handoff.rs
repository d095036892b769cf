//! What a switch leaves for the task that runs next on the same CPU (Linux's
//! `finish_task_switch`): the work on the task just replaced that cannot be done before its
//! registers are saved, and so falls to the next task, in `sched::switch::finish_switch`.
//! One typed value, handed over in the CPU's own state with interrupts off from the switch
//! to that function; kept there as two words, each one GS-relative instruction
//! (`ThisCpu::hand_off_*` and `ThisCpu::take_handoff` write and take them).

use super::{HANDOFF_EXITED, HANDOFF_LEAVING, NO_SLOT, ThisCpu};
use crate::arch::cpu_local;
use crate::task::Slot;
use core::ptr::NonNull;
use core::sync::atomic::AtomicBool;

/// The slot a word names, if any.
fn slot_of(word: u64) -> Option<Slot> {
    (word as usize != NO_SLOT).then_some(Slot::new(word as usize))
}

/// What the next task on this CPU finishes for the task it replaced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Handoff {
    /// The replaced task's `on_cpu` flag, cleared once its registers are saved: only then
    /// may another CPU run it (Linux's `finish_task`; a wake-up or a move elsewhere waits
    /// on the flag, as `try_to_wake_up` waits on `p->on_cpu`). `None` at a CPU's first
    /// switch, which replaces no task's saved state.
    pub leaving: Option<NonNull<AtomicBool>>,
    /// The replaced task exited: the next task frees its stack, all it still holds (its
    /// files and memory went in its own context).
    pub exited: Option<Slot>,
}

/// The hand-off of a switch to the next task on this CPU ([`Handoff`]).
impl ThisCpu {
    /// The switch away from the task whose `on_cpu` flag is `flag` is under way.
    #[inline(always)]
    pub fn hand_off_leaving(&self, flag: NonNull<AtomicBool>) {
        cpu_local::write::<HANDOFF_LEAVING>(flag.as_ptr() as u64);
    }

    /// The task in `slot` switches away for the last time.
    #[inline(always)]
    pub fn hand_off_exited(&self, slot: Slot) {
        cpu_local::write::<HANDOFF_EXITED>(slot.index() as u64);
    }

    /// What the switch that ran this task left to finish, taken: the next switch starts
    /// from nothing. The common case — no task exited — costs two reads and one write.
    #[inline(always)]
    pub fn take_handoff(&self) -> Handoff {
        let leaving = NonNull::new(cpu_local::read::<HANDOFF_LEAVING>() as *mut AtomicBool);
        if leaving.is_some() {
            cpu_local::write::<HANDOFF_LEAVING>(0);
        }
        let exited = slot_of(cpu_local::read::<HANDOFF_EXITED>());
        if exited.is_some() {
            cpu_local::write::<HANDOFF_EXITED>(NO_SLOT as u64);
        }
        Handoff { leaving, exited }
    }
}
