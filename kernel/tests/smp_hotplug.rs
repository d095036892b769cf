//! CPU hotplug inside the kernel, on two CPUs (the runner boots `smp_*` kernels with two):
//! what a write to `cpuN/online` cannot reach from ring 3 — CPU 0 and the last online CPU
//! refused with EBUSY — and a task asleep on a CPU that goes offline, whose timer moves
//! with it and wakes it on time on the CPU left. (The user-visible behaviour is
//! `userland/c/chotplug.c`'s, tests/tests/hotplug.rs.)

#![no_std]
#![no_main]
#![feature(custom_test_frameworks)]
#![test_runner(kernel::testing::run_tests)]
#![reexport_test_harness_main = "test_main"]

use bootloader_api::BootInfo;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::sched::hotplug::{self, CpuState, HotplugError};
use kernel::sched::{self, affinity};
use kernel::time::clock;
use kernel::{ExitCode, exit};

bootloader_api::entry_point!(main, config = &kernel::BOOTLOADER_CONFIG);

fn main(boot_info: &'static mut BootInfo) -> ! {
    kernel::init(boot_info);
    test_main();
    exit(ExitCode::Success)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    kernel::testing::test_panic_handler(info)
}

const MS: u64 = 1_000_000;

#[test_case]
fn cpu_0_and_the_last_online_cpu_stay_online() {
    assert_eq!(hotplug::cpu_masks(), (0b11, 0b11));
    assert_eq!(hotplug::cpu_down(0), Err(HotplugError::Busy));
    assert_eq!(hotplug::cpu_down(1), Ok(()));
    assert_eq!(hotplug::state(1), CpuState::Dead);
    assert_eq!(hotplug::cpu_masks(), (0b11, 0b01));
    // Offline already: nothing to do, as Linux's `device_offline` of an offline CPU.
    assert_eq!(hotplug::cpu_down(1), Ok(()));
    // CPU 0 is the last online CPU now.
    assert_eq!(hotplug::cpu_down(0), Err(HotplugError::Busy));
    assert_eq!(hotplug::cpu_up(1), Ok(()));
    assert_eq!(hotplug::state(1), CpuState::Online);
    assert_eq!(hotplug::cpu_masks(), (0b11, 0b11));
    assert_eq!(hotplug::cpu_up(1), Ok(()));
    assert_eq!(hotplug::cpu_up(5), Err(HotplugError::NoSuchCpu));
    assert_eq!(hotplug::cpu_down(5), Err(HotplugError::NoSuchCpu));
}

/// When the sleeper woke, and on which CPU.
static WOKE_AT: AtomicU64 = AtomicU64::new(0);
static WOKE_ON: AtomicU64 = AtomicU64::new(u64::MAX);

fn sleep_until_then_record(deadline: u64) {
    sched::sleep_until(deadline);
    WOKE_AT.store(clock::now(), Ordering::SeqCst);
    WOKE_ON.store(kernel::percpu::this_cpu().index() as u64, Ordering::SeqCst);
}

#[test_case]
fn a_task_asleep_on_a_cpu_that_goes_offline_wakes_on_time_on_another() {
    // A task pinned to CPU 1 sleeps 30 ms there (its timer on CPU 1's queue). CPU 1 goes
    // offline meanwhile: the timer moves to CPU 0's queue, and the task, allowed no
    // online CPU, is widened to every CPU and wakes on CPU 0 — at its deadline, not
    // later (the hrtimer fired on time) and not earlier (it did not wake to move).
    let deadline = clock::now() + 30 * MS;
    let id = sched::spawn(sleep_until_then_record, deadline, "sleeper", 0, 0).unwrap();
    affinity::set_affinity(id, 0b10).unwrap();
    sched::sleep(5 * MS);
    assert_eq!(affinity::affinity_of(id), Some(0b10));
    assert_eq!(hotplug::cpu_down(1), Ok(()));
    sched::join(id);
    let woke = WOKE_AT.load(Ordering::SeqCst);
    assert!(
        (deadline..deadline + MS).contains(&woke),
        "woke at {woke}, deadline {deadline}"
    );
    assert_eq!(WOKE_ON.load(Ordering::SeqCst), 0);
    assert_eq!(hotplug::cpu_up(1), Ok(()));
}
