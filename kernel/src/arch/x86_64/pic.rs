//! The two cascaded 8259 PICs. Remapped to vectors 32–47 so that their interrupts do not
//! collide with CPU exceptions, and masked but for the serial port's IRQ 4 (console input,
//! once a program may read it) and, when the PIT drives the tick (`clockevent=pit`), IRQ 0;
//! the local APIC delivers everything else.

use pic8259::ChainedPics;
use spin::Mutex;

/// Vector of IRQ 0 (the PIT) after remapping.
pub const PIT_VECTOR: u8 = 32;
/// Vector of IRQ 4, COM1's (the serial console received bytes).
pub const SERIAL_VECTOR: u8 = PIT_VECTOR + 4;
const SERIAL_IRQ: u16 = 1 << 4;
const SECONDARY_OFFSET: u8 = PIT_VECTOR + 8;

// SAFETY: 32–47 are free vectors (0–31 are exceptions, the APIC's start at 48).
static PICS: Mutex<ChainedPics> =
    Mutex::new(unsafe { ChainedPics::new(PIT_VECTOR, SECONDARY_OFFSET) });

/// Remaps the PICs and masks every line but those set in `enabled_irqs` (bit n = IRQ n).
/// `ChainedPics::initialize` restores the masks it found, so the masks are written after.
/// The serial port's line opens later, when a program may read the console
/// ([`enable_serial_input`]).
pub fn init(enabled_irqs: u16) {
    let mut pics = PICS.lock();
    // SAFETY: the PICs are standard PC hardware, programmed only here, with interrupts off.
    unsafe {
        pics.initialize();
        // IRQ 2 is the cascade; keep it open if anything on the secondary is enabled.
        let cascade = if enabled_irqs & 0xff00 != 0 {
            1 << 2
        } else {
            0
        };
        let mask = !(enabled_irqs | cascade);
        pics.write_masks(mask as u8, (mask >> 8) as u8);
    }
}

/// Unmasks IRQ 4: the serial port's received bytes now interrupt.
pub fn enable_serial_input() {
    ::x86_64::instructions::interrupts::without_interrupts(|| {
        let mut pics = PICS.lock();
        // SAFETY: only IRQ 4's mask bit changes; its handler is in the IDT.
        unsafe {
            let [primary, secondary] = pics.read_masks();
            pics.write_masks(primary & !(SERIAL_IRQ as u8), secondary);
        }
    })
}

/// Acknowledges IRQ `vector` at the PIC(s).
pub fn end_of_interrupt(vector: u8) {
    // SAFETY: called at the end of the handler of `vector`, a PIC vector.
    unsafe { PICS.lock().notify_end_of_interrupt(vector) }
}
