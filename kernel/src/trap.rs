//! The boundary between what the hardware raises and what the kernel does about it (xv6's
//! `trap.c`, Linux's `irqentry_enter`/`irqentry_exit`): the interrupt entries in `arch` call
//! up only through here. Each interrupt is bracketed by `irq_enter`/`irq_exit` on the CPU's
//! [`PerCpu`](crate::percpu::PerCpu), so that code it runs knows it is in an interrupt (a
//! wake-up then defers its switch); after `irq_exit` comes the one preemption point, then,
//! if the interrupt came from ring 3, [`exit_to_user`].

use crate::percpu::this_cpu;
use crate::sched;
use crate::time::hrtimer::{self, Action};
use crate::time::{self, clock};

/// The timer interrupt (the APIC's one-shot or the PIT's tick), after its EOI: the expired
/// timers' actions, in order of expiry — among them the scheduler tick, told whether the
/// CPU was in ring 3 (Linux's `account_process_tick` charges the tick by it).
pub fn timer_interrupt(from_user: bool) {
    this_cpu().irq_enter();
    if time::pit_tick() {
        sched::tick(clock::now(), from_user);
    }
    loop {
        let now = clock::now();
        let Some(expired) = hrtimer::pop_expired(now) else {
            break;
        };
        match expired.action {
            Action::Tick => {
                if time::tick_timer_expired(expired.expiry) {
                    sched::tick(now, from_user);
                }
            }
            Action::Wake(task) => sched::wake_up_irq(task, now),
            Action::LabProgress => crate::lab::progress::report(now),
            #[cfg(test)]
            Action::Test(record, data) => record(data, now),
        }
    }
    hrtimer::reprogram();
    this_cpu().irq_exit();
    return_from_interrupt(from_user);
}

/// The serial port received bytes, after its EOI: each goes through the terminal's line
/// discipline, whose wake-ups (a line typed) and signals (Ctrl-C) may ask for a switch.
pub fn serial_interrupt(from_user: bool) {
    this_cpu().irq_enter();
    crate::arch::x86_64::serial::receive_each(crate::user::tty::received);
    this_cpu().irq_exit();
    return_from_interrupt(from_user);
}

/// The end of every interrupt: switch if the handler asked, then the pending work of a
/// return to ring 3.
fn return_from_interrupt(from_user: bool) {
    sched::preempt_from_interrupt();
    if from_user {
        exit_to_user();
    }
}

/// Work pending before any return to ring 3 (Linux's `exit_to_user_mode_loop`): a program
/// killed meanwhile dies here, even if it never makes a system call.
pub fn exit_to_user() {
    crate::user::process::on_return_to_user();
}
