//! # cfslab kernel
//!
//! A bare-metal x86_64 teaching kernel whose purpose is to run Linux's Completely Fair
//! Scheduler, and the experiments that shaped it, where a reader can watch every decision.
//!
//! This crate is the *mechanism*; the scheduling *policy* and the protocol around it (the
//! runqueue, `sched::rq`) live in their own pure crate, `kernel/sched`, which the kernel
//! drives under its scheduler lock. The layers, bottom up (docs/architecture.md):
//! - [`arch`]: the machine (x86_64 under QEMU), the only code that touches hardware; it
//!   calls up only through [`trap`];
//! - [`sync`] and [`percpu`]: IRQ-safe ranked locks, and what each CPU keeps for itself;
//! - [`mm`] (frames, page tables, heap, kernel stacks) and [`time`] (clock, timers);
//! - [`sched`] (the scheduler glue: tasks, switching, sleeping, waking) and [`task`];
//! - [`user`] (processes in ring 3 on Linux's system-call ABI) and [`lab`] (the
//!   experiments);
//! - [`trap`]: the boundary every system call, interrupt and exception comes up through.
//!
//! Start reading at [`init`], which brings the machine up in order, then at `main.rs`; the
//! three paths a reader follows first (a tick, a wake-up, a system call) are traced file by
//! file in docs/architecture.md.

#![no_std]
#![cfg_attr(test, no_main)]
#![feature(custom_test_frameworks)]
#![feature(abi_x86_interrupt)]
#![feature(maybe_uninit_fill)]
#![test_runner(crate::testing::run_tests)]
#![reexport_test_harness_main = "test_main"]

extern crate alloc;

pub mod arch;
pub mod config;
pub mod console;
pub mod cpus;
pub mod lab;
pub mod mm;
pub mod panic;
pub mod percpu;
pub mod sched;
pub mod selfcheck;
pub mod sync;
pub mod task;
pub mod testing;
pub mod time;
pub mod trap;
pub mod user;

use arch::fw_cfg::{self, FwCfgError};
use bootloader_api::BootInfo;
use bootloader_api::config::{BootloaderConfig, Mapping};
use config::{Config, OptionError};

/// Where the bootloader maps the (position-independent) kernel image: the top 2 GiB, as
/// Linux's `__START_KERNEL_map`, so that the lower half of every address space is free for
/// user programs (a static binary sits at 0x400000). Pinned rather than left to the
/// bootloader so that gdb can be told the load offset before the kernel runs; the boot
/// tool's gdb mode uses the same number (boot/src/gdb.rs).
pub const KERNEL_BASE: u64 = 0xffff_ffff_8000_0000;

/// Where the bootloader puts what it places itself (the physical-memory map, the boot
/// information, the boot stack): the start of the upper half, Linux's direct-map base.
pub const DYNAMIC_BASE: u64 = 0xffff_8000_0000_0000;

/// The compile-time contract with the bootloader, embedded in the kernel ELF.
pub const BOOTLOADER_CONFIG: BootloaderConfig = {
    let mut config = BootloaderConfig::new_default();
    // The frame allocator and page-table code reach physical memory through this mapping.
    config.mappings.physical_memory = Some(Mapping::Dynamic);
    config.mappings.kernel_base = Mapping::FixedAddress(KERNEL_BASE);
    config.mappings.dynamic_range_start = Some(DYNAMIC_BASE);
    // Unoptimised debug builds are stack-hungry (formatting, the option parser's tests).
    config.kernel_stack_size = 256 * 1024;
    config
};

/// How a run ends, as seen by the host: written to QEMU's isa-debug-exit device, which turns
/// value `v` into QEMU exit status `(v << 1) | 1`; the boot tool maps those statuses to its
/// own (0 success, 1 failure, 2 bad options).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ExitCode {
    /// QEMU status 33.
    Success = 0x10,
    /// QEMU status 35: a failed test, a panic, a fatal exception.
    Failure = 0x11,
    /// QEMU status 37: the boot options were rejected.
    BadOptions = 0x12,
}

/// Ends the run (QEMU exits with `code`).
pub fn exit(code: ExitCode) -> ! {
    arch::qemu_exit::exit(code as u32)
}

/// What [`init`] established.
pub struct Boot {
    pub config: Config,
    pub memory: mm::MemoryReport,
    /// The clock and timer devices.
    pub time: time::TimeReport,
    /// The CPUs found and started.
    pub cpus: cpus::CpuReport,
    /// Where the bootloader put the kernel image (the gdb symbol offset).
    pub kernel_image_offset: u64,
}

/// Brings the machine up: console, CPU tables, memory, then the boot options. Never returns
/// on a bad option or too little memory: it prints one line saying why and exits with
/// [`ExitCode::BadOptions`] or [`ExitCode::Failure`].
pub fn init(boot_info: &'static mut BootInfo) -> Boot {
    // First of all: the locks count themselves in the CPU's own state.
    percpu::init_boot_cpu();
    console::init();
    println!(
        "cfslab {} - a teaching kernel for Linux's CFS (x86_64)",
        env!("CARGO_PKG_VERSION")
    );
    arch::init();
    let kernel_image_offset = boot_info.kernel_image_offset;
    let rsdp = boot_info.rsdp_addr.into_option();
    let memory = mm::init(boot_info).unwrap_or_else(|error| {
        println!("cfslab: memory: {error}");
        exit(ExitCode::Failure)
    });
    let config = read_config().unwrap_or_else(|error| {
        println!("{error}");
        exit(ExitCode::BadOptions)
    });
    console::set_level(config.log);
    println!("boot options: {config}");
    let time = time::init(config.clockevent, config.effective_hz(), config.hrtimer);
    if config.smp > 1 {
        // Every multi-CPU run goes on from the same virtual instant (see `time::anchor`).
        time::anchor::wait();
    }
    let cpus = cpus::bring_up(config.smp, rsdp).unwrap_or_else(|error| match error {
        cpus::BringUpError::Mismatch { asked, found } => {
            let cpus = if found == 1 { "CPU" } else { "CPUs" };
            println!(
                "cfslab: smp={asked} but the machine has {found} {cpus} (its ACPI MADT says \
                 so): give QEMU -smp {asked} (the boot tool's --smp), or smp={found}"
            );
            exit(ExitCode::BadOptions)
        }
        cpus::BringUpError::BadTable { apic_ids, boot } => {
            println!(
                "cfslab: the ACPI MADT lists APIC ids {apic_ids:?}: the boot CPU's ({boot}) \
                 must be there once, and no id twice"
            );
            exit(ExitCode::Failure)
        }
    });
    let topology = if cpus.apic_ids.len() > 1 {
        print_cpus(&cpus);
        let topology = cpus::topology::discover(&cpus.apic_ids, rsdp).unwrap_or_else(|why| {
            println!("cfslab: the machine's topology cannot be built: {why}");
            exit(ExitCode::BadOptions)
        });
        println!("{}", cpus::topology::result_line(&topology));
        topology
    } else {
        ::sched::smp::topology::Topology::flat(1)
    };
    sched::init(&config, &cpus.online_cpus(), topology);
    Boot {
        config,
        memory,
        time,
        cpus,
        kernel_image_offset,
    }
}

/// One line for the CPUs, and one for each that did not come up.
fn print_cpus(cpus: &cpus::CpuReport) {
    for &cpu in &cpus.silent {
        println!(
            "cfslab: CPU {cpu} (APIC id {}) did not come up, did not answer an IPI, or has not \
             the boot CPU's registers for ring 3; the run goes on without it",
            cpus.apic_ids[cpu]
        );
    }
    println!(
        "cpus: {} of {} online (APIC ids {:?}), each answering IPIs and scheduling tasks of its \
         own",
        cpus.online(),
        cpus.apic_ids.len(),
        cpus.apic_ids
    );
}

/// Reads the boot options from fw_cfg; none given means all defaults.
fn read_config() -> Result<Config, OptionError> {
    let mut buf = [0u8; config::MAX_CMDLINE_BYTES];
    match fw_cfg::read_file(config::FW_CFG_NAME, &mut buf) {
        Ok(Some(len)) => Config::parse_bytes(&buf[..len]),
        Ok(None) => Ok(Config::default()),
        Err(FwCfgError::TooLarge { size, .. }) => Err(OptionError::too_long(size)),
    }
}

#[cfg(test)]
bootloader_api::entry_point!(test_kernel_main, config = &BOOTLOADER_CONFIG);

#[cfg(test)]
fn test_kernel_main(boot_info: &'static mut BootInfo) -> ! {
    init(boot_info);
    test_main();
    exit(ExitCode::Success)
}

#[cfg(test)]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    testing::test_panic_handler(info)
}
