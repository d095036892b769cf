//! CPU hotplug: taking a CPU offline and bringing it back, as a root write of `0` or `1` to
//! `/sys/devices/system/cpu/cpuN/online` asks (Linux's `cpu_down` and `cpu_up`,
//! kernel/cpu.c, with the scheduler's steps `sched_cpu_deactivate`, `sched_cpu_dying` and
//! `sched_cpu_activate`, kernel/sched/core.c; 6.1).
//!
//! A CPU goes through three states ([`CpuState`]). Going down, under one hold of the
//! scheduler's lock ([`Scheduler::take_offline`]), it leaves the online set, every domain
//! is rebuilt over the CPUs left (`sched::smp::domains::restrict_to`), and its tasks leave:
//! those waiting move at once, the running one is marked to move and moved by the CPU's
//! stopper (`stopper`), each to the CPU `select_fallback_rq` picks — its node's
//! first allowed CPU, else any allowed one, else its affinity is widened to every CPU and
//! the console says `process N (NAME) no longer affine to cpuM`, as Linux's does. A task
//! asleep on it moves when it wakes (the same rule, at `try_to_wake_up`). The CPU, left
//! with nothing to run, reaches its idle loop, stops its tick and says it is
//! [`CpuState::Dead`]; the writer, asleep until then, moves the timers it had armed onto its
//! own CPU (`hrtimers_cpu_dying`) and returns. A dead CPU stays halted in its idle loop:
//! no task is placed on it, it has no tick, and it answers only IPIs (Linux parks it deeper,
//! in `play_dead`, and wakes it with INIT and STARTUP again). Its APIC may still fire once
//! for a timer that has moved, and finds nothing to do; a timer an interrupt handler
//! re-arms there in the instant the CPU dies stays and fires there.
//!
//! Coming back, it must answer an IPI (else EIO); it rejoins the online set and the domains
//! are rebuilt with it. A rebuild after a CPU came back is where Linux 4.1 lost its NUMA
//! levels (`build_after_hotplug`, the Wasted Cores paper's Missing Scheduling Domains): once
//! that has happened, with `HOTPLUG_KEEPS_NUMA` off, every later rebuild lacks them too,
//! as 4.1's topology table stayed as the CPU's return left it.
//!
//! CPU 0 cannot go offline (EBUSY): it keeps the machine's clock, the console and the
//! invariant checker's tick. Linux on x86 gives `cpu0` no `online` file at all (unless
//! booted with `cpu0_hotplug`, before 6.5), and refuses the last online CPU with EBUSY —
//! which on cfslab, as on such a Linux, can only be CPU 0.

use super::{Scheduler, WaitQueue, with_sched};
use crate::task::{Slot, State, pid_of};
use core::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use sched::smp::cpuset::CpuSet;

/// Where a CPU is in hotplug.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum CpuState {
    /// Running tasks (or able to): the scheduler places tasks on it.
    Online = 0,
    /// Leaving: no task is placed on it, and it says [`CpuState::Dead`] from its idle loop
    /// once it has nothing left to run.
    Dying = 1,
    /// Offline: halted in its idle loop, its tick stopped and its timers moved away.
    Dead = 2,
}

/// Why a CPU did not change state (the errno a write to its `online` file gets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HotplugError {
    /// No such CPU came up at boot (ENODEV: there would be no file to write).
    NoSuchCpu,
    /// It is the last online CPU, or CPU 0 (EBUSY).
    Busy,
    /// It did not answer an IPI on its way back (EIO, Linux's "CPU failed to come up").
    NoAnswer,
}

/// Each CPU's [`CpuState`], by number (read without the scheduler's lock by the CPU's own
/// idle loop).
static STATES: [AtomicU8; bootopts::MAX_CPUS as usize] =
    [const { AtomicU8::new(CpuState::Online as u8) }; bootopts::MAX_CPUS as usize];

/// The writers waiting for a CPU to die.
static DEATHS: WaitQueue = WaitQueue::new();

/// One hotplug operation at a time (Linux's `cpu_hotplug_lock`, taken for writing): a CPU
/// brought back while another writer still waits for it to die would leave that writer
/// waiting for ever. Held across sleeps, so a flag and a wait queue, not a spin lock.
static OPERATION: AtomicBool = AtomicBool::new(false);
static WAITING_TO_OPERATE: WaitQueue = WaitQueue::new();

/// The hotplug operation lock, held: released (and the next writer woken) when dropped.
struct Operating;

impl Operating {
    fn begin() -> Operating {
        let take = || {
            OPERATION
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        };
        WAITING_TO_OPERATE.wait_until(take);
        Operating
    }
}

impl Drop for Operating {
    fn drop(&mut self) {
        OPERATION.store(false, Ordering::Release);
        WAITING_TO_OPERATE.wake_one();
    }
}

/// CPU `cpu`'s state.
pub fn state(cpu: usize) -> CpuState {
    match STATES[cpu].load(Ordering::Acquire) {
        0 => CpuState::Online,
        1 => CpuState::Dying,
        _ => CpuState::Dead,
    }
}

fn set_state(cpu: usize, state: CpuState) {
    STATES[cpu].store(state as u8, Ordering::Release);
}

/// The CPUs present (those that came up at boot) and those online, one bit each.
pub fn cpu_masks() -> (u64, u64) {
    with_sched(|s| (s.present_mask, s.online_mask))
}

/// Takes CPU `cpu` offline (see the module's docs); it is done when this returns. A CPU
/// already offline is left as it is.
pub fn cpu_down(cpu: usize) -> Result<(), HotplugError> {
    let _one_at_a_time = Operating::begin();
    let dying = with_sched(|s| s.take_offline(cpu))?;
    if dying {
        // The CPU may be halted idle already: the reschedule IPI has it look again.
        crate::cpus::ipi::send_reschedule(cpu);
        DEATHS.wait_until(|| state(cpu) == CpuState::Dead);
        crate::time::hrtimer::take_timers_of(cpu);
    }
    Ok(())
}

/// Brings CPU `cpu` back online (see the module's docs). A CPU online already is left as it
/// is.
pub fn cpu_up(cpu: usize) -> Result<(), HotplugError> {
    let _one_at_a_time = Operating::begin();
    if !with_sched(|s| s.is_present(cpu)) {
        return Err(HotplugError::NoSuchCpu);
    }
    if state(cpu) == CpuState::Online {
        return Ok(());
    }
    // A dead CPU halts with interrupts on: one that runs a function asked of it is there.
    if crate::cpus::ipi::call_on(cpu, || 1) != Some(1) {
        return Err(HotplugError::NoAnswer);
    }
    with_sched(|s| s.bring_online(cpu));
    Ok(())
}

/// The idle loop of CPU `cpu`, with interrupts off and nothing to run: a dying CPU says it
/// is dead now (its tick stopped by the caller), and wakes the writer waiting for it.
pub fn idle_check(cpu: usize) {
    if state(cpu) == CpuState::Dying && with_sched(|s| s.runnable_on(cpu) == 0) {
        set_state(cpu, CpuState::Dead);
        let left = super::wakelist::close(cpu);
        super::sleep::wake_elsewhere(&left, crate::time::clock::now());
        DEATHS.wake_all();
    }
}

impl Scheduler {
    /// `sched_cpu_deactivate` and the moves of `sched_cpu_dying`, in one hold of the lock:
    /// true if `cpu` is dying now (false if it was offline already).
    fn take_offline(&mut self, cpu: usize) -> Result<bool, HotplugError> {
        if !self.is_present(cpu) {
            return Err(HotplugError::NoSuchCpu);
        }
        if self.online_mask & 1 << cpu == 0 {
            return Ok(false);
        }
        if cpu == 0 || self.online.len() == 1 {
            return Err(HotplugError::Busy);
        }
        // The dying CPU's runqueue is held from here on (the lender keeps it to the end): a
        // newly-idle pass, which holds runqueue locks and not this lock, reads the CPUs
        // online each time it takes its own CPU's runqueue, and so either pulls before the
        // CPU leaves them or sees it gone and pulls nothing onto it (`balance::Lent`).
        let _ = &self.rqs[cpu];
        set_state(cpu, CpuState::Dying);
        self.online.retain(|&c| c != cpu);
        self.online_mask &= !(1 << cpu);
        super::state::ONLINE.store(self.online_mask, core::sync::atomic::Ordering::Relaxed);
        self.rebuild_domains(false);
        let now = crate::time::clock::now();
        let slots: alloc::vec::Vec<Slot> = self.slots.iter().flatten().map(|t| t.slot).collect();
        for slot in slots {
            let (pending_here, on) = (self.context(slot).move_to == Some(cpu), self.cpu_of(slot));
            if (on != cpu && !pending_here) || !self.alive(slot) || self.is_stopper(slot) {
                continue;
            }
            // A move elsewhere that was to end here is called off, as Linux's
            // `__migrate_task` leaves a task whose destination went inactive where it is.
            let stays = on != cpu && self.context(slot).affinity & 1 << on != 0;
            let to = (!stays).then(|| self.fallback_cpu(slot, cpu));
            self.context_mut(slot).move_to = to;
            if self.rqs[cpu].current() == slot {
                self.stop_to_migrate(slot);
            } else if self.state(slot) == State::Runnable {
                let _ = self.finish_move(slot, ::sched::Wakeup::default(), now);
            }
        }
        Ok(true)
    }

    /// `sched_cpu_activate`: `cpu` is online again, and every CPU's domains are rebuilt.
    fn bring_online(&mut self, cpu: usize) {
        set_state(cpu, CpuState::Online);
        super::wakelist::open(cpu);
        self.online.push(cpu);
        self.online.sort_unstable();
        self.online_mask |= 1 << cpu;
        super::state::ONLINE.store(self.online_mask, core::sync::atomic::Ordering::Relaxed);
        self.rebuild_domains(true);
    }

    /// Whether `cpu` came up at boot (and so may be taken offline and back).
    fn is_present(&self, cpu: usize) -> bool {
        cpu < u64::BITS as usize && self.present_mask & 1 << cpu != 0
    }

    /// Whether `cpu` is online (tasks may be placed on it).
    pub(super) fn is_online(&self, cpu: usize) -> bool {
        self.online_mask & 1 << cpu != 0
    }

    /// `select_fallback_rq`: where the task in `slot` goes when `cpu`, its CPU or the one
    /// chosen for it, cannot take it — the first allowed online CPU of `cpu`'s node, else
    /// the first allowed online CPU, else (it allows none) the first online CPU, its
    /// affinity widened to every CPU.
    pub(super) fn fallback_cpu(&mut self, slot: Slot, cpu: usize) -> usize {
        let allowed = CpuSet::from_bits(self.context(slot).affinity & self.online_mask);
        let near = (self.node_cpus_of(cpu) & allowed).lowest();
        if let Some(to) = near.or_else(|| allowed.lowest()) {
            return to;
        }
        let context = self.context_mut(slot);
        context.affinity = u64::MAX;
        super::wakelist::note_affinity(slot, u64::MAX);
        let process = context.address_space.is_some();
        let task = self.task_ref(slot);
        if process {
            let (pid, name) = (pid_of(task.id), &task.name);
            crate::println!("process {pid} ({name}) no longer affine to cpu{cpu}");
        }
        self.online[0]
    }
}
