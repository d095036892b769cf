//! A panic on one CPU stops the others, even one that runs with interrupts off (spinning on
//! a lock, say): the stop is an NMI. CPU 0 counts in a loop with interrupts off; CPU 1
//! panics; its panic handler sees the count move, stops the other CPUs as the kernel's
//! panic does, then sees the count stand still. A stop sent as an ordinary interrupt would
//! never reach CPU 0, and the count would go on. The test runner boots kernels named
//! `smp_*` with two CPUs. `harness = false`: the panic is where the test passes.

#![no_std]
#![no_main]

use bootloader_api::BootInfo;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{ExitCode, exit, print, println};

bootloader_api::entry_point!(main, config = &kernel::BOOTLOADER_CONFIG);

/// CPU 0's count, with interrupts off.
static COUNT: AtomicU64 = AtomicU64::new(0);

fn main(boot_info: &'static mut BootInfo) -> ! {
    kernel::init(boot_info);
    print!("smp_stop::a_panic_stops_a_cpu_with_interrupts_off ... ");
    if kernel::cpus::ipi::online().len() != 2 {
        println!("FAILED (not two CPUs online)");
        exit(ExitCode::Failure)
    }
    kernel::arch::irq::disable();
    kernel::cpus::ipi::start_on(1, panic_here).expect("CPU 1 is online");
    // As a CPU waiting for a spin lock does: `pause` in the loop (which, under QEMU's
    // icount, also lets the other vCPU run: a loop without it and with interrupts off
    // would hold QEMU's one instruction counter until the next timer deadline).
    loop {
        COUNT.fetch_add(1, Ordering::Relaxed);
        core::hint::spin_loop();
    }
}

/// Runs on CPU 1, in its call-function interrupt.
fn panic_here() -> u64 {
    panic!("CPU 1 panics on purpose")
}

/// How far `COUNT` moves while this CPU spins a while (both CPUs share QEMU's instruction
/// counter, so CPU 0 runs meanwhile if it can run at all).
fn count_moves() -> u64 {
    let before = COUNT.load(Ordering::Relaxed);
    for _ in 0..200_000 {
        core::hint::spin_loop();
    }
    COUNT.load(Ordering::Relaxed) - before
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let on_cpu_1 = kernel::percpu::this_cpu().index() == 1;
    let on_purpose = info.message().as_str() == Some("CPU 1 panics on purpose");
    if !(on_cpu_1 && on_purpose) {
        println!("FAILED (unexpected panic: {})", info.message());
        exit(ExitCode::Failure)
    }
    if count_moves() == 0 {
        println!("FAILED (CPU 0 was not counting before the stop)");
        exit(ExitCode::Failure)
    }
    kernel::cpus::ipi::stop_others();
    // The NMI is taken at CPU 0's next instruction boundary QEMU looks at: let it land.
    count_moves();
    match count_moves() {
        0 => {
            println!("ok");
            exit(ExitCode::Success)
        }
        moved => {
            println!("FAILED (CPU 0 counted {moved} more after the stop)");
            exit(ExitCode::Failure)
        }
    }
}
