//! Picking the next task and switching to it (Linux's `__schedule`): the current task goes
//! back to the policy, the policy picks the next, the statistics and the trace record the
//! switch, and `schedule` changes stacks, address space and user CPU state.
//!
//! Interrupts are off throughout, asserted at the top of [`schedule`]; the scheduler's lock is
//! taken once, for `pick`, and released before the stacks change (see `sched`'s module docs).

use super::{Scheduler, Slot, State, Task, current, trace, with_sched};
use crate::arch::x86_64::switch::switch_context;
use crate::arch::x86_64::user_state::UserCpuState;
use crate::time::clock;
use core::sync::atomic::{AtomicUsize, Ordering};
use x86_64::instructions::interrupts;

/// What switching to the picked task needs.
struct Switch {
    /// Where to save the current task's stack pointer, and the next one's.
    save: *mut u64,
    load: u64,
    kernel_stack_top: u64,
    /// The next task's level-4 table, if it is a user process.
    address_space: Option<x86_64::structures::paging::PhysFrame>,
    /// Where the previous task's FPU and FS base go, and where the next one's come from
    /// (null for kernel threads, which have none).
    save_cpu: *mut UserCpuState,
    load_cpu: *const UserCpuState,
}

impl Scheduler {
    /// Puts the current task back, picks the next, and returns what switching to it needs
    /// (`None` if the current task keeps the CPU). After a yield the clock is the one the
    /// yield read (Linux's `rq_clock_skip_update`): nothing has run since.
    fn pick(&mut self) -> Option<Switch> {
        let yielded_at = self.yielded_at.take();
        let now = yielded_at.unwrap_or_else(clock::now);
        self.need_resched = false;
        let prev = self.current;
        let prev_is_idle = prev == self.idle;
        if !prev_is_idle {
            self.policy.put_prev(prev, now);
        }
        let prev_state = switch_out(self.task(prev), now, yielded_at.is_some(), prev_is_idle);
        let next = self.policy.pick_next(now).unwrap_or(self.idle);
        self.current = next;
        let n = self.task(next);
        switch_in(n, now);
        current::set(n.id, n.group.as_ref().map_or(n.id, |g| g.leader));
        if next == prev {
            return None;
        }
        n.stats.switches += 1;
        let next_comm = n.comm;
        let (load, kernel_stack_top) = (n.rsp, n.kernel_stack_top);
        let address_space = n.address_space.as_ref().map(|a| a.level_4_frame());
        let load_cpu = n
            .user_cpu
            .as_deref()
            .map_or(core::ptr::null(), |c| c as *const _);
        let p = self.task(prev);
        let prev_comm = p.comm;
        let save_cpu = p
            .user_cpu
            .as_deref_mut()
            .map_or(core::ptr::null_mut(), |c| c as *mut _);
        let save = &raw mut p.rsp;
        self.record_as(
            now,
            prev_comm,
            false,
            trace::Kind::Switch {
                prev_state,
                next: next_comm,
            },
        );
        Some(Switch {
            save,
            load,
            kernel_stack_top,
            address_space,
            save_cpu,
            load_cpu,
        })
    }
}

/// The statistics of a task leaving the CPU at `now`; returns how it left (for the trace).
fn switch_out(p: &mut Task, now: u64, yielded: bool, is_idle: bool) -> trace::PrevState {
    p.stats.cpu_ns += now - p.stats.switched_in_at;
    let prev_state = match p.state {
        State::Running | State::Runnable if yielded => trace::PrevState::Yielded,
        State::Running | State::Runnable => trace::PrevState::Preempted,
        State::Sleeping => trace::PrevState::Sleeping,
        State::Exited => trace::PrevState::Dead,
    };
    if prev_state == trace::PrevState::Sleeping {
        p.stats.voluntary_switches += 1;
    } else if prev_state != trace::PrevState::Dead && !is_idle {
        p.stats.involuntary_switches += 1;
    }
    if p.state == State::Running {
        p.state = State::Runnable;
        p.stats.runnable_since = Some(now);
    }
    prev_state
}

/// The statistics of a task getting the CPU at `now`: the wait (and wake-up latency) ends.
fn switch_in(n: &mut Task, now: u64) {
    n.state = State::Running;
    n.stats.switched_in_at = now;
    if let Some(since) = n.stats.runnable_since.take() {
        n.stats.wait_ns += now - since;
        if core::mem::take(&mut n.stats.woken) {
            n.stats.wakeups += 1;
            n.stats.wake_latency_sum_ns += now - since;
            n.stats.wake_latency_max_ns = n.stats.wake_latency_max_ns.max(now - since);
        }
    }
}

/// Switches to whichever task the policy picks. Interrupts must be off, and stay off until
/// the switch is done: the lock is released before the stacks are switched (the next task
/// may be anywhere, including in its own `schedule()`, and must be able to take it).
pub(super) fn schedule() {
    debug_assert!(!interrupts::are_enabled(), "schedule() with interrupts on");
    let switch = with_sched(Scheduler::pick);
    if let Some(Switch {
        save,
        load,
        kernel_stack_top,
        address_space,
        save_cpu,
        load_cpu,
    }) = switch
    {
        // The next task's address space (a kernel thread keeps the current one, unless it
        // belongs to a process that may be about to be freed) and kernel stack for ring 3.
        crate::arch::x86_64::switch::prepare(address_space, kernel_stack_top);
        // SAFETY: both point into boxed `Task`s that live until after the switch (see
        // below); nothing else touches them with interrupts off.
        unsafe {
            if let Some(prev) = save_cpu.as_mut() {
                prev.save();
            }
            if let Some(next) = load_cpu.as_ref() {
                next.restore();
            }
        }
        // SAFETY: interrupts are off; `save` points into the previous task's boxed `Task`,
        // which lives until the task after it has run `finish_switch`; `load` was saved by
        // this function or made by `initial_stack` on the next task's live stack.
        unsafe { switch_context(save, load) };
        finish_switch();
    }
}

/// The slot of an exited task whose stack the next task to run frees (`NO_SLOT`: none).
/// Outside the scheduler's state so that the switches with nothing to free — nearly all —
/// need not take the lock again to find that out.
static EXITED: AtomicUsize = AtomicUsize::new(NO_SLOT);
const NO_SLOT: usize = usize::MAX;

/// The exiting task in `slot` is about to switch away for the last time: the task that
/// runs next frees it.
pub(super) fn leave_for_reaping(slot: Slot) {
    debug_assert!(!interrupts::are_enabled(), "an exit with interrupts on");
    EXITED.store(slot, Ordering::Relaxed);
}

/// Runs in the task that was just switched to: frees the stack of a task that exited.
pub(super) fn finish_switch() {
    let slot = EXITED.swap(NO_SLOT, Ordering::Relaxed);
    if slot == NO_SLOT {
        return;
    }
    let dead = with_sched(|s| {
        let task = s.slots[slot].take()?;
        s.free_slots.push(slot);
        s.by_id.remove(&task.id);
        s.exited_switches += task.stats.switches;
        Some(task)
    });
    // Dropped after the lock: freeing the stack takes the memory lock.
    drop(dead);
}
