//! A program that faults — touches memory it does not have, executes a privileged or
//! invalid instruction, divides by zero — is killed by the signal Linux would send, with the
//! line Linux's `show_signal_msg` prints; its parent's wait sees the signal, and the kernel
//! goes on.

use crate::println;
use crate::sched::proc::exit;

/// What the exception handler saw.
#[derive(Clone, Copy)]
pub struct UserFault {
    pub vector: u8,
    pub name: &'static str,
    pub error_code: u64,
    pub ip: u64,
    pub sp: u64,
    /// CR2, for a page fault.
    pub address: Option<u64>,
}

const SIGILL: u8 = 4;
const SIGTRAP: u8 = 5;
const SIGFPE: u8 = 8;
const SIGSEGV: u8 = 11;

/// The signal Linux sends for exception `vector` in user mode.
fn signal_for(vector: u8) -> u8 {
    match vector {
        0 => SIGFPE,       // #DE
        1 | 3 => SIGTRAP,  // #DB, #BP
        6 => SIGILL,       // #UD
        16 | 19 => SIGFPE, // #MF, #XM
        _ => SIGSEGV,      // #PF, #GP, #SS, #NP, #AC, ...
    }
}

/// How many fault lines may be printed in a burst, and the interval that refills it: Linux
/// prints them through `printk_ratelimit` (10 per 5 s), so a fuzzer whose children crash by
/// the thousand cannot flood the console.
const BURST: u32 = 10;
const INTERVAL_NS: u64 = 5_000_000_000;

/// (start of the current interval, lines printed in it, lines suppressed in it).
static RATE: spin::Mutex<(u64, u32, u32)> = spin::Mutex::new((0, 0, 0));

/// Whether a fault line may be printed now; says how many were suppressed when a new
/// interval begins.
fn may_print() -> bool {
    let now = crate::time::clock::now();
    let mut rate = RATE.lock();
    let (start, printed, suppressed) = &mut *rate;
    if now.saturating_sub(*start) >= INTERVAL_NS {
        if *suppressed > 0 {
            println!("show_signal_msg: {suppressed} callbacks suppressed");
        }
        (*start, *printed, *suppressed) = (now, 0, 0);
    }
    if *printed < BURST {
        *printed += 1;
        true
    } else {
        *suppressed += 1;
        false
    }
}

/// Kills the running process for `fault` (from the exception handler, interrupts off).
pub fn kill(fault: &UserFault) -> ! {
    let debug = UserFault {
        vector: 1,
        name: "debug",
        ..*fault
    };
    let fault = if fault.vector == 6 && is_icebp(fault.ip) {
        &debug
    } else {
        fault
    };
    if may_print() {
        print_line(fault);
    }
    exit::die(signal_for(fault.vector))
}

/// Whether the instruction at `ip` is `icebp` (0xf1). Every x86 CPU takes it as a trap to
/// the debugger (#DB, so SIGTRAP on Linux), but QEMU 7.2's TCG does not decode it and raises
/// #UD instead; the instruction's byte tells the two apart.
fn is_icebp(ip: u64) -> bool {
    const ICEBP: u8 = 0xf1;
    let mut byte = [0u8];
    crate::sched::current_address_space()
        .is_some_and(|space| space.read(ip, &mut byte).is_ok() && byte[0] == ICEBP)
}

/// Linux's line for a fault in ring 3.
fn print_line(fault: &UserFault) {
    let name = crate::sched::current_name();
    let pid = crate::task::pid_of(crate::sched::current());
    match fault.address {
        Some(address) => println!(
            "{name}[{pid}]: segfault at {address:x} ip {:016x} sp {:016x} error {:x}",
            fault.ip, fault.sp, fault.error_code
        ),
        None => println!(
            "traps: {name}[{pid}] {} ip:{:x} sp:{:x} error:{:x}",
            fault.name, fault.ip, fault.sp, fault.error_code
        ),
    }
}
