//! The CPUs the firmware describes: ACPI's MADT (Multiple APIC Description Table), found
//! from the RSDP the bootloader passes, through the RSDT or XSDT. Each enabled processor has
//! a local APIC entry (type 0) with its APIC id, which is how an INIT and a STARTUP IPI name
//! it (Linux's `acpi_parse_madt` and `acpi_register_lapic`, arch/x86/kernel/acpi/boot.c).
//!
//! Written here rather than taken from the `acpi` crate: that crate's 6.x `Handler` trait asks
//! for some twenty methods (port and PCI access, mutexes, sleeping) for its AML interpreter,
//! of which finding the processors needs one; the walk below is the whole of what is needed.
//! Every table's checksum is checked, and a table that does not fit or does not add up is an
//! error, not a guess.

use alloc::vec::Vec;

mod numa;
mod tables;
pub use numa::{Numa, numa};
pub use tables::AcpiError;
use tables::Physical;

/// The local APIC ids of the enabled processors the MADT lists, in its order (the boot
/// processor among them). `rsdp` is the RSDP's physical address, as the bootloader found it.
///
/// # Safety
/// Physical memory must be mapped at `physical_offset` (the bootloader does, for the
/// kernel's `physical_memory` mapping) wherever `mapped` (a virtual page's address) says.
pub unsafe fn processors(
    rsdp: Option<u64>,
    physical_offset: u64,
    mapped: &dyn Fn(u64) -> bool,
) -> Result<Vec<u8>, AcpiError> {
    let memory = Physical {
        offset: physical_offset,
        mapped,
    };
    let madt = memory.find(rsdp, *b"APIC")?.ok_or(AcpiError::NoMadt)?;
    let madt = memory.table(madt, "APIC")?;
    // After the header (36 bytes), the local APIC's address and flags (8), the entries:
    // type, length, then the entry's own fields.
    let mut ids = Vec::new();
    let mut at = 44;
    while at + 2 <= madt.len() {
        let (kind, length) = (madt[at], usize::from(madt[at + 1]));
        if length < 2 || at + length > madt.len() {
            return Err(AcpiError::BadTable("APIC"));
        }
        // Type 0, a processor's local APIC: ACPI processor id, APIC id, flags (bit 0:
        // enabled).
        if kind == 0 && length >= 8 && madt[at + 4] & 1 != 0 {
            ids.push(madt[at + 3]);
        }
        at += length;
    }
    Ok(ids)
}
