//! The running task, readable without the scheduler's lock: Linux's per-CPU `current`, kept
//! in the CPU's [`PerCpu`](crate::percpu::PerCpu) (the switch writes it). System calls ask
//! "who am I?" on every call (`getpid`, the kill check at their end): a load instead of a
//! lock round trip. Its address space and open files, which nearly every system call needs,
//! come the same way. And whether any task is marked killed, so that the kill check usually
//! needs no lock either.

use crate::percpu::this_cpu;
use crate::task::{TaskId, TaskRef};
use crate::user::address_space::AddressSpace;
use crate::user::files::{FileTable, Files};
use alloc::sync::Arc;
use core::ptr::null;
use core::sync::atomic::{AtomicUsize, Ordering};

/// Tasks marked killed that have not exited yet: while there are none, a system call's
/// end need not look at the running task's mark.
static KILLS_PENDING: AtomicUsize = AtomicUsize::new(0);

/// The running task's id: a new task can read its own id as soon as it runs.
pub fn current() -> TaskId {
    this_cpu().current()
}

/// The running task as its wakers keep it (its id, slot and CPU).
pub fn current_ref() -> TaskRef {
    let cpu = this_cpu();
    TaskRef {
        id: cpu.current(),
        slot: cpu.current_slot(),
        cpu: cpu.index(),
    }
}

/// The running task's process id: its leader's id (its own for a kernel thread).
pub fn current_process() -> TaskId {
    this_cpu().current_process()
}

/// The running task's address space is now `space` (the switch, `execve`, exit). This and
/// [`set_current_files`] are the only writers of the CPU's untyped pointers, which is what
/// lets the readers below cast them back.
/// Each address space knows the CPUs running it (`cpus::loaded_on`), for TLB shootdowns:
/// this CPU leaves the old one's and joins the new one's.
#[inline(always)]
pub(in crate::sched) fn set_current_space(space: Option<&Arc<AddressSpace>>) {
    let cpu = this_cpu();
    let old = cpu.space().cast::<AddressSpace>();
    let new = space.map_or(null(), Arc::as_ptr);
    if old != new {
        // SAFETY: a non-null pointer here is the running task's `Arc<AddressSpace>`, which
        // it still holds (a switch's previous task, an execve's old program, an exit's
        // space about to be dropped: each caller drops it only after this).
        if let Some(old) = unsafe { old.as_ref() } {
            old.loaded_on.set(cpu.index(), false);
        }
        if let Some(new) = space {
            new.loaded_on.set(cpu.index(), true);
        }
    }
    cpu.set_space(new.cast());
}

/// The running task's open files are now `files` (the switch, exit).
#[inline(always)]
pub(in crate::sched) fn set_current_files(files: Option<&Files>) {
    this_cpu().set_files(files.map_or(null(), |f| Arc::as_ptr(f).cast()));
}

/// The running process's address space (`None` in a kernel thread).
pub fn current_address_space() -> Option<Arc<AddressSpace>> {
    let space = this_cpu().space().cast::<AddressSpace>();
    // SAFETY: a non-null pointer is the running task's own `Arc<AddressSpace>`
    // (`Task::address_space`), set by the switch as it picked this task
    // ([`set_current_space`], the only writer, stores nothing else). Only the task itself
    // replaces or drops that `Arc` (`execve`: `proc::process::replace_program`; exit:
    // `proc::lifecycle::release_resources`), and it rewrites the pointer first, under the
    // scheduler's lock. So while this task runs, the `Arc` it holds keeps the space alive,
    // and one more strong count makes the returned `Arc` an owner of its own.
    (!space.is_null()).then(|| unsafe {
        Arc::increment_strong_count(space);
        Arc::from_raw(space)
    })
}

/// [`current_address_space`] lent to `f` for the call, without counting a reference (two
/// atomic operations less): for the signal paths, which run on every handler.
///
/// # Safety
/// `f` must neither replace nor drop the running task's address space (no `execve`, no exit
/// of the task): the `Arc` the task holds is what keeps the borrowed space alive.
#[inline(always)]
pub unsafe fn with_current_address_space<R>(f: impl FnOnce(&AddressSpace) -> R) -> Option<R> {
    let space = this_cpu().space().cast::<AddressSpace>();
    // SAFETY: as in `current_address_space`, a non-null pointer is the running task's own
    // `Arc<AddressSpace>`, which only the task itself drops or replaces; the caller vouches
    // that `f` does neither, so the space outlives the borrow.
    let space = unsafe { space.as_ref() }?;
    Some(f(space))
}

/// The running process's open files (`None` in a kernel thread, and in a process ending).
pub fn current_files() -> Option<Files> {
    let files = this_cpu().files().cast::<FileTable>();
    // SAFETY: as for the address space above: the running task's own `Arc` (`Task::files`),
    // which only it drops (`proc::lifecycle::release_files`), after clearing the pointer.
    (!files.is_null()).then(|| unsafe {
        Arc::increment_strong_count(files);
        Arc::from_raw(files)
    })
}

/// A task was marked killed (`kill_task`), or a marked task exited.
pub(super) fn kill_marked() {
    KILLS_PENDING.fetch_add(1, Ordering::Relaxed);
}
pub(super) fn killed_task_exited() {
    KILLS_PENDING.fetch_sub(1, Ordering::Relaxed);
}

/// Whether any task is marked killed (if not, the running one is not).
#[inline]
pub fn kills_pending() -> bool {
    KILLS_PENDING.load(Ordering::Relaxed) != 0
}

/// The signal the running task was killed with, if any. Every system call asks at its end:
/// while no task at all is marked (nearly always), the answer needs no lock.
pub fn current_killed() -> Option<u8> {
    if !kills_pending() {
        return None;
    }
    super::state::with_sched(|s| s.current_task().killed)
}
