//! The COM1 serial port (a 16550 UART at I/O port 0x3F8): cfslab's only console. QEMU's
//! `-serial stdio` connects it to the host's terminal, and every figure the lab prints goes
//! through here.
//!
//! Two writers share the port. [`with_console`] is the normal one, behind a spin lock.
//! [`emergency_console`] ignores the lock: panics and CPU exceptions use it, because the code
//! that failed may have been holding the lock when it did.

use core::fmt;
use spin::{Lazy, Mutex};
use uart_16550::SerialPort;

const COM1: u16 = 0x3F8;

static CONSOLE: Lazy<Mutex<SerialPort>> = Lazy::new(|| {
    init_keeping_input();
    // SAFETY: 0x3F8 is COM1 on every PC and QEMU machine; no other code in cfslab drives
    // this port except through this lock or the emergency writer below.
    Mutex::new(unsafe { SerialPort::new(COM1) })
});

/// Sets the UART up as `uart_16550`'s `init` does (38400 baud, 8N1, receive interrupt on)
/// but leaves its FIFO control alone. That `init` enables and clears the FIFOs, which threw
/// away a key typed while the machine booted. Without the FIFO, the UART holds one received
/// byte and QEMU holds back the rest until it is read: what is typed early waits, in order,
/// until the console's input starts ([`start_input`]).
fn init_keeping_input() {
    use ::x86_64::instructions::port::Port;
    const DATA: u16 = COM1;
    const INTERRUPT_ENABLE: u16 = COM1 + 1;
    const LINE_CONTROL: u16 = COM1 + 3;
    const MODEM_CONTROL: u16 = COM1 + 4;
    let writes = [
        (INTERRUPT_ENABLE, 0x00), // no interrupts while it is set up
        (LINE_CONTROL, 0x80),     // DLAB: the next two are the divisor
        (DATA, 0x03),             // 115200 / 3 = 38400 baud
        (INTERRUPT_ENABLE, 0x00), // (the divisor's high byte)
        (LINE_CONTROL, 0x03),     // 8 bits, no parity, one stop bit
        (MODEM_CONTROL, 0x0b),    // DTR, RTS, and OUT2, which gates the interrupt line
        (INTERRUPT_ENABLE, 0x01), // interrupt when a byte is received
    ];
    for (port, value) in writes {
        // SAFETY: COM1's registers, written once as the console lock is made, before any
        // other code drives the port; none of these writes touches a received byte.
        unsafe { Port::<u8>::new(port).write(value) };
    }
}

/// Starts taking console input: IRQ 4 is unmasked, and what the UART already holds is
/// taken at once. Until then the keys wait in the UART and in QEMU: nothing is lost, and
/// nothing typed early reaches the heap before the boot's self-check has measured it.
/// Interrupts stay off throughout, as in the interrupt handler, so that no byte the handler
/// takes can overtake one taken here.
pub fn start_input(f: impl FnMut(u8)) {
    ::x86_64::instructions::interrupts::without_interrupts(|| {
        super::pic::enable_serial_input();
        receive_each(f);
    })
}

/// Initialises the UART (baud rate, 8N1, receive interrupt). Printing before this is
/// harmless: the first print initialises it too.
pub fn init() {
    Lazy::force(&CONSOLE);
}

/// Runs `f` with the console locked and interrupts off, so that an interrupt handler that
/// prints cannot deadlock against the code it interrupted.
pub fn with_console<R>(f: impl FnOnce(&mut dyn fmt::Write) -> R) -> R {
    ::x86_64::instructions::interrupts::without_interrupts(|| f(&mut *CONSOLE.lock()))
}

/// Writes `bytes` as they are (a terminal's echo: backspaces stay backspaces), but for `\n`,
/// which goes out as CR LF as every line does.
pub fn write_bytes(bytes: &[u8]) {
    ::x86_64::instructions::interrupts::without_interrupts(|| {
        let mut port = CONSOLE.lock();
        for &b in bytes {
            if b == b'\n' {
                port.send_raw(b'\r');
            }
            port.send_raw(b);
        }
    });
}

/// Passes each byte the UART has received to `f` (from its interrupt: the UART raises IRQ 4
/// when bytes arrive, its receive interrupt being enabled by `init`).
pub fn receive_each(mut f: impl FnMut(u8)) {
    loop {
        let byte = ::x86_64::instructions::interrupts::without_interrupts(|| {
            CONSOLE.lock().try_receive().ok()
        });
        match byte {
            Some(b) => f(b),
            None => return,
        }
    }
}

/// A writer that does not take the console lock, for the last words of a panic or a fatal
/// exception. Output may interleave with a half-printed line; it is never lost to a deadlock.
pub fn emergency_console() -> impl fmt::Write {
    // SAFETY: the UART was initialised by `init` (or, if the failure came before that, it
    // still has the BIOS's settings, which QEMU accepts); writing bytes to its data port
    // cannot break memory safety, at worst it mixes characters with another writer.
    unsafe { SerialPort::new(COM1) }
}
