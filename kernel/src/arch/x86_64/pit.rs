//! The 8254 Programmable Interval Timer, counting at 1.193182 MHz. Channel 2 measures a fixed
//! interval to calibrate the TSC; channel 0 is the periodic tick of `clockevent=pit` (IRQ 0
//! through the 8259 PIC), the timer of the 2005 world.

use x86_64::instructions::port::Port;

/// The PIT's input clock.
pub const PIT_HZ: u64 = 1_193_182;

const CHANNEL0: u16 = 0x40;
const CHANNEL2: u16 = 0x42;
const COMMAND: u16 = 0x43;
/// Port B of the keyboard controller: bit 0 gates channel 2, bit 1 drives the speaker,
/// bit 5 reads channel 2's output.
const PORT_B: u16 = 0x61;

fn outb(port: u16, value: u8) {
    // SAFETY: the PIT and port B are standard PC devices owned by this module; writing them
    // programs the timer and cannot affect memory.
    unsafe { Port::new(port).write(value) }
}

fn inb(port: u16) -> u8 {
    // SAFETY: as above; reading port B has no side effects.
    unsafe { Port::new(port).read() }
}

/// Counts the TSC across `pit_ticks` ticks of PIT channel 2 (at most 65535, 55 ms), in
/// one-shot mode with the speaker off. Returns the TSC delta.
pub fn measure_tsc(pit_ticks: u16, read_tsc: impl Fn() -> u64) -> u64 {
    // Gate off, speaker off; channel 2, low then high byte, mode 0 (interrupt on terminal
    // count: the output goes high when the count reaches zero).
    outb(PORT_B, inb(PORT_B) & !0x03);
    outb(COMMAND, 0b1011_0000);
    outb(CHANNEL2, pit_ticks as u8);
    outb(CHANNEL2, (pit_ticks >> 8) as u8);
    // Raising the gate starts the count.
    let start = read_tsc();
    outb(PORT_B, (inb(PORT_B) & !0x02) | 0x01);
    while inb(PORT_B) & 0x20 == 0 {
        core::hint::spin_loop();
    }
    let end = read_tsc();
    outb(PORT_B, inb(PORT_B) & !0x01);
    end - start
}

/// The channel 0 divisor for `hz` interrupts per second, and the resulting period in ns.
pub fn periodic_divisor(hz: u32) -> (u16, u64) {
    let divisor = (PIT_HZ / u64::from(hz)).clamp(1, 65535);
    (divisor as u16, divisor * 1_000_000_000 / PIT_HZ)
}

/// Starts channel 0 as a rate generator (mode 2) at `hz`; returns the period in ns.
pub fn start_periodic(hz: u32) -> u64 {
    let (divisor, period_ns) = periodic_divisor(hz);
    outb(COMMAND, 0b0011_0100);
    outb(CHANNEL0, divisor as u8);
    outb(CHANNEL0, (divisor >> 8) as u8);
    period_ns
}

/// Stops channel 0's interrupts (one-shot mode with nothing loaded never fires again).
pub fn stop_periodic() {
    outb(COMMAND, 0b0011_0000);
}
