//! Each CPU's own memory, reached through the GS segment's base (Linux's per-CPU area and
//! its `this_cpu_*` operations, arch/x86/include/asm/percpu.h).
//!
//! Every CPU points its GS base at its own area, so one instruction such as
//! `inc qword ptr gs:[24]` touches *this* CPU's copy of a field, whichever CPU runs it: no
//! lookup of the CPU's number, no lock, and no `lock` prefix either, since only the owner
//! writes its area and one instruction cannot be cut by an interrupt. Under `-icount`,
//! where time is instructions, that keeps a per-CPU counter as cheap as a static one.
//!
//! Ring 3 has a GS base of its own (cfslab gives programs no way to set one, so it is 0,
//! or whatever a selector load leaves), so the kernel swaps the two with `swapgs` on every
//! way in from ring 3 and again on the way out; `IA32_KERNEL_GS_BASE` holds the one not in
//! use. The entries in `syscall`, `interrupts` and `exceptions` do it; [`ensure_kernel_base`]
//! repairs it on the fatal paths, which may start anywhere.
//!
//! The area's first words are the arch's own ([`ArchSlots`]): the kernel's `PerCpu` starts
//! with them and adds its fields after.

use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use x86_64::registers::model_specific::{GsBase, KernelGsBase};

/// What the entry code keeps in each CPU's area, at fixed offsets the assembly names.
/// Atomics, as the rest of the area: the assembly writes them behind Rust's back.
#[repr(C)]
pub struct ArchSlots {
    /// The area's own address: `gs:[0]` turns GS into a pointer.
    this: AtomicU64,
    /// The user's rsp between SYSCALL and the first push (interrupts are off there).
    user_rsp: AtomicU64,
    /// The top of the running task's kernel stack, where a SYSCALL's frame goes.
    kernel_rsp: AtomicU64,
    /// This CPU's TSS (`gdt`), whose rsp0 follows `kernel_rsp`.
    tss: AtomicU64,
    /// The physical address of the level-4 table CR3 holds (0 until the first switch sets
    /// it): cheaper to compare than CR3 is to read (`switch::prepare`).
    loaded_cr3: AtomicU64,
}

/// `ArchSlots`' offsets, for the assembly.
pub const USER_RSP: usize = core::mem::offset_of!(ArchSlots, user_rsp);
pub const KERNEL_RSP: usize = core::mem::offset_of!(ArchSlots, kernel_rsp);
pub const TSS: usize = core::mem::offset_of!(ArchSlots, tss);
pub const LOADED_CR3: usize = core::mem::offset_of!(ArchSlots, loaded_cr3);

impl ArchSlots {
    /// Slots for an area not yet installed ([`install`] fills in `this`, `gdt` the TSS).
    pub const fn new() -> Self {
        Self {
            this: AtomicU64::new(0),
            user_rsp: AtomicU64::new(0),
            kernel_rsp: AtomicU64::new(0),
            tss: AtomicU64::new(0),
            loaded_cr3: AtomicU64::new(0),
        }
    }
}

impl Default for ArchSlots {
    fn default() -> Self {
        Self::new()
    }
}

/// Makes `area`, the first bytes of a CPU's area, the running CPU's: GS points at it, and
/// ring 3's base starts as 0.
///
/// # Safety
/// `area` starts an area that is this CPU's alone. Interrupts are off, and nothing on this
/// CPU uses GS while it changes.
pub unsafe fn install(area: &'static ArchSlots) {
    let address = core::ptr::from_ref(area) as u64;
    area.this.store(address, Relaxed);
    GsBase::write(x86_64::VirtAddr::new(address));
    KernelGsBase::write(x86_64::VirtAddr::zero());
}

/// Puts the kernel's GS base back if ring 3's is in place: for the fatal paths, which may
/// start between a `swapgs` and the ring change it goes with. The kernel's base is an upper
/// half address; ring 3's never is.
pub fn ensure_kernel_base() {
    if GsBase::read().as_u64() < 1 << 63 {
        // SAFETY: GS holds ring 3's base and IA32_KERNEL_GS_BASE the kernel's: swap them.
        unsafe { core::arch::asm!("swapgs", options(nostack, preserves_flags)) };
    }
}

/// The running CPU's area.
#[inline(always)]
pub fn this() -> usize {
    read_stable::<0>() as usize
}

/// Reads the word at `OFFSET` in the running CPU's area, every time it is asked (Linux's
/// `this_cpu_read`): the compiler may not merge two reads or move one out of a loop, since
/// the word may change behind it (an interrupt handler, the switch).
#[inline(always)]
pub fn read<const OFFSET: usize>() -> u64 {
    let value: u64;
    // SAFETY: GS points at this CPU's area (`install`), which holds a word at OFFSET.
    unsafe {
        core::arch::asm!(
            "mov {value}, gs:[{offset}]",
            value = out(reg) value,
            offset = const OFFSET,
            options(readonly, nostack, preserves_flags),
        );
    }
    value
}

/// Reads a word that never changes once the area is installed (its address, the CPU's
/// number): the compiler may merge such reads, or drop one whose value goes unused
/// (Linux's `this_cpu_read_stable`). Only for words written before the area is in use.
#[inline(always)]
pub fn read_stable<const OFFSET: usize>() -> u64 {
    let value: u64;
    // SAFETY: as `read`.
    unsafe {
        core::arch::asm!(
            "mov {value}, gs:[{offset}]",
            value = out(reg) value,
            offset = const OFFSET,
            options(pure, readonly, nostack, preserves_flags),
        );
    }
    value
}

/// Writes the word at `OFFSET` in the running CPU's area.
#[inline(always)]
pub fn write<const OFFSET: usize>(value: u64) {
    // SAFETY: as `read`; only this CPU writes its area.
    unsafe {
        core::arch::asm!(
            "mov gs:[{offset}], {value}",
            value = in(reg) value,
            offset = const OFFSET,
            options(nostack, preserves_flags),
        );
    }
}

/// Adds `delta` to the word at `OFFSET` (wrapping), in one instruction.
#[inline(always)]
pub fn add<const OFFSET: usize>(delta: u64) {
    // SAFETY: as `write`.
    unsafe {
        core::arch::asm!(
            "add qword ptr gs:[{offset}], {delta}",
            delta = in(reg) delta,
            offset = const OFFSET,
            options(nostack),
        );
    }
}

/// Adds one to the word at `OFFSET`, in one instruction.
#[inline(always)]
pub fn increment<const OFFSET: usize>() {
    // SAFETY: as `write`.
    unsafe {
        core::arch::asm!(
            "inc qword ptr gs:[{offset}]",
            offset = const OFFSET,
            options(nostack),
        );
    }
}

/// Adds one to word `index` of the array of `LEN` words at `OFFSET`, in one instruction
/// (and a bound check: an index past the array changes nothing).
#[inline(always)]
pub fn increment_nth<const OFFSET: usize, const LEN: usize>(index: usize) {
    if index >= LEN {
        return;
    }
    // SAFETY: as `write`, for the word `index` words past OFFSET, within the array of LEN
    // words there (checked above).
    unsafe {
        core::arch::asm!(
            "inc qword ptr gs:[{offset} + {index} * 8]",
            index = in(reg) index,
            offset = const OFFSET,
            options(nostack),
        );
    }
}

/// Clears bit `bit` (below 64) of the word at `OFFSET`, in one instruction.
#[inline(always)]
pub fn clear_bit<const OFFSET: usize>(bit: u32) {
    debug_assert!(bit < 64, "bit {bit} of a 64-bit word");
    // SAFETY: as `write`; `bit` is below 64, so `btr` stays within the word.
    unsafe {
        core::arch::asm!(
            "btr qword ptr gs:[{offset}], {bit:r}",
            bit = in(reg) u64::from(bit),
            offset = const OFFSET,
            options(nostack),
        );
    }
}
