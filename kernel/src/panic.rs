//! What a kernel panic prints, and how it ends the run.

use crate::arch::serial::emergency_console;
use core::fmt::Write;
use core::panic::PanicInfo;
use core::sync::atomic::{AtomicUsize, Ordering};

/// The CPU printing a panic's report, plus one (0: none).
static PANICKING: AtomicUsize = AtomicUsize::new(0);

/// Prints `PANIC at file:line:column: message` and ends the run as a failure. The other
/// CPUs are stopped first. A panic inside this report (say, while formatting) ends the run
/// at once instead of looping; a second CPU's panic stops that CPU, and the first prints.
pub fn report(info: &PanicInfo) -> ! {
    let me = crate::percpu::this_cpu().index() + 1;
    match PANICKING.compare_exchange(0, me, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => {}
        Err(cpu) if cpu == me => crate::exit(crate::ExitCode::Failure),
        Err(_) => crate::arch::irq::halt_forever(),
    }
    crate::cpus::ipi::stop_others();
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
