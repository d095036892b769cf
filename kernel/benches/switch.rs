//! In-kernel benchmarks: the cost of a context switch (two threads yielding to each other)
//! and of a wake-up (two threads waking each other through wait queues), in virtual
//! nanoseconds of the deterministic clock — under `-icount shift=0` one virtual nanosecond is
//! one guest instruction. Prints its figures; asserts nothing (`make bench`).

#![no_std]
#![no_main]

use bootloader_api::BootInfo;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::sched::{self, WaitQueue};
use kernel::time::clock;
use kernel::{ExitCode, exit, println};

bootloader_api::entry_point!(main, config = &kernel::BOOTLOADER_CONFIG);

const ROUNDS: u64 = 10_000;

fn yielder(rounds: u64) {
    for _ in 0..rounds {
        sched::yield_now();
    }
}

static QUEUES: [WaitQueue; 2] = [WaitQueue::new(), WaitQueue::new()];
static TURN: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];

/// Player `me` waits for its turn, then hands the turn to the other player and wakes it.
fn ping_pong(me: u64) {
    let (me, other) = (me as usize, 1 - me as usize);
    for _ in 0..ROUNDS {
        QUEUES[me].wait_until(|| TURN[me].load(Ordering::SeqCst));
        TURN[me].store(false, Ordering::SeqCst);
        TURN[other].store(true, Ordering::SeqCst);
        QUEUES[other].wake_one();
    }
}

/// Runs `start` (which spawns the threads and returns their ids), waits for them, and
/// returns (virtual ns elapsed, context switches).
fn measure(start: impl FnOnce() -> [kernel::task::TaskId; 2]) -> (u64, u64) {
    let (t0, s0) = (clock::now(), sched::switch_count());
    let ids = start();
    for id in ids {
        sched::join(id);
    }
    (clock::now() - t0, sched::switch_count() - s0)
}

fn main(boot_info: &'static mut BootInfo) -> ! {
    let boot = kernel::init(boot_info);
    println!(
        "bench: policy {}, {}",
        kernel::config::policy_name(boot.config.policy),
        boot.time
    );
    let (ns, switches) =
        measure(|| [0, 1].map(|_| sched::spawn(yielder, ROUNDS, "yielder", 1, 0).expect("spawn")));
    println!(
        "bench: context switch: {switches} switches in {ns} ns: {} ns each",
        ns / switches.max(1)
    );
    println!(
        "RESULT {{\"kind\":\"bench\",\"name\":\"context_switch\",\"switches\":{switches},\"ns_each\":{}}}",
        ns / switches.max(1)
    );
    TURN[0].store(true, Ordering::SeqCst);
    let (ns, switches) =
        measure(|| [0, 1].map(|me| sched::spawn(ping_pong, me, "ping-pong", 1, 0).expect("spawn")));
    let wakeups = 2 * ROUNDS;
    println!(
        "bench: wake-up: {wakeups} wake-ups ({switches} switches) in {ns} ns: {} ns per wake-up and switch",
        ns / wakeups
    );
    println!(
        "RESULT {{\"kind\":\"bench\",\"name\":\"wakeup\",\"wakeups\":{wakeups},\"switches\":{switches},\"ns_each\":{}}}",
        ns / wakeups
    );
    exit(ExitCode::Success)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    kernel::panic::report(info)
}
