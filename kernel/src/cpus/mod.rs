//! The machine's CPUs: how many the firmware describes (ACPI's MADT), checked against the
//! `smp=` boot option, and the application processors (APs) started (Linux's `smp_init`
//! and `do_boot_cpu`, arch/x86/kernel/smpboot.c, in spirit).
//!
//! What this does: for each AP, the boot CPU writes the trampoline (`arch::ap_start`) with a
//! stack of the AP's own, sends INIT, waits 10 ms, sends a STARTUP IPI, and waits for the AP
//! to say it runs. An AP that does not answer within [`ANSWER_WAIT_NS`] is reported by
//! number and the run goes on with the others.
//!
//! Inter-processor interrupts are [`ipi`]'s; the boot checks each AP with one.
//!
//! A started AP takes its own state (its GS base, `percpu`), GDT, TSS, IDT, SYSCALL's
//! registers, the FPU's set-up and local APIC (`arch::init_ap`), answers two IPIs — its
//! APIC id, and a fingerprint of its registers for ring 3, which must be the boot CPU's —
//! then becomes its own idle task (`sched::setup::ap_idle_loop`), halted with its tick
//! stopped until a task is placed on it: under `-icount` a halted CPU costs no
//! instructions. The TLB shootdown between CPUs is [`tlb`]'s, over an address space's
//! mask of the CPUs running it ([`loaded_on`]).

use crate::arch::ap_start::{self, StartParams, TRAMPOLINE};
use crate::arch::apic;
use crate::arch::paging::PhysAddr;
use crate::percpu::this_cpu;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

pub mod contention;
pub mod ipi;
pub mod loaded_on;
pub mod tlb;
pub mod topology;

/// How long an AP has to answer after its STARTUP IPI (virtual time).
const ANSWER_WAIT_NS: u64 = 100_000_000;
/// The wait between INIT and STARTUP the MP specification asks for.
const INIT_WAIT_NS: u64 = 10_000_000;

/// APs that have reached the kernel, by number (bit `n` for CPU `n`).
static ANSWERED: AtomicUsize = AtomicUsize::new(0);
/// APs that have left the trampoline for the kernel, by number: set before an AP takes any
/// lock, so that one that arrived is never sent an INIT, which could stop it holding one.
static ARRIVED: AtomicUsize = AtomicUsize::new(0);

/// The CPUs as the boot found them.
pub struct CpuReport {
    /// The local APIC ids of the CPUs, in the MADT's order; CPU `n` is the `n`th (the boot
    /// CPU is CPU 0 whatever its place in the table).
    pub apic_ids: Vec<u8>,
    /// The CPUs counted out, by number: they did not answer, or not with the boot CPU's
    /// registers for ring 3.
    pub silent: Vec<usize>,
    /// With more than one CPU online: the check that they exclude each other.
    pub contention: Option<contention::Contention>,
}

impl CpuReport {
    /// CPUs running: the boot CPU and the APs that answered.
    pub fn online(&self) -> usize {
        self.apic_ids.len() - self.silent.len()
    }

    /// The CPUs running, by number, in order.
    pub fn online_cpus(&self) -> Vec<usize> {
        let all = 0..self.apic_ids.len();
        all.filter(|n| !self.silent.contains(n)).collect()
    }
}

/// Why the boot cannot go on with the CPUs.
pub enum BringUpError {
    /// `smp=` says one count, the firmware another.
    Mismatch { asked: u32, found: usize },
    /// The MADT lists an APIC id twice, or not the boot CPU's: starting CPUs from it could
    /// send the boot CPU an INIT.
    BadTable { apic_ids: Vec<u8>, boot: u8 },
}

/// Reads the CPUs from the MADT (`rsdp`: the RSDP the bootloader found), checks that there
/// are `smp` of them, and starts the APs. With `smp=1` a machine of one CPU needs no tables:
/// a missing or unreadable MADT counts as one CPU then.
pub fn bring_up(smp: u32, rsdp: Option<u64>) -> Result<CpuReport, BringUpError> {
    let mapped = |page: u64| {
        crate::arch::paging::VirtAddr::try_new(page)
            .ok()
            .and_then(crate::mm::translate)
            .is_some()
    };
    // SAFETY: the bootloader maps physical memory at the offset `mm` reports, wherever `mm`
    // finds a page mapped.
    let listed =
        unsafe { crate::arch::acpi::processors(rsdp, crate::mm::physical_offset(), &mapped) };
    let mut apic_ids = match listed {
        Ok(ids) if ids.len() == smp as usize => ids,
        // One CPU needs no tables: the boot CPU is APIC 0 on every PC.
        Ok(_) | Err(_) if smp == 1 => alloc::vec![0],
        Ok(ids) => {
            return Err(BringUpError::Mismatch {
                asked: smp,
                found: ids.len(),
            });
        }
        Err(_) => {
            return Err(BringUpError::Mismatch {
                asked: smp,
                found: 0,
            });
        }
    };
    if smp == 1 {
        return Ok(CpuReport {
            apic_ids,
            silent: Vec::new(),
            contention: None,
        });
    }
    crate::time::map_local_apic();
    let boot_id = crate::arch::apic::local_apic_id();
    let unique = apic_ids
        .iter()
        .enumerate()
        .all(|(i, id)| !apic_ids[..i].contains(id));
    // The boot CPU first: CPU 0.
    match apic_ids.iter().position(|&id| id == boot_id) {
        Some(at) if unique => apic_ids[..=at].rotate_right(1),
        _ => {
            return Err(BringUpError::BadTable {
                apic_ids,
                boot: boot_id,
            });
        }
    }
    let mut silent = start_aps(&apic_ids);
    // Each AP reads its own APIC id when asked by IPI: an AP that answers has a local APIC,
    // an IDT and its own state that work. Then its registers for ring 3 must be the boot
    // CPU's (`arch::ring3_fingerprint`). One that fails either is counted silent, and out.
    let ring3 = crate::arch::ring3_fingerprint();
    for (cpu, &apic_id) in apic_ids.iter().enumerate().skip(1) {
        if !silent.contains(&cpu)
            && (ipi::call_at(cpu, apic_id, read_apic_id) != Some(u64::from(apic_id))
                || ipi::call_at(cpu, apic_id, crate::arch::ring3_fingerprint) != Some(ring3))
        {
            silent.push(cpu);
        }
    }
    let answered = |cpu: usize| !silent.contains(&cpu);
    ipi::set_online(
        apic_ids
            .iter()
            .enumerate()
            .map(|(cpu, &id)| answered(cpu).then_some(id))
            .collect(),
    );
    let online: Vec<usize> = (0..apic_ids.len())
        .filter(|c| !silent.contains(c))
        .collect();
    let contention = (online.len() > 1).then(|| contention::check(&online));
    Ok(CpuReport {
        apic_ids,
        silent,
        contention,
    })
}

fn read_apic_id() -> u64 {
    u64::from(apic::local_apic_id())
}

/// Starts CPUs 1.. (`apic_ids[1..]`), one at a time; returns those that did not answer.
fn start_aps(apic_ids: &[u8]) -> Vec<usize> {
    let trampoline = PhysAddr::new(TRAMPOLINE);
    if crate::mm::map_identity(trampoline).is_err() {
        return (1..apic_ids.len()).collect();
    }
    let page = (crate::mm::physical_offset() + TRAMPOLINE) as *mut u8;
    let cr3 = crate::arch::paging::active_level_4_frame()
        .start_address()
        .as_u64();
    let mut silent = Vec::new();
    for (cpu, &apic_id) in apic_ids.iter().enumerate().skip(1) {
        // The AP's stack for good (its boot flow becomes its idle task): a kernel stack
        // as a task's, with a guard page below it, so that an overflow faults there.
        let Ok(stack) = crate::mm::stack::KernelStack::new() else {
            silent.push(cpu);
            continue;
        };
        let stack_top = stack.top();
        core::mem::forget(stack);
        let params = StartParams {
            cr3,
            // The trampoline jumps to the entry: rsp as after a call (16-byte aligned less
            // the return address), as the ABI wants at a function's first instruction.
            stack_top: stack_top - 8,
            argument: core::ptr::from_ref(crate::percpu::new_area(cpu)) as u64,
            entry: ap_main,
        };
        // SAFETY: the trampoline page is low memory, which nothing else uses, and mapped by
        // the physical-memory map at `page`; the previous AP has left the trampoline, or was
        // given up on and held in INIT (below), so no AP runs it.
        unsafe { ap_start::install_trampoline(page, &params) };
        let clock = crate::time::clock::now;
        ap_start::start(apic_id, || {
            crate::time::clock::spin_until(clock() + INIT_WAIT_NS)
        });
        let has = |bits: &AtomicUsize| bits.load(Ordering::Acquire) & 1 << cpu != 0;
        let deadline = clock() + ANSWER_WAIT_NS;
        while !has(&ANSWERED) && clock() < deadline {
            core::hint::spin_loop();
        }
        if !has(&ARRIVED) {
            // INIT again holds a late AP in its wait for a STARTUP it will never get, so it
            // cannot start later on the next AP's parameters. One that arrived has left the
            // trampoline: it is only counted out.
            crate::arch::apic::send_init(apic_id);
        }
        if !has(&ANSWERED) {
            silent.push(cpu);
        }
    }
    crate::mm::unmap_identity(trampoline);
    silent
}

/// Where an AP enters the kernel, on its own stack, with the state made for it
/// ([`crate::percpu::new_area`]): it takes that state, its own GDT and TSS, the IDT and its
/// local APIC, says it runs, then idles (see the module's docs).
extern "C" fn ap_main(area: u64) -> ! {
    // SAFETY: `area` is the 'static PerCpu the boot CPU made for this AP alone; interrupts
    // are off since the trampoline.
    let area = unsafe { &*(area as *const crate::percpu::PerCpu) };
    ARRIVED.fetch_or(1 << area.index(), Ordering::Release);
    // SAFETY: as above.
    unsafe { crate::percpu::init_ap(area) };
    crate::arch::init_ap();
    apic::enable();
    // Its number read through its own GS base: an AP that answers has its own state.
    ANSWERED.fetch_or(1 << this_cpu().index(), Ordering::Release);
    crate::sched::setup::ap_idle_loop()
}
