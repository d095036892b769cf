//! `crash WHAT`: faults on purpose, so that the tests can check that only the program dies
//! (with the signal Linux would send) and the kernel goes on. WHAT is one of `null` (write
//! to address 0), `kernel` (read the kernel's memory), `cli` and `hlt` (privileged
//! instructions), `ud2` (an invalid opcode), `div0` (divide by zero), `int3` and `icebp`
//! (a debugger's breakpoint and the in-circuit emulator's, which Linux turns into SIGTRAP),
//! `sgdt` (where the kernel's GDT is: with UMIP, a fault).

#![no_std]
#![no_main]

use rt::println;

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    let what = args.str(1).unwrap_or("");
    println!("crash: {what}");
    // SAFETY: none of these is safe; each is meant to fault, and the kernel kills us.
    unsafe {
        match what {
            "null" => core::ptr::write_volatile(core::ptr::null_mut::<u64>(), 1),
            "kernel" => {
                core::ptr::read_volatile(0xffff_ffff_8000_0000 as *const u64);
            }
            "cli" => core::arch::asm!("cli"),
            "hlt" => core::arch::asm!("hlt"),
            "ud2" => core::arch::asm!("ud2"),
            "int3" => core::arch::asm!("int3"),
            "icebp" => core::arch::asm!(".byte 0xf1"),
            "sgdt" => {
                let mut table = [0u8; 10];
                core::arch::asm!("sgdt [{}]", in(reg) table.as_mut_ptr());
                let base = u64::from_le_bytes(table[2..].try_into().unwrap());
                println!("crash: the GDT is at {base:#x}");
            }
            "div0" => {
                core::arch::asm!("xor edx, edx", "xor ecx, ecx", "div rcx", out("rax") _, out("rdx") _, out("rcx") _)
            }
            _ => {
                println!("usage: crash null|kernel|cli|hlt|ud2|div0|int3|icebp|sgdt");
                return 2;
            }
        }
    }
    println!("crash: {what} did not fault");
    1
}
