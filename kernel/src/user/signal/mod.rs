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
//! What it does not do: run a handler for a fault the program caused (SIGSEGV, SIGFPE, …
//! end the process as their default action does, `user::fault`).

pub mod altstack;
pub mod frame;

use super::errno;
use crate::arch::user_mode::{NOT_A_SYSCALL, TrapFrame};
use crate::sched;
use crate::sched::proc::sighand::{
    SA_NODEFER, SA_ONSTACK, SA_RESTART, SA_RESTORER, SIGSEGV, SigAction, SigInfo, UNBLOCKABLE,
    any_pending, bit,
};
use crate::sched::proc::signal::Taken;
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
/// the return restores.
pub fn exit_to_user(regs: &mut TrapFrame) {
    loop {
        if let Some(signal) = sched::current_killed() {
            sched::proc::exit::die(signal);
        }
        // Stopped: wait here for SIGCONT (or SIGKILL), then look again.
        if !any_pending() || !sched::proc::signal::wait_while_stopped() {
            break;
        }
    }
    let code = restart_code(regs);
    if code.is_none() && !any_pending() {
        return;
    }
    match sched::proc::signal::take_signal() {
        Some(Taken::Fatal(signal)) => sched::proc::exit::die(signal),
        Some(Taken::Stop(signal)) => {
            sched::proc::signal::stop_current_process(signal);
            if code.is_some() {
                restart(regs);
            }
            // Stops on the next way back: now, if nothing else comes first.
            sched::proc::signal::wait_while_stopped();
            if let Some(signal) = sched::current_killed() {
                sched::proc::exit::die(signal);
            }
        }
        Some(Taken::Handler(signal, info, action)) => {
            match code {
                Some(errno::ERESTARTNOHAND) => regs.rax = (-errno::EINTR) as u64,
                Some(errno::ERESTARTSYS) if action.flags & SA_RESTART == 0 => {
                    regs.rax = (-errno::EINTR) as u64
                }
                Some(_) => restart(regs),
                None => {}
            }
            if run_handler(regs, signal, info, action).is_err() {
                sched::proc::exit::die(SIGSEGV);
            }
        }
        None => {
            if code.is_some() {
                restart(regs);
            }
            if let Some(mask) = sched::take_saved_mask() {
                sched::set_blocked_signals(mask);
            }
        }
    }
}

/// Points `regs` at `action`'s handler for `signal`, with a frame to return through (Linux's
/// `handle_signal` and `setup_rt_frame`). A frame that cannot be written — no restorer, a
/// stack that is not there or overflows the alternate stack — is an error: the caller ends
/// the process with SIGSEGV, as Linux's `force_sigsegv` does (after this function has
/// dropped what it holds: `die` never returns).
fn run_handler(
    regs: &mut TrapFrame,
    signal: u8,
    info: SigInfo,
    action: SigAction,
) -> Result<(), frame::BadFrame> {
    let (blocked, saved, altstack) = sched::signal_state();
    let on_altstack = altstack.contains(regs.rsp);
    let switch_stack = action.flags & SA_ONSTACK != 0 && altstack.size != 0 && !on_altstack;
    let stack_top = if switch_stack {
        altstack.sp + altstack.size
    } else {
        frame::below_red_zone(regs.rsp)
    };
    // A handler already on the alternate stack that would run off its bottom.
    let overflows = on_altstack && !altstack.contains(frame::lowest_address(stack_top));
    let contents = frame::Contents {
        signal,
        info,
        restorer: action.restorer,
        mask: saved.unwrap_or(blocked),
        altstack: altstack.as_stack_t(regs.rsp),
    };
    if action.flags & SA_RESTORER == 0 || overflows {
        return Err(frame::BadFrame);
    }
    let space = sched::current_address_space().expect("a process");
    frame::push(regs, &space, stack_top, action.handler, &contents)?;
    if switch_stack && altstack.autodisarm {
        sched::set_altstack(AltStack::default());
    }
    let mut during = blocked | action.mask;
    if action.flags & SA_NODEFER == 0 {
        during |= bit(signal);
    }
    sched::set_blocked_signals(during & !UNBLOCKABLE);
    Ok(())
}

/// `rt_sigreturn()`: back from a handler to the registers, mask and alternate stack its
/// frame saved. The result is the restored rax, which the dispatcher writes back. A frame
/// that cannot be read, or that would return to the kernel, ends the process with SIGSEGV.
pub fn rt_sigreturn(regs: &mut TrapFrame) -> i64 {
    let popped = frame::pop(regs, &sched::current_address_space().expect("a process"));
    let Ok(restored) = popped else {
        sched::proc::exit::die(SIGSEGV);
    };
    sched::set_blocked_signals(restored.mask & !UNBLOCKABLE);
    // The alternate stack as it was, if the frame's is a valid one (Linux ignores the
    // result of this `sigaltstack`, as does this).
    let _ = set_altstack(restored.altstack, regs.rsp);
    regs.rax as i64
}

/// `sigaltstack`'s change: `stack` becomes the thread's alternate stack. EPERM while the
/// thread runs on the current one (`sp` is on it), EINVAL for unknown flags, ENOMEM for
/// a stack smaller than MINSIGSTKSZ (2 KiB).
pub fn set_altstack(stack: StackT, sp: u64) -> Result<(), i64> {
    const MINSIGSTKSZ: u64 = 2048;
    let (_, _, current) = sched::signal_state();
    if current.contains(sp) {
        return Err(-errno::EPERM);
    }
    let mode = stack.flags & !SS_AUTODISARM;
    let new = match mode {
        SS_DISABLE => AltStack::default(),
        0 | SS_ONSTACK if stack.size < MINSIGSTKSZ => return Err(-errno::ENOMEM),
        0 | SS_ONSTACK => AltStack {
            sp: stack.sp,
            size: stack.size,
            autodisarm: stack.flags & SS_AUTODISARM != 0,
        },
        _ => return Err(-errno::EINVAL),
    };
    sched::set_altstack(new);
    Ok(())
}
