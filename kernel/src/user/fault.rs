//! A program that faults — touches memory it does not have, executes a privileged or
//! invalid instruction, divides by zero — gets the signal Linux would send, with Linux's
//! `siginfo` (arch/x86/kernel/traps.c and arch/x86/mm/fault.c, 6.1): its handler runs if
//! it has one (`user::signal::deliver_fault`), which may `siglongjmp` out or move the
//! `ucontext`'s rip on and return. Without one — or with the signal blocked or ignored,
//! which a fault overrides — the process is killed by it, with the line Linux's
//! `show_signal_msg` prints; its parent's wait sees the signal, and the kernel goes on.
//!
//! A general-protection fault may first be an instruction UMIP forbids, which Linux answers
//! for the program instead (`umip`).

use crate::arch::user_mode::TrapFrame;
use crate::println;
use crate::sched::proc::exit;
use crate::sched::proc::sighand::{SI_KERNEL, SigInfo};
use crate::user::signal::frame::TrapState;

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
const SIGBUS: u8 = 7;
const SIGFPE: u8 = 8;
const SIGSEGV: u8 = 11;

/// `si_code` values of the faults (Linux's uapi/asm-generic/siginfo.h).
const ILL_ILLOPN: i32 = 2;
const FPE_INTDIV: i32 = 1;
const BUS_ADRALN: i32 = 1;
const SEGV_MAPERR: i32 = 1;
const SEGV_ACCERR: i32 = 2;
const TRAP_BRKPT: i32 = 1;
const TRAP_TRACE: i32 = 2;
const TRAP_HWBKPT: i32 = 4;

/// The signal Linux sends for exception `vector` in user mode.
fn signal_for(vector: u8) -> u8 {
    match vector {
        0 => SIGFPE,            // #DE
        1 | 3 => SIGTRAP,       // #DB, #BP
        6 => SIGILL,            // #UD
        11 | 12 | 17 => SIGBUS, // #NP, #SS, #AC
        16 | 19 => SIGFPE,      // #MF, #XM
        _ => SIGSEGV,           // #PF, #GP, ...
    }
}

/// The `siginfo` Linux sends with `fault`'s signal: the code, and the address — the
/// faulting one for a page fault, the instruction's for a divide error, an invalid opcode
/// and a floating-point error, and none (SI_KERNEL) for a general-protection fault or a
/// breakpoint, which Linux sends with `force_sig`.
fn info_for(fault: &UserFault) -> SigInfo {
    let (code, addr) = match fault.vector {
        0 => (FPE_INTDIV, fault.ip),
        // A single step, a hardware breakpoint, or `icebp` (Linux's `get_si_code`).
        1 => {
            let status = crate::arch::user_state::take_debug_status();
            let code = match status {
                s if s & 1 << 14 != 0 => TRAP_TRACE,
                s if s & 0xf != 0 => TRAP_HWBKPT,
                _ => TRAP_BRKPT,
            };
            (code, fault.ip)
        }
        6 => (ILL_ILLOPN, fault.ip),
        14 => {
            let address = fault.address.unwrap_or(0);
            // A page the program has, but not for this access (Linux: a mapping that
            // does not allow it); a kernel address is not the program's at all.
            let present = fault.error_code & 1 != 0;
            let code = if present && address < super::address_space::USER_END {
                SEGV_ACCERR
            } else {
                SEGV_MAPERR
            };
            (code, address)
        }
        16 => (crate::arch::user_state::x87_exception_code(), fault.ip),
        19 => (crate::arch::user_state::simd_exception_code(), fault.ip),
        17 => (BUS_ADRALN, 0),
        _ => (SI_KERNEL, 0),
    };
    SigInfo {
        code,
        addr,
        ..SigInfo::default()
    }
}

/// The fault as `sigcontext` reports it: for a kernel address, Linux adds the protection
/// bit to the page fault's error code (the program must not learn which kernel pages are
/// there).
fn trap_state(fault: &UserFault) -> TrapState {
    let address = fault.address.unwrap_or(0);
    let hidden = fault.vector == 14 && address >= super::address_space::USER_END;
    TrapState {
        number: u64::from(fault.vector),
        error: fault.error_code | u64::from(hidden),
        cr2: address,
    }
}

/// The signal for `fault`, which the running thread caused with the registers `regs`: its
/// handler, if it has one, is to run on the way back to ring 3 (`regs` point at it now);
/// else the process dies of it here.
pub fn deliver(regs: &mut TrapFrame, fault: &UserFault) {
    if fault.vector == 13 {
        match super::umip::emulate(regs) {
            super::umip::Emulated::No => {}
            super::umip::Emulated::Done => return,
            // The store the emulation could not make: a page fault there, written by the
            // program (error 6), is what the program hears of.
            super::umip::Emulated::Fault(address) => {
                let store = UserFault {
                    vector: 14,
                    name: "page fault",
                    error_code: 6,
                    address: Some(address),
                    ..*fault
                };
                return deliver(regs, &store);
            }
        }
    }
    let icebp = fault.vector == 6 && is_icebp(fault.ip);
    // The line names the instruction that faulted.
    let line = if icebp {
        UserFault {
            vector: 1,
            name: "debug",
            ..*fault
        }
    } else {
        *fault
    };
    let mut reported = line;
    if icebp {
        // A trap, on a CPU that has it: the handler sees the instruction after it.
        regs.rip += 1;
        reported.ip = regs.rip;
    }
    let signal = signal_for(line.vector);
    let (info, trap) = (info_for(&reported), trap_state(&reported));
    if let Err(unhandled) = crate::user::signal::deliver_fault(regs, signal, info, trap) {
        if unhandled.0 && may_print() {
            print_line(&line);
        }
        exit::die(signal)
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

/// Kills the running process for `fault` (from the exception handler, interrupts off),
/// whatever its handlers: for the exceptions no program is expected to cause.
pub fn kill(fault: &UserFault) -> ! {
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
