//! Starting an application processor (Linux's `do_boot_cpu` and the real-mode trampoline of
//! arch/x86/realmode/rm/trampoline_64.S, in spirit). An AP wakes from INIT in 16-bit real
//! mode at the page a STARTUP IPI names, so its first code must lie below 1 MiB: the
//! trampoline below is copied to [`TRAMPOLINE`] (which the frame allocator never hands out)
//! and climbs 16 → 32 → 64 bits:
//!
//! 1. real mode: load the trampoline's own GDT, set CR0.PE, far-jump to 32-bit code;
//! 2. protected mode: CR4.PAE, CR3 = the kernel's page tables, EFER.LME and NXE (the kernel's
//!    pages use the no-execute bit), CR0.PG and WP, far-jump to 64-bit code;
//! 3. long mode: the stack, the argument and the entry the boot CPU wrote into the
//!    trampoline's parameters; jump to the entry, in the kernel's upper half.
//!
//! Paging is turned on while the AP runs at the trampoline's physical address, so the boot
//! CPU maps that page at the same virtual address for the while (`crate::cpus`). The
//! trampoline's GDT stays the AP's until it loads its own.

use super::apic;

/// The trampoline's physical page: a STARTUP IPI's vector is the page number (0x08).
pub const TRAMPOLINE: u64 = 0x8000;

/// Where the trampoline keeps its data, from its start: the assembler cannot name one label
/// relative to another inside a memory operand, so the data sits at fixed offsets (`.org`
/// fails the build if the code before it grows past them) and the code addresses it as
/// `TRAMPOLINE + offset`.
const GDT_AT: u64 = 0x08;
const GDTR_AT: u64 = 0x28;
const PARAMS_AT: u64 = 0x30;
const CODE_AT: u64 = 0x50;

core::arch::global_asm!(
    ".section .rodata.ap_trampoline, \"a\"",
    ".balign 4096",
    ".global ap_trampoline_start",
    ".global ap_trampoline_end",
    "ap_trampoline_start:",
    ".code16",
    "jmp ap_real_mode",
    // Null, 32-bit code, 64-bit code, data: flat, ring 0.
    ".org {gdt_at}",
    "ap_gdt:",
    ".quad 0",
    ".quad 0x00cf9a000000ffff",
    ".quad 0x00af9a000000ffff",
    ".quad 0x00cf92000000ffff",
    ".org {gdtr_at}",
    ".word 4 * 8 - 1",
    ".long {base} + {gdt_at}",
    // Written by the boot CPU for each AP: CR3, stack top, argument, entry.
    ".org {params_at}",
    ".quad 0, 0, 0, 0",
    ".org {code_at}",
    "ap_real_mode:",
    "cli",
    "cld",
    "xor ax, ax",
    "mov ds, ax",
    "lgdt [{base} + {gdtr_at}]",
    "mov eax, cr0",
    "or eax, 1",
    "mov cr0, eax",
    // ljmp 0x08:pm32, with a 32-bit offset.
    ".byte 0x66, 0xea",
    ".long ap_pm32 - ap_trampoline_start + {base}",
    ".word 0x08",
    ".code32",
    "ap_pm32:",
    "mov ax, 0x18",
    "mov ds, ax",
    "mov es, ax",
    "mov ss, ax",
    "mov eax, cr4",
    "or eax, 1 << 5",
    "mov cr4, eax",
    "mov eax, [{base} + {params_at}]",
    "mov cr3, eax",
    "mov ecx, 0xc0000080",
    "rdmsr",
    "or eax, (1 << 8) | (1 << 11)",
    "wrmsr",
    // CR0 whole, not or-ed into the value INIT left (which has caching off): PE, MP, ET,
    // NE, WP and PG, as the boot CPU runs.
    "mov eax, (1 << 31) | (1 << 16) | (1 << 5) | (1 << 4) | (1 << 1) | 1",
    "mov cr0, eax",
    // ljmp 0x10:lm64.
    ".byte 0xea",
    ".long ap_lm64 - ap_trampoline_start + {base}",
    ".word 0x10",
    ".code64",
    "ap_lm64:",
    "mov rsp, [{base} + {params_at} + 8]",
    "mov rdi, [{base} + {params_at} + 16]",
    "mov rax, [{base} + {params_at} + 24]",
    "jmp rax",
    "ap_trampoline_end:",
    ".text",
    base = const TRAMPOLINE,
    gdt_at = const GDT_AT,
    gdtr_at = const GDTR_AT,
    params_at = const PARAMS_AT,
    code_at = const CODE_AT,
);

unsafe extern "C" {
    static ap_trampoline_start: u8;
    static ap_trampoline_end: u8;
}

/// What an AP is started with: its page tables, its stack, the argument and the function
/// it runs (never returning; interrupts are off).
pub struct StartParams {
    pub cr3: u64,
    pub stack_top: u64,
    pub argument: u64,
    pub entry: extern "C" fn(u64) -> !,
}

/// Copies the trampoline to [`TRAMPOLINE`] with `params` in it, reached through `page`, the
/// kernel's view of that physical page.
///
/// # Safety
/// `page` must map the physical page [`TRAMPOLINE`], which nothing else uses, and no AP may
/// be running the trampoline while it is rewritten.
pub unsafe fn install_trampoline(page: *mut u8, params: &StartParams) {
    assert!(
        params.cr3 < 1 << 32,
        "the trampoline loads CR3 in 32-bit mode"
    );
    let start = &raw const ap_trampoline_start;
    // SAFETY: the two symbols are the trampoline's bounds in .rodata, start first.
    let len = unsafe { (&raw const ap_trampoline_end).offset_from(start) as usize };
    let params_at = PARAMS_AT as usize;
    assert!(len <= 4096, "the trampoline fits in its page");
    let words = [
        params.cr3,
        params.stack_top,
        params.argument,
        params.entry as usize as u64,
    ];
    // SAFETY: `page` is the trampoline's page (the caller's promise), `len` bytes fit in it,
    // and the parameters are 8-byte words within the copied bytes.
    unsafe {
        core::ptr::copy_nonoverlapping(start, page, len);
        let slots = page.add(params_at).cast::<u64>();
        for (i, word) in words.iter().enumerate() {
            slots.add(i).write_unaligned(*word);
        }
    }
}

/// Sends the CPU of APIC id `apic_id` INIT, waits `init_wait` (10 ms, as the MP
/// specification asks of old CPUs), then a STARTUP IPI at the trampoline.
pub fn start(apic_id: u8, init_wait: impl Fn()) {
    apic::send_init(apic_id);
    init_wait();
    apic::send_startup(apic_id, (TRAMPOLINE / 4096) as u8);
}
