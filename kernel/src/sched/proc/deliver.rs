//! Taking a signal on the way back to ring 3: which pending signal the running thread takes
//! and what it does with it (Linux's `get_signal` and `signal_delivered`, kernel/signal.c,
//! 6.1), and a fault's signal, which the thread takes at once (Linux's `force_sig_fault` and
//! `force_sig_info_to_task`). `user::signal` runs what these decide: a handler's frame, the
//! end of the process, a stop.

use super::sighand::{
    SA_NODEFER, SA_ONSTACK, SA_RESETHAND, SIG_DFL, SIG_IGN, STOP_SIGNALS, SigAction, SigInfo,
    UNBLOCKABLE, any_pending, bit,
};
use super::signal::ignores;
use crate::sched::with_sched;
use crate::task::Task;
use crate::user::signal::altstack::AltStack;

/// A handler to run, and what its frame saves.
pub struct Handling {
    pub signal: u8,
    pub info: SigInfo,
    pub action: SigAction,
    /// The mask `rt_sigreturn` is to put back: the thread's, or the one `rt_sigsuspend`
    /// replaced.
    pub mask: u64,
    /// The alternate stack as it was.
    pub altstack: AltStack,
}

/// What the running thread does with the signal it takes.
pub enum Taken {
    /// Runs a handler for it (its mask is set for the handler already).
    Handler(Handling),
    /// Ends the process: its default action.
    Fatal(u8),
    /// Stops the process: the default action of a stop signal it had blocked (unless its
    /// group is orphaned: see `stop::stop_current_process`).
    Stop(u8),
    /// Its process is stopped: it waits for SIGCONT.
    Stopped,
}

/// The signal the running thread is to take now, if any: the lowest pending signal it does
/// not block, a fault's before any other (Linux's `get_signal`). Signals whose default
/// action is to end the process were acted on when sent, unless they were blocked then:
/// those end it now (the caller ends it, holding nothing). Ignored ones are dropped. A
/// handler with `SA_RESETHAND` is reset to the default as it is taken. For a handler, the
/// thread's mask and alternate stack are set for it ([`begin_handler`]).
pub fn take_signal(sp: u64) -> Option<Taken> {
    if !any_pending() {
        return None;
    }
    with_sched(|s| {
        let t = s.current_task();
        let blocked = t.blocked_signals;
        // The thread's process is borrowed, not cloned: an `Arc` clone and drop is two
        // atomic operations on every signal taken.
        let group = t.group.as_ref()?;
        let (signal, info, action) = loop {
            let (signal, info, action) = match group.sighand.next(!blocked, t.id)? {
                super::sighand::Next::Stopped => return Some(Taken::Stopped),
                super::sighand::Next::Signal(signal, info, action) => (signal, info, action),
            };
            if ignores(action, signal) {
                continue;
            }
            if action.handler == SIG_DFL && bit(signal) & STOP_SIGNALS != 0 {
                // Whether an orphaned group drops it is `stop_current_process`'s question.
                return Some(Taken::Stop(signal));
            }
            if action.handler == SIG_DFL {
                return Some(Taken::Fatal(signal));
            }
            break (signal, info, action);
        };
        Some(Taken::Handler(begin_handler(t, signal, info, action, sp)))
    })
}

/// Sets thread `t` up to run `action`'s handler for `signal` (Linux's `signal_delivered`):
/// its mask becomes its own, `sa_mask`, and the signal unless SA_NODEFER; an SS_AUTODISARM
/// alternate stack the handler is to run on (`sp` is the interrupted stack pointer) is
/// given up. The mask to put back is the one `rt_sigsuspend` replaced, if it did.
fn begin_handler(t: &mut Task, signal: u8, info: SigInfo, action: SigAction, sp: u64) -> Handling {
    let blocked = t.blocked_signals;
    let mask = t.saved_mask.take().unwrap_or(blocked);
    let mut during = blocked | action.mask;
    if action.flags & SA_NODEFER == 0 {
        during |= bit(signal);
    }
    t.blocked_signals = during & !UNBLOCKABLE;
    let altstack = t.altstack;
    let onto_altstack = action.flags & SA_ONSTACK != 0 && !altstack.contains(sp);
    if onto_altstack && altstack.autodisarm {
        t.altstack = AltStack::default();
    }
    Handling {
        signal,
        info,
        action,
        mask,
        altstack,
    }
}

/// What the running thread does with the signal of a fault it caused.
pub enum Forced {
    /// Runs its handler (the thread's mask is set for it already).
    Handler(Handling),
    /// Dies of it. `unhandled`: the program had no handler for it (SIG_DFL or SIG_IGN),
    /// so the kernel's line about the fault is printed, as Linux's `unhandled_signal`
    /// decides.
    Dies { unhandled: bool },
}

/// The signal `signal` of a fault the running thread caused, with `info` (Linux's
/// `force_sig_fault`): the program cannot refuse it. If the thread blocks it or the process
/// ignores it, it is unblocked and its action reset to the default, which ends the process
/// (a program that cannot handle its own fault would fault again for ever). Otherwise the
/// handler runs now, before any other pending signal, as Linux takes a synchronous signal
/// first; `sp` is the interrupted stack pointer.
pub fn force_fault(signal: u8, info: SigInfo, sp: u64) -> Forced {
    with_sched(|s| {
        let t = s.current_task();
        let Some(group) = t.group.clone() else {
            return Forced::Dies { unhandled: true };
        };
        let action = group.sighand.action(signal);
        let blocked = t.blocked_signals & bit(signal) != 0;
        let unhandled = action.handler == SIG_DFL || action.handler == SIG_IGN;
        if blocked || unhandled {
            t.blocked_signals &= !bit(signal);
            group.sighand.set_action(signal, SigAction::default());
            return Forced::Dies { unhandled };
        }
        if action.flags & SA_RESETHAND != 0 {
            group.sighand.set_action(signal, SigAction::default());
        }
        Forced::Handler(begin_handler(t, signal, info, action, sp))
    })
}
