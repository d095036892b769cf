//! How a process ends (Linux's `do_exit` and `do_group_exit`, seen from the process): a
//! thread's `exit`, the whole process's `exit_group`, or a fatal signal; the thread's tid
//! cleared for a joiner; and the exit status the process's zombie carries to its parent
//! (`family`). The leader files it once every other thread is gone (`thread_ends`); the
//! task's own end is `lifecycle::exit`.

use super::exit_status::{Exit, ExitStatus};
use super::thread_ends;
use crate::sched;

/// Ends the running thread (`exit`); the process ends with its last thread.
pub fn exit_thread(status: u8) -> ! {
    end(Exit::Status(status), false)
}

/// Ends the running process, every thread of it (`exit_group`).
pub fn exit(status: u8) -> ! {
    end(Exit::Status(status), true)
}

/// Ends the running process, killed by `signal`.
pub fn die(signal: u8) -> ! {
    end(Exit::Signal(signal), true)
}

fn end(exit: Exit, whole_process: bool) -> ! {
    let group = sched::current_group().expect("a process");
    if whole_process && group.decide_exit(exit) {
        thread_ends::end_other_threads(&group);
    }
    release_tid();
    // Before anything below that must not be interrupted: closing files may wake a task.
    sched::release_files();
    let me = sched::current();
    if me != group.leader {
        // A thread leaves its CPU time to the process and goes; no one waits for it.
        crate::arch::irq::disable();
        group.add_ended_thread(sched::current_thread_times());
        // `exit` never returns: what this frame holds must go first.
        drop(group);
        sched::exit()
    }
    // The leader ends the process once its other threads have ended (`exit` of the main
    // thread lets them run on, as on Linux) — unless one of them execs and takes it over.
    if let Some(heir) = thread_ends::wait_for_threads(&group) {
        thread_ends::hand_over(group, heir)
    }
    let exit = group.exit().unwrap_or(exit);
    // Interrupts stay off from here until the scheduler has switched away for good: a child
    // ending between this task's filing and its exit would otherwise file its status under
    // this task after its children passed to the boot task, and stay unreaped for ever.
    crate::arch::irq::disable();
    let (ended, children) = group.ended_and_children();
    let mut times = sched::current_thread_times();
    times.add(ended);
    let own = times;
    times.add(children);
    let pgid = group.pgid();
    sched::set_exit_status(ExitStatus {
        exit,
        times,
        own,
        pgid,
    });
    drop(group);
    sched::exit()
}

/// Clears the running thread's tid where `set_tid_address` or CLONE_CHILD_CLEARTID asked,
/// and wakes one futex waiter there: how a thread library's join learns that the thread is
/// gone (Linux's `mm_release`). A bad address is ignored, as there.
fn release_tid() {
    let (addr, robust_list) = sched::take_exit_addresses();
    crate::sched::futex::release_robust_list(robust_list);
    if addr == 0 {
        return;
    }
    if let Some(space) = sched::current_address_space()
        && space.write(addr, &0u32.to_le_bytes()).is_ok()
    {
        crate::sched::futex::wake(&space, addr, 1, !0);
    }
}
