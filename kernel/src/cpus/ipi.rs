//! Inter-processor interrupts (Linux's `smp_call_function_single` and `stop_other_cpus`,
//! kernel/smp.c and arch/x86/kernel/smp.c): [`call_on`] has another CPU run a function and
//! waits for its answer, and [`stop_others`] halts every other CPU when one panics.
//!
//! Apart from the bring-up (`cpus`) because the interrupt's handler (`trap`) reaches it:
//! it names no arch entry, so the entries close no import cycle.

use crate::arch::apic;
use crate::percpu::this_cpu;
use crate::sync::cross_call;
use alloc::vec::Vec;
use spin::Once;

/// How long a CPU has to run a function another asked of it (virtual time).
const CALL_WAIT_NS: u64 = 10_000_000;

/// The APIC ids of the CPUs that came up, by number (set once, after the APs start).
static ONLINE: Once<Vec<Option<u8>>> = Once::new();

/// The CPUs that came up: `online[n]` is CPU `n`'s APIC id, `None` if it did not.
pub(super) fn set_online(online: Vec<Option<u8>>) {
    ONLINE.call_once(|| online);
}

/// The CPUs online, by number, with their APIC ids (the boot CPU alone, APIC id 0, until
/// the APs have started, and with `smp=1`).
pub fn online() -> Vec<(usize, u8)> {
    match ONLINE.get() {
        Some(all) => all
            .iter()
            .enumerate()
            .filter_map(|(cpu, id)| id.map(|id| (cpu, id)))
            .collect(),
        None => alloc::vec![(0, 0)],
    }
}

/// How many CPUs are online ([`online`]'s length, without its list).
pub fn online_count() -> usize {
    ONLINE.get().map_or(1, |all| all.iter().flatten().count())
}

/// Has CPU `cpu` run `function` (from its call-function IPI's handler, or wherever it
/// waits with interrupts off: `sync::cross_call`) and returns what it answered; `None` if
/// it is not online or did not answer in time. Not for the running CPU itself. A CPU that
/// did not answer must not be asked again: its late answer would be taken for the next
/// call's (the bring-up counts it out, and the other callers end the run).
pub fn call_on(cpu: usize, function: fn() -> u64) -> Option<u64> {
    let apic_id = (*ONLINE.get()?.get(cpu)?)?;
    call_at(cpu, apic_id, function)
}

/// [`call_on`] each CPU of `cpus` (one bit each) in turn, waiting for each answer; the
/// first CPU that did not answer is the error.
pub fn call_on_each(cpus: u64, function: fn() -> u64) -> Result<(), usize> {
    let mut left = cpus;
    while left != 0 {
        let cpu = left.trailing_zeros() as usize;
        left &= left - 1;
        call_on(cpu, function).ok_or(cpu)?;
    }
    Ok(())
}

/// [`call_on`] CPU `cpu` at APIC id `apic_id`, before the CPUs online are known.
pub(super) fn call_at(cpu: usize, apic_id: u8, function: fn() -> u64) -> Option<u64> {
    cross_call::post(cpu, function);
    apic::send_fixed(apic_id, apic::CALL_FUNCTION_VECTOR);
    answer_of(cpu, CALL_WAIT_NS)
}

/// Leaves `function` for CPU `cpu` and sends it the IPI, without waiting: [`answer_of`]
/// waits. `None` if the CPU is not online.
pub fn start_on(cpu: usize, function: fn() -> u64) -> Option<()> {
    let apic_id = (*ONLINE.get()?.get(cpu)?)?;
    cross_call::post(cpu, function);
    apic::send_fixed(apic_id, apic::CALL_FUNCTION_VECTOR);
    Some(())
}

/// Waits up to `wait_ns` (virtual time) for CPU `cpu`'s answer to the function
/// [`start_on`] left it; `None` if it did not answer, and the function is withdrawn.
pub fn answer_of(cpu: usize, wait_ns: u64) -> Option<u64> {
    let deadline = crate::time::clock::now() + wait_ns;
    cross_call::answer_of(cpu, || crate::time::clock::now() > deadline)
}

/// The call-function IPI's work: runs the function left for this CPU, if any.
pub fn run_call() {
    cross_call::serve();
}

/// Sends CPU `cpu` the reschedule IPI (Linux's `smp_send_reschedule`): its runqueue asks
/// for a switch, or its running task has something to do before it returns to ring 3.
pub fn send_reschedule(cpu: usize) {
    if let Some(&Some(apic_id)) = ONLINE.get().and_then(|online| online.get(cpu)) {
        apic::send_fixed(apic_id, apic::RESCHEDULE_VECTOR);
    }
}

/// Stops every other online CPU (a panic's first act, so that one report is printed and
/// nothing runs on beside it): an NMI each, which a CPU takes even with interrupts off.
pub fn stop_others() {
    let Some(online) = ONLINE.get() else { return };
    let me = this_cpu().index();
    for (cpu, apic_id) in online.iter().enumerate() {
        if let (true, Some(apic_id)) = (cpu != me, apic_id) {
            apic::send_stop(*apic_id);
        }
    }
}
