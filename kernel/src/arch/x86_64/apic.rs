//! The local APIC (xAPIC, memory-mapped): its timer in one-shot mode is the clock event
//! device of hrtimers (`clockevent=lapic`), and it must be told the end of each of its
//! interrupts (EOI). Its registers live in a 4 KiB page at the physical address the
//! IA32_APIC_BASE MSR gives (0xFEE0_0000), mapped uncached at [`LAPIC_VIRT`].

use core::sync::atomic::{AtomicBool, Ordering};
use x86_64::registers::model_specific::Msr;

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Where the APIC's register page is mapped: its own level-4 slot (416) in the upper half,
/// which every address space shares (a timer interrupt may come while a program runs).
pub const LAPIC_VIRT: u64 = 0xffff_d000_0000_0000;
/// Vector of the APIC timer interrupt.
pub const TIMER_VECTOR: u8 = 48;
/// Vector the APIC uses for spurious interrupts (needs no EOI).
pub const SPURIOUS_VECTOR: u8 = 0xff;
/// Inter-processor interrupts, at Linux's vectors (arch/x86/include/asm/irq_vectors.h):
/// run the function another CPU left for this one (CALL_FUNCTION_SINGLE_VECTOR), and switch
/// because another CPU made a task runnable here (RESCHEDULE_VECTOR). The stop a panic
/// sends is an NMI, which has no vector ([`send_stop`]).
pub const CALL_FUNCTION_VECTOR: u8 = 0xfb;
pub const RESCHEDULE_VECTOR: u8 = 0xfd;

const IA32_APIC_BASE: u32 = 0x1b;
const REG_ID: usize = 0x20;
const REG_TPR: usize = 0x80;
const REG_EOI: usize = 0xb0;
const REG_SVR: usize = 0xf0;
const REG_ICR_LOW: usize = 0x300;
const REG_ICR_HIGH: usize = 0x310;
const REG_LVT_TIMER: usize = 0x320;
const REG_INITIAL_COUNT: usize = 0x380;
const REG_CURRENT_COUNT: usize = 0x390;
const REG_DIVIDE: usize = 0x3e0;
/// Divide configuration "by 1": the timer counts at the APIC's input clock.
const DIVIDE_BY_1: u32 = 0b1011;
/// SVR bit 8: APIC software enable.
const SVR_ENABLE: u32 = 1 << 8;
/// LVT bit 16: masked.
const LVT_MASKED: u32 = 1 << 16;

/// The physical address of the APIC's registers.
pub fn physical_base() -> u64 {
    // SAFETY: IA32_APIC_BASE exists on every x86_64 CPU; reading it has no side effects.
    unsafe { Msr::new(IA32_APIC_BASE).read() & 0xffff_f000 }
}

fn write(reg: usize, value: u32) {
    // SAFETY: the register page is mapped at LAPIC_VIRT (uncached) by `time::init` before any
    // APIC access, and `reg` is one of the architectural register offsets.
    unsafe { core::ptr::write_volatile((LAPIC_VIRT as usize + reg) as *mut u32, value) }
}

fn read(reg: usize) -> u32 {
    // SAFETY: as for `write`.
    unsafe { core::ptr::read_volatile((LAPIC_VIRT as usize + reg) as *const u32) }
}

/// Software-enables the APIC with its spurious vector, accepts every priority, and leaves
/// the timer masked.
pub fn enable() {
    write(REG_SVR, SVR_ENABLE | u32::from(SPURIOUS_VECTOR));
    write(REG_TPR, 0);
    write(REG_DIVIDE, DIVIDE_BY_1);
    write(REG_LVT_TIMER, LVT_MASKED | u32::from(TIMER_VECTOR));
    write(REG_INITIAL_COUNT, 0);
    ENABLED.store(true, Ordering::Relaxed);
}

/// Cancels a pending one-shot if the APIC was ever enabled (its page mapped).
pub fn disarm_if_mapped() {
    if ENABLED.load(Ordering::Relaxed) {
        disarm();
    }
}

/// Counts the APIC timer's ticks while `wait` runs (which should take a known time).
pub fn measure_ticks(wait: impl FnOnce()) -> u64 {
    write(REG_LVT_TIMER, LVT_MASKED | u32::from(TIMER_VECTOR));
    write(REG_INITIAL_COUNT, u32::MAX);
    wait();
    let left = read(REG_CURRENT_COUNT);
    write(REG_INITIAL_COUNT, 0);
    u64::from(u32::MAX - left)
}

/// Fires the timer interrupt once, after `ticks` timer ticks (at least 1; at most 2^32 − 1,
/// the caller re-arms for longer waits).
pub fn arm_oneshot(ticks: u64) {
    write(REG_LVT_TIMER, u32::from(TIMER_VECTOR));
    write(
        REG_INITIAL_COUNT,
        ticks.clamp(1, u64::from(u32::MAX)) as u32,
    );
}

/// Cancels a pending one-shot.
pub fn disarm() {
    write(REG_INITIAL_COUNT, 0);
}

/// Signals the end of the current APIC interrupt.
pub fn end_of_interrupt() {
    write(REG_EOI, 0);
}

/// This CPU's local APIC id (what the MADT and an IPI's destination call it).
pub fn local_apic_id() -> u8 {
    (read(REG_ID) >> 24) as u8
}

/// ICR: the delivery modes INIT and STARTUP, and "assert" (bit 14); bit 12 is set while the
/// APIC is still sending.
const ICR_INIT: u32 = 0b101 << 8 | 1 << 14;
const ICR_STARTUP: u32 = 0b110 << 8 | 1 << 14;
const ICR_SENDING: u32 = 1 << 12;
/// ICR: the delivery mode "fixed" (0), asserted: an interrupt at the vector in bits 0–7.
const ICR_FIXED: u32 = 1 << 14;

/// Sends an inter-processor interrupt of kind `icr` to the CPU of APIC id `to`, and waits
/// until the APIC has sent it.
fn send_ipi(to: u8, icr: u32) {
    write(REG_ICR_HIGH, u32::from(to) << 24);
    write(REG_ICR_LOW, icr);
    while read(REG_ICR_LOW) & ICR_SENDING != 0 {
        core::hint::spin_loop();
    }
}

/// INIT to the CPU of APIC id `to`: it resets and waits for a STARTUP.
pub fn send_init(to: u8) {
    send_ipi(to, ICR_INIT);
}

/// STARTUP to the CPU of APIC id `to`: it starts in real mode at `page` × 4 KiB.
pub fn send_startup(to: u8, page: u8) {
    send_ipi(to, ICR_STARTUP | u32::from(page));
}

/// An interrupt at `vector` to the CPU of APIC id `to` (an IPI).
pub fn send_fixed(to: u8, vector: u8) {
    send_ipi(to, ICR_FIXED | u32::from(vector));
}

/// ICR: the delivery mode "NMI" (0b100), asserted; the vector field is ignored.
const ICR_NMI: u32 = 1 << 14 | 0b100 << 8;

/// Set before the first stop is sent, never cleared: an NMI that finds it set is a stop.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Stops the CPU of APIC id `to` for good (a panic elsewhere): a non-maskable interrupt,
/// taken even where interrupts are off — a CPU spinning on a lock the panicking CPU holds
/// has them off, and a maskable stop would never reach it (Linux's panic path falls back to
/// an NMI for the same reason, `native_stop_other_cpus`). Its handler halts
/// ([`is_stopping`]).
pub fn send_stop(to: u8) {
    STOPPING.store(true, Ordering::SeqCst);
    send_ipi(to, ICR_NMI);
}

/// Whether a CPU has asked the others to stop: the NMI handler's question.
pub fn is_stopping() -> bool {
    STOPPING.load(Ordering::SeqCst)
}
