//! Signal handlers: what happens on the way back to ring 3 when a signal is pending (Linux's
//! `arch_do_signal_or_restart`, arch/x86/kernel/signal.c). Every return to ring 3 — from a
//! system call or an interrupt — passes [`exit_to_user`], with the registers it will restore.
//!
//! There, in order:
//! 1. a thread marked killed dies; a thread of a stopped process waits for SIGCONT;
//! 2. a pending signal the thread does not block is taken (`sched::proc::signal`): one
//!    whose action is to end the process ends it; one with a handler gets a frame on the
//!    user stack ([`frame`]) and the registers are pointed at the handler, which returns
//!    through `sa_restorer` and `rt_sigreturn` to where the thread was;
//! 3. a system call that a signal interrupted is restarted or fails with EINTR, by its
//!    ERESTART code and the handler's `SA_RESTART` (see `errno`);
//! 4. a mask `rt_sigsuspend` replaced is put back once no handler needs it.
//!
//! A stopped process's threads wait in step 1 until SIGCONT.
//!
//! A fault the program caused (`user::fault`) comes here too, by [`deliver_fault`]: its
//! signal's handler runs at once, with the fault in the frame's `sigcontext`.

pub mod altstack;
pub mod frame;

use super::errno;
use crate::arch::user_mode::{NOT_A_SYSCALL, TrapFrame};
use crate::sched;
use crate::sched::proc::deliver::{Forced, Handling, Taken};
use crate::sched::proc::sighand::SigInfo;
use crate::sched::proc::sighand::{
    SA_ONSTACK, SA_RESTART, SA_RESTORER, SIGSEGV, UNBLOCKABLE, any_pending,
};
pub use altstack::{AltStack, SS_AUTODISARM, SS_DISABLE, SS_ONSTACK, StackT};

/// Whether a system call's result is one of the kernel's restart codes.
fn restart_code(regs: &TrapFrame) -> Option<i64> {
    let code = -(regs.rax as i64);
    let restartable = regs.orig_rax != NOT_A_SYSCALL
        && matches!(
            code,
            errno::ERESTARTSYS | errno::ERESTARTNOINTR | errno::ERESTARTNOHAND
        );
    restartable.then_some(code)
}

/// Issues the interrupted system call again: its number back in rax, and rip back over the
/// two bytes of `syscall`.
fn restart(regs: &mut TrapFrame) {
    regs.rax = regs.orig_rax;
    regs.rip -= 2;
}

/// The work before any return to ring 3 (see the module's docs). `regs` are the registers
/// the return restores. Nearly always there is none: no task is marked killed, no process
/// has a signal pending or is stopped, and the result is no restart code — three loads and
/// compares, inlined into every return; the rest is [`exit_to_user_work`].
#[inline(always)]
pub fn exit_to_user(regs: &mut TrapFrame) {
    let restart_code = (regs.rax as i64).wrapping_add(errno::ERESTARTNOHAND) as u64 <= 2;
    if sched::kills_pending() || any_pending() || restart_code {
        exit_to_user_work(regs);
    }
}

/// [`exit_to_user`]'s work, when there is some.
#[inline(never)]
fn exit_to_user_work(regs: &mut TrapFrame) {
    let code = restart_code(regs);
    loop {
        if let Some(signal) = sched::current_killed() {
            sched::proc::exit::die(signal);
        }
        match sched::proc::deliver::take_signal(regs.rsp) {
            // Stopped: wait here for SIGCONT (or SIGKILL), then look again.
            Some(Taken::Stopped) => {
                sched::proc::stop::wait_while_stopped();
            }
            Some(Taken::Stop(signal)) => sched::proc::stop::stop_current_process(signal),
            Some(Taken::Fatal(signal)) => sched::proc::exit::die(signal),
            Some(Taken::Handler(handling)) => {
                match code {
                    Some(errno::ERESTARTNOHAND) => regs.rax = (-errno::EINTR) as u64,
                    Some(errno::ERESTARTSYS) if handling.action.flags & SA_RESTART == 0 => {
                        regs.rax = (-errno::EINTR) as u64
                    }
                    Some(_) => restart(regs),
                    None => {}
                }
                if run_handler(regs, &handling, frame::TrapState::default()).is_err() {
                    sched::proc::exit::die(SIGSEGV);
                }
                return;
            }
            None => {
                if code.is_some() {
                    restart(regs);
                    sched::with_thread_signals(|blocked, saved, _| {
                        if let Some(mask) = saved.take() {
                            *blocked = mask;
                        }
                    });
                }
                return;
            }
        }
    }
}

/// Points `regs` at the handler, with a frame to return through (Linux's `handle_signal`
/// and `setup_rt_frame`); `take_signal` has set the thread's mask for it. A frame that
/// cannot be written — no restorer, a stack that is not there or overflows the alternate
/// stack — is an error: the caller ends the process with SIGSEGV, as Linux's
/// `force_sigsegv` does (after this function has dropped what it holds: `die` never
/// returns).
// Inlined into each caller: the signal path is measured to the instruction, and a call
// with this many arguments costs it dozens.
#[inline(always)]
fn run_handler(
    regs: &mut TrapFrame,
    handling: &Handling,
    trap: frame::TrapState,
) -> Result<(), frame::BadFrame> {
    let (sp, action, altstack) = (regs.rsp, handling.action, handling.altstack);
    let on_altstack = altstack.contains(sp);
    let switch_stack = action.flags & SA_ONSTACK != 0 && altstack.size != 0 && !on_altstack;
    let stack_top = if switch_stack {
        altstack.sp + altstack.size
    } else {
        frame::below_red_zone(sp)
    };
    // A handler already on the alternate stack that would run off its bottom.
    let overflows = on_altstack && !altstack.contains(frame::lowest_address(stack_top));
    if action.flags & SA_RESTORER == 0 || overflows {
        return Err(frame::BadFrame);
    }
    let contents = frame::Contents {
        signal: handling.signal,
        info: handling.info,
        restorer: action.restorer,
        mask: handling.mask,
        altstack: altstack.as_stack_t(sp),
        trap,
    };
    // SAFETY: writing a frame neither execs nor ends the task.
    unsafe {
        sched::with_current_address_space(|space| {
            frame::push(regs, space, stack_top, action.handler, &contents)
        })
    }
    .expect("a process")
}

/// The signal of a fault the running thread caused, with `info` and the fault's `trap`
/// state (Linux's `force_sig_fault`, see `sched::proc::deliver::force_fault`): `regs`, the
/// registers at the fault, are pointed at its handler, which the program cannot refuse; if
/// it has none (or blocks or ignores the signal), Err: the caller ends the process, after
/// its line if `unhandled` says the program had no handler.
pub fn deliver_fault(
    regs: &mut TrapFrame,
    signal: u8,
    info: SigInfo,
    trap: frame::TrapState,
) -> Result<(), Unhandled> {
    match sched::proc::deliver::force_fault(signal, info, regs.rsp) {
        Forced::Handler(handling) => {
            if run_handler(regs, &handling, trap).is_err() {
                sched::proc::exit::die(SIGSEGV);
            }
            Ok(())
        }
        Forced::Dies { unhandled } => Err(Unhandled(unhandled)),
    }
}

/// A fault's signal that ends the process; true if the program had no handler for it.
pub struct Unhandled(pub bool);

/// `rt_sigreturn()`: back from a handler to the registers, mask and alternate stack its
/// frame saved. The result is the restored rax, which the dispatcher writes back. A frame
/// that cannot be read, or that would return to the kernel, ends the process with SIGSEGV.
pub fn rt_sigreturn(regs: &mut TrapFrame) -> i64 {
    // SAFETY: reading a frame neither execs nor ends the task (a bad one ends it below,
    // after the borrow).
    let popped = unsafe { sched::with_current_address_space(|space| frame::pop(regs, space)) };
    let Ok(restored) = popped.expect("a process") else {
        sched::proc::exit::die(SIGSEGV);
    };
    let sp = regs.rsp;
    sched::with_thread_signals(|blocked, _, altstack| {
        *blocked = restored.mask & !UNBLOCKABLE;
        // The alternate stack as it was, if the frame's is a valid one (Linux ignores the
        // result of this `sigaltstack`, as does this).
        if let Ok(stack) = checked_altstack(restored.altstack, altstack, sp) {
            *altstack = stack;
        }
    });
    regs.rax as i64
}

/// The alternate stack `stack` asks for, by `sigaltstack`'s rules: EPERM while the thread
/// runs on its `current` one (`sp` is on it), EINVAL for unknown flags, ENOMEM for a stack
/// smaller than MINSIGSTKSZ (2 KiB).
fn checked_altstack(stack: StackT, current: &AltStack, sp: u64) -> Result<AltStack, i64> {
    const MINSIGSTKSZ: u64 = 2048;
    if current.contains(sp) {
        return Err(-errno::EPERM);
    }
    match stack.flags & !SS_AUTODISARM {
        SS_DISABLE => Ok(AltStack::default()),
        0 | SS_ONSTACK if stack.size < MINSIGSTKSZ => Err(-errno::ENOMEM),
        0 | SS_ONSTACK => Ok(AltStack {
            sp: stack.sp,
            size: stack.size,
            autodisarm: stack.flags & SS_AUTODISARM != 0,
        }),
        _ => Err(-errno::EINVAL),
    }
}

/// `sigaltstack`'s change: `stack` becomes the thread's alternate stack (see
/// [`checked_altstack`] for the rules); the old one comes back as a `stack_t` either way.
pub fn set_altstack(stack: Option<StackT>, sp: u64) -> (StackT, Result<(), i64>) {
    sched::with_thread_signals(|_, _, altstack| {
        let old = altstack.as_stack_t(sp);
        let Some(stack) = stack else {
            return (old, Ok(()));
        };
        match checked_altstack(stack, altstack, sp) {
            Ok(new) => {
                *altstack = new;
                (old, Ok(()))
            }
            Err(e) => (old, Err(e)),
        }
    })
}
