//! The running task, readable without the scheduler's lock: Linux's per-CPU `current`, kept
//! in the CPU's [`PerCpu`](crate::percpu::PerCpu) (the switch writes it). System calls ask
//! "who am I?" on every call (`getpid`, the kill check at their end): a load instead of a
//! lock round trip. Its address space and open files, which nearly every system call needs,
//! come the same way, from a per-CPU table of typed pointers kept here ([`RUNNING`]:
//! `PerCpu` is below the types they name). And whether any task is marked killed, so that
//! the kill check usually needs no lock either.

use crate::percpu::this_cpu;
use crate::task::{TaskId, TaskRef};
use crate::user::address_space::AddressSpace;
use crate::user::files::{FileTable, Files};
use alloc::sync::Arc;
use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// What one CPU's running task holds that its system calls need: its address space and its
/// open files, as the pointers of the `Arc`s the task itself holds (null: none, a kernel
/// thread). Written only here, by the switch and the calls that replace them
/// ([`set_current_space_and_files`] and the like), and read only by the CPU itself: which
/// is what makes the readers below sound.
struct Running {
    space: AtomicPtr<AddressSpace>,
    files: AtomicPtr<FileTable>,
}

/// Each CPU's [`Running`], by CPU index.
static RUNNING: [Running; bootopts::MAX_CPUS as usize] = [const {
    Running {
        space: AtomicPtr::new(null_mut()),
        files: AtomicPtr::new(null_mut()),
    }
}; bootopts::MAX_CPUS as usize];

/// This CPU's [`Running`].
#[inline(always)]
fn running() -> &'static Running {
    &RUNNING[this_cpu().index()]
}

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

/// The running task's address space is now `space` (`execve`, exit).
#[inline(always)]
pub(in crate::sched) fn set_current_space(space: Option<&Arc<AddressSpace>>) {
    let cpu = this_cpu().index();
    replace_space(&RUNNING[cpu], cpu, space);
}

/// The running task's open files are now `files` (exit).
#[inline(always)]
pub(in crate::sched) fn set_current_files(files: Option<&Files>) {
    replace_files(running(), files);
}

/// The switch's change of both, with one look at this CPU's [`Running`].
#[inline(always)]
pub(in crate::sched) fn set_current_space_and_files(
    space: Option<&Arc<AddressSpace>>,
    files: Option<&Files>,
) {
    let cpu = this_cpu().index();
    let running = &RUNNING[cpu];
    replace_space(running, cpu, space);
    replace_files(running, files);
}

/// CPU `cpu`'s running task's address space becomes `space`. Each address space knows the
/// CPUs running it (`cpus::loaded_on`), for TLB shootdowns: this CPU leaves the old one's
/// and joins the new one's.
#[inline(always)]
fn replace_space(running: &Running, cpu: usize, space: Option<&Arc<AddressSpace>>) {
    let old = running.space.load(Ordering::Relaxed);
    let new = space.map_or(null_mut(), |s| Arc::as_ptr(s).cast_mut());
    if old != new {
        // SAFETY: a non-null pointer here is the running task's `Arc<AddressSpace>`, which
        // it still holds (a switch's previous task, an execve's old program, an exit's
        // space about to be dropped: each caller drops it only after this).
        if let Some(old) = unsafe { old.as_ref() } {
            old.loaded_on.set(cpu, false);
        }
        if let Some(new) = space {
            new.loaded_on.set(cpu, true);
        }
    }
    running.space.store(new, Ordering::Relaxed);
}

#[inline(always)]
fn replace_files(running: &Running, files: Option<&Files>) {
    let files = files.map_or(null_mut(), |f| Arc::as_ptr(f).cast_mut());
    running.files.store(files, Ordering::Relaxed);
}

/// The running process's address space (`None` in a kernel thread).
pub fn current_address_space() -> Option<Arc<AddressSpace>> {
    let space = running().space.load(Ordering::Relaxed);
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
    let space = running().space.load(Ordering::Relaxed);
    // SAFETY: as in `current_address_space`, a non-null pointer is the running task's own
    // `Arc<AddressSpace>`, which only the task itself drops or replaces; the caller vouches
    // that `f` does neither, so the space outlives the borrow.
    let space = unsafe { space.as_ref() }?;
    Some(f(space))
}

/// The running process's open files (`None` in a kernel thread, and in a process ending).
pub fn current_files() -> Option<Files> {
    let files = running().files.load(Ordering::Relaxed);
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
