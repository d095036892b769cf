//! What the CPU says of itself through CPUID, for `/proc/cpuinfo`: the vendor, the family,
//! model and stepping, the brand string, the highest basic leaf.

use alloc::string::String;
use core::arch::x86_64::{__cpuid, CpuidResult};

/// The identity of the running CPU.
pub struct Identity {
    pub vendor: String,
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    pub brand: String,
    pub max_leaf: u32,
}

/// CPUID's registers for leaf `n` (sub-leaf 0). The one place the basic CPUID call is made,
/// so that its SAFETY argument is written once (`debugger_nmi` reads the APIC id through it).
pub(super) fn leaf(n: u32) -> CpuidResult {
    // SAFETY: CPUID exists on every x86_64 CPU and only reads identification registers.
    #[allow(unused_unsafe)]
    unsafe {
        __cpuid(n)
    }
}

/// Text from CPUID's registers, in the order given, without trailing NULs or spaces.
fn text(words: &[u32]) -> String {
    let bytes: alloc::vec::Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    String::from_utf8_lossy(&bytes)
        .trim_end_matches(['\0', ' '])
        .trim_start()
        .into()
}

/// Reads the running CPU's identity. Family and model add the extended fields as the SDM
/// says (extended family when the family is 15; extended model when it is 6 or 15).
pub fn identity() -> Identity {
    let basic = leaf(0);
    let signature = leaf(1).eax;
    let base_family = signature >> 8 & 0xf;
    let family = if base_family == 15 {
        base_family + (signature >> 20 & 0xff)
    } else {
        base_family
    };
    let mut model = signature >> 4 & 0xf;
    if base_family == 6 || base_family == 15 {
        model += (signature >> 16 & 0xf) << 4;
    }
    let brand = if leaf(0x8000_0000).eax >= 0x8000_0004 {
        let parts = [leaf(0x8000_0002), leaf(0x8000_0003), leaf(0x8000_0004)];
        text(
            &parts
                .iter()
                .flat_map(|r| [r.eax, r.ebx, r.ecx, r.edx])
                .collect::<alloc::vec::Vec<_>>(),
        )
    } else {
        String::new()
    };
    Identity {
        vendor: text(&[basic.ebx, basic.edx, basic.ecx]),
        family,
        model,
        stepping: signature & 0xf,
        brand,
        max_leaf: basic.eax,
    }
}

/// How an APIC id splits into thread, core and package (CPUID leaf 0xB, the extended
/// topology enumeration): shifted right by `smt_shift` it numbers the core, by
/// `package_shift` the package (Linux's `detect_extended_topology`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApicSplit {
    pub smt_shift: u32,
    pub package_shift: u32,
}

/// The running CPU's [`ApicSplit`], if it has leaf 0xB (each sub-leaf gives a level's type
/// in ECX bits 8–15 — 1 SMT, 2 core — and in EAX bits 0–4 the shift past that level).
pub fn apic_split() -> Option<ApicSplit> {
    if leaf(0).eax < 0xb {
        return None;
    }
    // As Linux's `detect_extended_topology`: a leaf whose first level reports no logical
    // processors (EBX bits 0–15) is not implemented, whatever it returns.
    // SAFETY: as `leaf`; the leaf exists (checked above).
    #[allow(unused_unsafe)]
    if unsafe { core::arch::x86_64::__cpuid_count(0xb, 0) }.ebx & 0xffff == 0 {
        return None;
    }
    let level = |n: u32| {
        // SAFETY: as `leaf`; the leaf exists (checked above).
        #[allow(unused_unsafe)]
        let r = unsafe { core::arch::x86_64::__cpuid_count(0xb, n) };
        (r.ecx >> 8 & 0xff, r.eax & 0x1f)
    };
    let (mut smt_shift, mut package_shift) = (None, None);
    for n in 0..8 {
        match level(n) {
            (0, _) => break,
            (1, shift) => smt_shift = Some(shift),
            (_, shift) => package_shift = Some(shift),
        }
    }
    let smt_shift = smt_shift.unwrap_or(0);
    Some(ApicSplit {
        smt_shift,
        package_shift: package_shift.unwrap_or(smt_shift),
    })
}
