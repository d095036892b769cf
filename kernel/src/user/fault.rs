//! A program that faults — touches memory it does not have, executes a privileged or
//! invalid instruction, divides by zero — is killed by the signal Linux would send, with the
//! line Linux's `show_signal_msg` prints; its parent's wait sees the signal, and the kernel
//! goes on.

use super::process;
use crate::println;

/// What the exception handler saw.
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

/// Kills the running process for `fault` (from the exception handler, interrupts off).
pub fn kill(fault: &UserFault) -> ! {
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
    process::die(signal_for(fault.vector))
}
