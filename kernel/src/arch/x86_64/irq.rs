//! The interrupt flag (RFLAGS.IF): the one place outside the interrupt entry code that turns
//! interrupts on and off. Everything else reaches it through these functions, or through a
//! lock that turns interrupts off while held ([`crate::sync::SpinLock`]).

use x86_64::instructions::interrupts;

/// Whether interrupts are on.
#[inline(always)]
pub fn enabled() -> bool {
    interrupts::are_enabled()
}

/// Turns interrupts off; returns whether they were on, for [`restore`].
#[inline(always)]
pub fn save_and_disable() -> bool {
    let were_on = interrupts::are_enabled();
    if were_on {
        interrupts::disable();
    }
    were_on
}

/// Turns interrupts back on if [`save_and_disable`] found them on.
#[inline(always)]
pub fn restore(were_on: bool) {
    if were_on {
        enable();
    }
}

/// Turns interrupts on.
#[inline(always)]
pub fn enable() {
    // A bare `sti`: the `x86_64` crate's `enable` adds a `nop` after it, so that an
    // `enable(); disable();` pair still opens a window for a pending interrupt (`sti` holds
    // interrupts off for one more instruction). No path here turns them off right after
    // turning them on, and every lock's release and every system call would pay for it.
    // SAFETY: setting IF changes no memory and no other flag; the kernel is ready for
    // interrupts whenever a caller turns them on.
    unsafe { core::arch::asm!("sti", options(preserves_flags, nostack)) };
}

/// Turns interrupts off.
#[inline(always)]
pub fn disable() {
    interrupts::disable();
}

/// Runs `f` with interrupts off, then restores them as they were.
#[inline(always)]
pub fn without<R>(f: impl FnOnce() -> R) -> R {
    let were_on = save_and_disable();
    let result = f();
    restore(were_on);
    result
}

/// Turns interrupts on and halts until the next one, atomically (`sti; hlt`): an interrupt
/// between the two cannot be missed.
#[inline(always)]
pub fn enable_and_wait() {
    interrupts::enable_and_hlt();
}

/// Parks the CPU for good: `hlt` with interrupts off never wakes up except for an NMI, and
/// the loop sends it back to sleep if that happens.
pub fn halt_forever() -> ! {
    loop {
        interrupts::disable();
        ::x86_64::instructions::hlt();
    }
}
