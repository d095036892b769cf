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

fn leaf(n: u32) -> CpuidResult {
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
