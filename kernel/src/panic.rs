//! What a kernel panic prints, and how it ends the run.

use crate::arch::serial::emergency_console;
use core::fmt::Write;
use core::panic::PanicInfo;
use core::sync::atomic::{AtomicBool, Ordering};

static PANICKING: AtomicBool = AtomicBool::new(false);

/// Prints `PANIC at file:line:column: message` and ends the run as a failure. A panic inside
/// this report (say, while formatting) ends the run at once instead of looping.
pub fn report(info: &PanicInfo) -> ! {
    if PANICKING.swap(true, Ordering::SeqCst) {
        crate::exit(crate::ExitCode::Failure);
    }
    // The emergency writer: the panicking code may hold the console lock.
    let mut console = emergency_console();
    let _ = match info.location() {
        Some(at) => writeln!(
            console,
            "PANIC at {}:{}:{}: {}",
            at.file(),
            at.line(),
            at.column(),
            info.message()
        ),
        None => writeln!(console, "PANIC: {}", info.message()),
    };
    crate::exit(crate::ExitCode::Failure)
}
