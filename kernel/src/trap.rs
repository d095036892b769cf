//! The boundary between what the hardware raises and what the kernel does about it (xv6's
//! `trap.c`, Linux's `entry/common.c`): system calls, interrupts, and exceptions from ring 3
//! and from the kernel. The entry code in `arch` calls up only through here, and every
//! return to ring 3 passes [`exit_to_user`]. Each interrupt is bracketed by `irq_enter`/`irq_exit` on the CPU's
//! [`PerCpu`](crate::percpu::PerCpu), so that code it runs knows it is in an interrupt (a
//! wake-up then defers its switch); after `irq_exit` comes the one preemption point, then,
//! if the interrupt came from ring 3, [`exit_to_user`].

use crate::arch::fault::Fault;
use crate::arch::irq;
use crate::arch::user_mode::TrapFrame;
use crate::percpu::this_cpu;
use crate::sched;
use crate::time::clock;
use crate::time::hrtimer::{self, Action};

/// The timer interrupt (the APIC's one-shot or the PIT's tick), after its EOI: the expired
/// timers' actions, in order of expiry — among them the scheduler tick, told whether the
/// CPU was in ring 3 (Linux's `account_process_tick` charges the tick by it).
pub fn timer_interrupt(regs: &mut TrapFrame) {
    let from_user = regs.from_user();
    this_cpu().irq_enter();
    if hrtimer::pit_drives_tick() {
        this_cpu().count_tick();
        sched::tick(clock::now(), from_user);
    }
    loop {
        let now = clock::now();
        let Some(action) = hrtimer::pop_expired(now) else {
            break;
        };
        match action {
            Action::Tick => {
                this_cpu().count_tick();
                sched::tick(now, from_user);
            }
            Action::Wake(task) => sched::wake_up(task, now),
            Action::LabProgress => crate::lab::progress::report(now),
            Action::Alarm(leader) => crate::sched::proc::signal::alarm_expired(leader, now),
            Action::Anchor => {}
            #[cfg(test)]
            Action::Test(record, data) => record(data, now),
        }
    }
    hrtimer::reprogram();
    this_cpu().irq_exit();
    return_from_interrupt(regs);
}

/// The serial port received bytes, after its EOI: each goes through the terminal's line
/// discipline, whose wake-ups (a line typed) and signals (Ctrl-C) may ask for a switch.
pub fn serial_interrupt(regs: &mut TrapFrame) {
    this_cpu().irq_enter();
    crate::arch::serial::receive_each(crate::user::tty::received);
    this_cpu().irq_exit();
    return_from_interrupt(regs);
}

/// Another CPU asked this one to run a function (an IPI, after its EOI). The functions
/// asked so far wake no task, so there is no switch to make, and it returns straight to
/// what it interrupted.
pub fn call_function_interrupt() {
    this_cpu().irq_enter();
    crate::cpus::ipi::run_call();
    this_cpu().irq_exit();
}

/// Another CPU made a task runnable on this CPU's runqueue and asked it to reschedule (the
/// IPI, after its EOI; Linux's `scheduler_ipi`), left wake-ups on this CPU's wake list for
/// it to finish (`TTWU_QUEUE`), or marked the task running here (a kill): the wake-ups
/// are finished here, and the interrupt's end does the rest — the switch, and if it came
/// from ring 3 the work pending before going back.
pub fn reschedule_interrupt(regs: &mut TrapFrame) {
    this_cpu().irq_enter();
    sched::finish_queued_wakeups();
    this_cpu().irq_exit();
    return_from_interrupt(regs);
}

/// The end of every interrupt: switch if the handler asked, then the pending work of a
/// return to ring 3.
fn return_from_interrupt(regs: &mut TrapFrame) {
    sched::preempt_from_interrupt();
    if regs.from_user() {
        exit_to_user(regs);
    }
}

/// Work pending before any return to ring 3, from a system call or an interrupt (Linux's
/// `exit_to_user_mode_loop`): a program killed meanwhile dies here, even if it never makes
/// a system call; a signal's handler is set up; an interrupted call restarts
/// (`user::signal`). (A pending preemption needs nothing here: the timer interrupt has
/// already switched, on whatever stack it came in on.)
pub fn exit_to_user(regs: &mut TrapFrame) {
    crate::user::signal::exit_to_user(regs);
}

/// SYSCALL's handler, called by the entry path in `arch` with the saved registers: the
/// call runs with interrupts on, its result goes back in rax, then the work pending before
/// ring 3.
pub extern "C" fn syscall(regs: &mut TrapFrame) {
    irq::enable();
    regs.rax = crate::user::syscall::dispatch(regs) as u64;
    exit_to_user(regs);
    irq::disable();
}

/// A page fault in ring 3 that may be the program's due: a store to a page shared
/// copy-on-write since a fork (`write` and `present`), a first touch of a stack page (not
/// `present`), or a touch of a page another CPU was replacing with its copy-on-write copy
/// (not `present` then, present now). True if it was and the page is there now: the access
/// runs again.
pub fn user_page_fault(address: u64, write: bool, present: bool) -> bool {
    if present {
        write && crate::user::cow::resolve_write_fault(address)
    } else {
        crate::user::cow::resolve_replaced_page(address)
            || crate::user::stack::resolve_missing_page(address)
    }
}

/// Any other exception in ring 3 is the program's: the signal Linux sends for it, to its
/// handler if it has one (whose frame `regs` then point at), else the end of the process
/// (`user::fault`). Then the work pending before any return to ring 3.
pub fn user_exception(regs: &mut TrapFrame, fault: &Fault) {
    crate::user::fault::deliver(regs, &user_fault(fault));
    exit_to_user(regs);
}

/// An exception no program is expected to cause (an NMI, a #TS, ...), taken in ring 3:
/// the program that was running dies of SIGSEGV, as if it had no handler.
pub fn user_exception_fatal(fault: &Fault) -> ! {
    crate::user::fault::kill(&user_fault(fault))
}

fn user_fault(fault: &Fault) -> crate::user::fault::UserFault {
    crate::user::fault::UserFault {
        vector: fault.vector,
        name: fault.name,
        error_code: fault.error_code.unwrap_or(0),
        ip: fault.instruction_pointer,
        sp: fault.stack_pointer,
        address: fault.fault_address,
    }
}

/// An exception in the kernel ends the run: one line describing it, and if it hit a
/// stack's guard page (or became the double fault such an overflow turns into), which task
/// overflowed its stack.
pub fn kernel_exception(fault: &Fault) -> ! {
    use core::fmt::Write;
    let mut console = crate::arch::serial::emergency_console();
    let _ = writeln!(console, "{fault}");
    if let Some(address) = fault
        .faulting_address()
        .filter(|&a| crate::mm::stack::is_guard(a))
    {
        let task = sched::current_if_unlocked();
        let _ = writeln!(
            console,
            "kernel stack overflow: task {} ran into the guard page of its stack at {address:#x}",
            task.map_or(-1, |t| t.number() as i64)
        );
    }
    crate::exit(crate::ExitCode::Failure)
}
