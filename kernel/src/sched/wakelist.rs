//! Wake-ups queued on their CPU (Linux 3.0's wake list: `ttwu_queue_wakelist` on the
//! waker's side, `sched_ttwu_pending` on the wakee's, and 6.1's `ttwu_queue_cond` for
//! when): with the feature `TTWU_QUEUE` on, a waker that would have to take another CPU's
//! runqueue lock leaves the wake-up on that CPU's list instead and sends it the reschedule
//! IPI; the CPU finishes the wake-up itself, under its own runqueue's lock, from the IPI's
//! handler. The waker touches no other runqueue, and the runqueue's data stays in its own
//! CPU's cache — why Linux queues when the two CPUs share no cache, or when the wakee's CPU
//! is idle and has nothing better to do than the waker's work.
//!
//! What the waker needs to know without the wakee's runqueue: that the task is allowed
//! that one CPU alone (`AFFINITY_HINTS`, a copy of each task's affinity kept beside the
//! scheduler's and read without a lock — Linux reads `p->cpus_ptr` under the task's own
//! lock, which cfslab does not have yet), and whether the CPU runs its idle task. Either
//! may be out of date by the time the wake-up is finished. A task allowed several CPUs needs
//! the era's placement first, which reads the load of the CPUs its era looks at: it wakes
//! where that places it,
//! under the runqueue locks it touches (`ttwu`), not through a list. Everything the waker
//! read is read again under the runqueue's lock when the wake-up is finished
//! (`sleep::finish_queued_wakeups`); a wake-up that no longer fits — the task moved, its
//! affinity changed — takes the scheduler's lock there, as any other does.
//!
//! A CPU going offline closes its list as it dies and hands what is left back (`close`),
//! to be woken elsewhere; a waker then takes the lock as without the feature.
//!
//! The `sched_waking` event of a queued wake-up is written by the CPU that finishes it, as
//! it finishes it (the wakee's name is on that runqueue, which the waker does not lock): on
//! that CPU's line, at that time — where Linux writes `sched_wakeup`.

use crate::percpu::{self, this_cpu};
use crate::sync::{Rank, SpinLock};
use crate::task::{Slot, TaskRef};
use core::sync::atomic::AtomicBool;
use core::sync::atomic::AtomicU64;
use core::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use sched::Wakeup;
use sched::smp::topology::Topology;

const CPUS: usize = bootopts::MAX_CPUS as usize;

/// Wake-ups a list holds; past that a waker takes the runqueue's lock (a list never waits
/// long: the first entry's IPI is already on its way).
pub(super) const CAPACITY: usize = 16;

/// The slots whose affinity is copied for wakers: more than the tasks alive at once
/// (`proc::create::MAX_PROCESSES` user tasks, and the kernel's). A task in a slot past it
/// wakes with the runqueue's lock, as without the feature.
const HINTED_SLOTS: usize = 1024;

/// A wake-up left for a CPU: the task, and the wake-up as its waker made it.
#[derive(Clone, Copy)]
pub(super) struct Queued {
    pub(super) task: TaskRef,
    pub(super) wakeup: Wakeup,
}

/// One CPU's list (Linux's `rq->wake_list`, an `llist` there; a short array under a lock
/// here, which reads more plainly and costs as little at these lengths).
struct WakeList {
    queued: [Option<Queued>; CAPACITY],
    len: usize,
    /// The CPU is offline: nothing more is left for it.
    closed: bool,
}

impl WakeList {
    const EMPTY: WakeList = WakeList {
        queued: [None; CAPACITY],
        len: 0,
        closed: false,
    };

    /// Takes every wake-up, leaving the list empty.
    fn take(&mut self) -> [Option<Queued>; CAPACITY] {
        self.len = 0;
        core::mem::replace(&mut self.queued, [None; CAPACITY])
    }
}

static LISTS: [SpinLock<WakeList>; CPUS] =
    [const { SpinLock::new(Rank::WakeList, WakeList::EMPTY) }; CPUS];

/// CPU by CPU, whether its list holds a wake-up (Linux's `rq->ttwu_pending`): set with
/// each, before any IPI, and cleared as the list is taken, both under the list's lock, so that the reschedule IPIs that bring no wake-up (a preemption, a kill) do not
/// take the lock to find the list empty.
static PENDING: [AtomicBool; CPUS] = [const { AtomicBool::new(false) }; CPUS];

/// `TTWU_QUEUE`: whether wakers queue (set at boot from the policy's features, and by a
/// write to `sched_features`).
static ENABLED: AtomicBool = AtomicBool::new(false);

/// CPU by CPU, the CPUs sharing its last-level cache, one bit each (a package's, as QEMU
/// describes its caches): Linux's `cpus_share_cache`.
static SHARES_CACHE: [AtomicU64; CPUS] = [const { AtomicU64::new(0) }; CPUS];

/// Slot by slot, the affinity of the task in it (0 while unknown: never queued).
static AFFINITY_HINTS: [AtomicU64; HINTED_SLOTS] = [const { AtomicU64::new(0) }; HINTED_SLOTS];

/// The machine's caches, and whether the policy starts with `TTWU_QUEUE` on.
pub(super) fn init(topology: &Topology, enabled: bool) {
    for (cpu, shares) in SHARES_CACHE.iter().enumerate().take(topology.len()) {
        shares.store(topology.package_cpus(cpu).bits(), Relaxed);
    }
    set_enabled(enabled);
}

/// Turns the feature on or off (`knobs::set_feature`).
pub(super) fn set_enabled(on: bool) {
    ENABLED.store(on, Relaxed);
}

/// The task in `slot` may run on the CPUs in `affinity` (written wherever the scheduler
/// writes a task's affinity, and as a slot is given to a new task).
pub(super) fn note_affinity(slot: Slot, affinity: u64) {
    if let Some(hint) = AFFINITY_HINTS.get(slot.index()) {
        hint.store(affinity, Relaxed);
    }
}

/// Leaves the wake-up of `task` on its CPU's list, if the feature is on and the wake-up
/// belongs there (see the module's docs); true if it did. The first wake-up on an empty
/// list sends the IPI: the later ones find it on its way (Linux's `llist_add` answer).
pub(super) fn queue(task: TaskRef, wakeup: Wakeup) -> bool {
    if !ENABLED.load(Relaxed) {
        return false;
    }
    let (here, there) = (this_cpu().index(), task.cpu);
    if there == here {
        return false;
    }
    let online = super::state::ONLINE.load(Relaxed);
    let pinned_there = AFFINITY_HINTS
        .get(task.slot.index())
        .is_some_and(|hint| hint.load(Relaxed) & online == 1 << there);
    if !pinned_there {
        return false;
    }
    let shares_cache = SHARES_CACHE[here].load(Relaxed) & 1 << there != 0;
    if shares_cache && !runs_its_idle_task(there) {
        return false;
    }
    let first = {
        let mut list = LISTS[there].lock();
        if list.closed || list.len == CAPACITY {
            return false;
        }
        let len = list.len;
        list.queued[len] = Some(Queued { task, wakeup });
        list.len += 1;
        PENDING[there].store(true, Release);
        len == 0
    };
    if first {
        crate::cpus::ipi::send_reschedule(there);
    }
    true
}

/// Whether the task `task` names is allowed several of the online CPUs, by the copy of its
/// affinity (read without a lock, so perhaps out of date: a waker reads it only to choose
/// which way to try first, and each way checks under its locks).
pub(super) fn allowed_several(task: TaskRef) -> bool {
    let online = super::state::ONLINE.load(Relaxed);
    AFFINITY_HINTS
        .get(task.slot.index())
        .is_some_and(|hint| (hint.load(Relaxed) & online).count_ones() > 1)
}

/// Whether CPU `cpu` runs its idle task (Linux reads `nr_running`: nothing queued there).
fn runs_its_idle_task(cpu: usize) -> bool {
    percpu::cpu(cpu).is_some_and(|area| area.current_slot() == super::table::idle_slot(cpu))
}

/// The wake-ups other CPUs left this one, taken from its list (`None` if it holds none:
/// the reschedule IPI came for something else). The caller finishes them
/// (`sleep::finish_queued_wakeups`).
pub(super) fn take_queued() -> Option<[Option<Queued>; CAPACITY]> {
    let cpu = this_cpu().index();
    PENDING[cpu].load(Acquire).then(|| take(cpu))
}

/// CPU `cpu` is dead: its list takes nothing more, and what it held is handed back for the
/// scheduler to wake elsewhere (this runs on the dying CPU, whose IPIs would no longer be
/// answered).
pub(super) fn close(cpu: usize) -> [Option<Queued>; CAPACITY] {
    LISTS[cpu].lock().closed = true;
    take(cpu)
}

/// Takes CPU `cpu`'s wake-ups, leaving its list empty.
fn take(cpu: usize) -> [Option<Queued>; CAPACITY] {
    let mut list = LISTS[cpu].lock();
    PENDING[cpu].store(false, Relaxed);
    list.take()
}

/// CPU `cpu` is online again: wakers may leave it wake-ups.
pub(super) fn open(cpu: usize) {
    LISTS[cpu].lock().closed = false;
}
