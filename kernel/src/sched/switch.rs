//! Picking the next task and switching to it (Linux's `__schedule`): the current task goes
//! back to the policy, the policy picks the next, the statistics and the trace record the
//! switch, and `schedule` changes stacks, address space and user CPU state.
//!
//! Interrupts are off throughout, asserted at the top of [`schedule`]; this CPU's runqueue's
//! lock is taken once, for the pick, and released before the stacks change — the switch
//! takes no other lock (see `sched`'s module docs).

use super::runqueue::Runqueue;
use super::{Scheduler, Slot, runqueue, trace, tracing, with_sched};
use crate::arch::irq;
use crate::arch::switch::switch_context;
use crate::arch::user_state::UserCpuState;
use crate::percpu::this_cpu;
use crate::sync::KeyedGuard;
use crate::time::clock;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What switching to the picked task needs.
struct Switch {
    /// Where to save the current task's stack pointer, and the next one's.
    save: *mut u64,
    load: u64,
    kernel_stack_top: u64,
    /// The next task's level-4 table, if it is a user process.
    address_space: Option<crate::arch::paging::PhysFrame>,
    /// Where the previous task's FPU and FS base go, and where the next one's come from
    /// (null for kernel threads, which have none).
    save_cpu: *mut UserCpuState,
    load_cpu: *const UserCpuState,
    /// The next task is the CPU's idle task.
    to_idle: bool,
    /// The previous task's `on_cpu` flag, cleared once its registers are saved.
    leaving: NonNull<AtomicBool>,
}

impl Runqueue {
    /// The runqueue puts the current task back and picks the next (see `sched::rq`); this
    /// returns what switching to it needs (`None` if the current task keeps the CPU). The
    /// switch's event is written straight into this CPU's flight recorder, each task's name
    /// read from its context. It reads nothing but this runqueue: its lock is the only one
    /// the switch takes.
    #[inline(always)]
    fn pick_switch(&mut self) -> Option<Switch> {
        let rq = self;
        let pick = rq.pick(clock::now);
        if !pick.switches() {
            return None;
        }
        let to_idle = pick.next == rq.idle();
        rq.say_runs_idle(to_idle);
        let (need_resched, cpu) = (rq.need_resched(), rq.cpu() as u16);
        let (recorder, p, n) = rq.switch_parts(pick.prev, pick.next);
        this_cpu().set_current(n.id, n.process);
        this_cpu().set_current_slot(pick.next);
        n.on_cpu.store(true, Ordering::Relaxed);
        // The event is written in place, field by field, not built and copied in (80
        // bytes, about 40 instructions of every switch).
        let event = recorder.next_slot();
        event.at = pick.now;
        event.cpu = cpu;
        event.target_cpu = cpu;
        event.flags = trace::Flags {
            need_resched,
            hardirq: false,
        };
        event.kind = trace::Kind::Switch {
            prev_state: pick.prev_state,
        };
        event.task = n.comm;
        event.current = p.comm;
        let (load, kernel_stack_top) = (n.rsp, n.kernel_stack_top);
        let address_space = n.address_space.as_ref().map(|a| a.level_4_frame());
        super::current::set_current_space(n.address_space.as_ref());
        super::current::set_current_files(n.files.as_ref());
        let load_cpu = n
            .user_cpu
            .as_deref()
            .map_or(core::ptr::null(), |c| c as *const _);
        let save_cpu = p
            .user_cpu
            .as_deref_mut()
            .map_or(core::ptr::null_mut(), |c| c as *mut _);
        let save = &raw mut p.rsp;
        let leaving = NonNull::from(&p.on_cpu);
        tracing::publish(event);
        Some(Switch {
            save,
            load,
            kernel_stack_top,
            address_space,
            save_cpu,
            load_cpu,
            to_idle,
            leaving,
        })
    }
}

/// Switches to whichever task the policy picks. Interrupts must be off, and stay off until
/// the switch is done: the runqueue's lock is released before the stacks are switched (the
/// next task may be anywhere, including in its own `schedule()`, and must be able to take
/// it).
pub(super) fn schedule() {
    // Its rules, checked in every build (xv6's `sched()`): with interrupts on, a tick could
    // switch away in the middle of a switch; with a spin lock held, the next task could spin
    // on it for ever; in an interrupt handler, the handler's own state would be left behind
    // on the stack of a task that may not run again soon.
    assert!(!irq::enabled(), "schedule() with interrupts on");
    if !this_cpu().preemptible() {
        not_preemptible(0);
    }
    switch_under(this_rq_to_pick());
}

/// [`schedule`] for a caller that holds this CPU's runqueue's lock, its only lock, having
/// just changed the runqueue (a yield): the pick goes on under it. Returns whether
/// interrupts were on when the caller took the lock: it turns them back on once this task
/// runs again. Inlined into its caller (the sleeps and the yield) in optimised builds: a
/// yield's switch then makes one call fewer.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn schedule_locked(rq: KeyedGuard<'static, Option<Runqueue>>) -> bool {
    // The same rules; interrupts are off by the lock's type.
    let (rank, cpu) = (
        crate::sync::Rank::Runqueue as u32,
        this_cpu().index() as u32,
    );
    if !this_cpu().holds_only_key(rank, cpu) {
        not_preemptible(1);
    }
    let (rq, taken_with_irqs_on) = ready_to_pick(rq);
    let irq_were_on = switch_under(rq);
    taken_with_irqs_on.unwrap_or(irq_were_on)
}

/// This CPU's runqueue, locked, for a pick (see [`ready_to_pick`]).
#[inline(always)]
fn this_rq_to_pick() -> KeyedGuard<'static, Option<Runqueue>> {
    ready_to_pick(runqueue::lock(this_cpu().index())).0
}

/// This CPU's runqueue `rq`, locked, made ready for a pick. A CPU about to find nothing to
/// run first tries to pull work from the others (Linux's newly-idle balance, which also lets
/// go of its runqueue's lock to look at the others'), unless its own idle spells say it is
/// not worth it (read under its own lock, as Linux reads `avg_idle`): the pass takes the
/// runqueues' locks a CPU or two at a time, in CPU order (`balance::balance_newly_idle`), so
/// this one is let go of first and taken again for the pick — then this also returns whether interrupts were on
/// when `rq` was taken (they stay off).
#[inline(always)]
fn ready_to_pick(
    mut rq: KeyedGuard<'static, Option<Runqueue>>,
) -> (KeyedGuard<'static, Option<Runqueue>>, Option<bool>) {
    let runqueue = rq.as_mut().expect("a runqueue");
    // The tests in the order of their cost, each made only if those before it fail: no
    // balancer (the common case on one CPU), a CPU with something to run (its stopper or a
    // queued task), the idle spells.
    if runqueue.balance.is_none() || !runqueue.about_to_idle() || runqueue.skips_newly_idle() {
        return (rq, None);
    }
    let irq_were_on = rq.unlock_keeping_irqs_off();
    super::balance::balance_newly_idle();
    (runqueue::lock(this_cpu().index()), Some(irq_were_on))
}

/// Picks under the runqueue's lock `rq`, releases it (interrupts stay off) and, if the pick
/// changes the task, switches. Returns whether interrupts were on when the lock was taken.
/// (No loop, as Linux's `schedule()` loops `while (need_resched())`: a reschedule asked of
/// this CPU while it switched comes with an interrupt, the reschedule IPI, or was asked
/// by this CPU itself before it took the lock, and so was answered by this pick.)
#[inline(always)]
fn switch_under(mut rq: KeyedGuard<'static, Option<Runqueue>>) -> bool {
    let switch = rq.as_mut().expect("a runqueue").pick_switch();
    let irq_were_on = rq.unlock_keeping_irqs_off();
    if let Some(Switch {
        save,
        load,
        kernel_stack_top,
        address_space,
        save_cpu,
        load_cpu,
        to_idle,
        leaving,
    }) = switch
    {
        this_cpu().hand_off_leaving(leaving);
        crate::mm::stack::catch_up_tlb();
        // An AP whose tick stopped as it idled ticks again for the task it runs now.
        if !to_idle && !this_cpu().tick_on() {
            crate::time::start_tick();
        }
        // The next task's address space (a kernel thread keeps the current one, unless it
        // belongs to a process that may be about to be freed) and kernel stack for ring 3.
        crate::arch::switch::prepare(address_space, kernel_stack_top);
        // SAFETY: each points into a task's `UserCpuState`, a box of its own in the task's
        // context: the previous task's lives until its context is freed (below), the next
        // one's until it exits, in its own context; only the task's CPU touches it, and
        // this CPU runs neither task now (interrupts off).
        unsafe {
            if let Some(prev) = save_cpu.as_mut() {
                prev.save();
            }
            if let Some(next) = load_cpu.as_ref() {
                next.restore();
            }
        }
        // SAFETY: interrupts are off; `save` points into the previous task's context, a
        // box that never moves (a move or a remote attach moves the box, not what is in
        // it: `runqueue`'s docs) and is freed no sooner than by the `finish_switch` of the
        // task after it; `load` was saved by this function or made by `initial_stack` on
        // the next task's live stack.
        unsafe { switch_context(save, load) };
        finish_switch();
    }
    irq_were_on
}

/// `schedule()` was called holding a spin lock (beyond the scheduler's own `own`) or in an
/// interrupt handler: says which.
#[cold]
fn not_preemptible(own: u32) -> ! {
    let cpu = this_cpu();
    assert_eq!(
        cpu.locks_held(),
        u64::from(own),
        "schedule() with a spin lock held"
    );
    assert!(!cpu.in_interrupt(), "schedule() in an interrupt handler");
    unreachable!("a CPU that is not preemptible holds a lock or is in an interrupt")
}

/// Exited tasks whose stacks are not yet freed: each is between its last switch and the
/// [`finish_switch`] of the task that runs after it on its CPU. A parent on another CPU may
/// reap such a child before that CPU gets there, so a count of the memory in use waits for
/// this to reach 0 ([`wait_for_exited_stacks`]).
static STACKS_TO_FREE: AtomicUsize = AtomicUsize::new(0);

/// The exiting task in `slot` is about to switch away for the last time: the task that
/// runs next on this CPU frees it.
pub(super) fn leave_for_reaping(slot: Slot) {
    debug_assert!(!irq::enabled(), "an exit with interrupts on");
    STACKS_TO_FREE.fetch_add(1, Ordering::AcqRel);
    this_cpu().hand_off_exited(slot);
}

/// Returns once every task that has exited so far has had its stack freed. Each such CPU is
/// in the middle of a switch, with interrupts off, so the wait is a few instructions long.
pub fn wait_for_exited_stacks() {
    while STACKS_TO_FREE.load(Ordering::Acquire) != 0 {
        core::hint::spin_loop();
    }
}

/// Runs in the task that was just switched to, and finishes what the switch handed over
/// ([`crate::percpu::handoff::Handoff`]): says the previous task has left this CPU (its
/// `on_cpu` flag), and frees the stack of a task that exited — all it still holds: its
/// files and address space went in its own context, before its last switch
/// (`proc::lifecycle::release_resources`). Nothing here switches this CPU.
#[inline(always)]
pub(super) fn finish_switch() {
    let handoff = this_cpu().take_handoff();
    if let Some(leaving) = handoff.leaving {
        // SAFETY: the flag is in the previous task's boxed context, which does not move
        // and lives at least until `free_exited` frees it, below; its registers are saved,
        // so other CPUs may run it from now on.
        unsafe { leaving.as_ref() }.store(false, Ordering::Release);
    }
    // Inlined into every switch for this one test: the common switch, which frees no
    // stack, pays no call (the kernel-thread switch's instruction budget).
    if let Some(slot) = handoff.exited {
        free_exited(slot);
    }
}

/// [`finish_switch`]'s rare part: the stack of the task that exited is freed.
#[cold]
#[inline(never)]
fn free_exited(slot: Slot) {
    let dead = with_sched(|s| {
        // (An exited task is not woken: its CPU stays put.)
        let cpu = s.slots[slot].as_ref()?.cpu.get();
        let task = s.slots[slot].take()?;
        let (_, context) = s.rqs[cpu].remove(slot);
        s.free_slots.push(slot);
        s.by_id.remove(&task.id);
        Some((task, context))
    });
    if let Some((task, context)) = &dead {
        assert!(
            task.holds_only_its_stack() && context.holds_nothing(),
            "task {} exited holding more than its stack",
            task.id
        );
    }
    // Dropped after the lock: freeing the stack takes the memory lock.
    drop(dead);
    STACKS_TO_FREE.fetch_sub(1, Ordering::AcqRel);
}

/// "Change state under the lock, then reschedule if needed": runs `f` on the scheduler and,
/// if it (or anything before it) asked for a reschedule, switches before returning — unless
/// this runs in an interrupt handler, whose switch waits for the handler's end
/// ([`preempt_from_interrupt`]). Every operation that may wake, block or start a task goes
/// through here.
pub(super) fn change_then_reschedule<R>(f: impl FnOnce(&mut Scheduler) -> R) -> R {
    // Interrupts stay off from the change to the switch: a tick in between could switch
    // first, and this switch would be a second one for one reason.
    let irq_were_on = irq::save_and_disable();
    let result = with_sched(f);
    if super::resched::asked_here() && !this_cpu().in_interrupt() {
        schedule();
    }
    irq::restore(irq_were_on);
    result
}

/// A new task's first step, with interrupts off (Linux's `schedule_tail`): the switch that
/// started it is finished.
pub(super) fn schedule_tail() {
    finish_switch();
}

/// Called at the end of an interrupt handler, after `irq_exit` (interrupts off): switch if
/// the tick or a wake-up asked.
pub fn preempt_from_interrupt() {
    if super::resched::asked_here() {
        schedule();
    }
}
