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
use core::fmt;

mod numa;
pub use numa::{Numa, numa};

/// Why the CPUs could not be read from the firmware's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AcpiError {
    /// The bootloader found no RSDP.
    NoRsdp,
    /// A table's signature or checksum is wrong (its signature).
    BadTable(&'static str),
    /// No MADT among the tables.
    NoMadt,
}

impl fmt::Display for AcpiError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            AcpiError::NoRsdp => write!(f, "the firmware gave no ACPI RSDP"),
            AcpiError::BadTable(name) => write!(f, "the ACPI {name} table is malformed"),
            AcpiError::NoMadt => write!(f, "the ACPI tables have no MADT (APIC)"),
        }
    }
}

/// Physical memory as the kernel sees it: every byte at `offset + address`, where
/// `mapped` says a page is there.
struct Physical<'a> {
    offset: u64,
    mapped: &'a dyn Fn(u64) -> bool,
}

impl Physical<'_> {
    /// `len` bytes at physical `address`; an error (`what`'s table is malformed) if any of
    /// their pages is not mapped, so that a table pointing anywhere is an error, not a
    /// page fault.
    fn bytes(
        &self,
        address: u64,
        len: usize,
        what: &'static str,
    ) -> Result<&'static [u8], AcpiError> {
        let bad = AcpiError::BadTable(what);
        let end = address.checked_add(len as u64).ok_or(bad)?;
        let start = self.offset.checked_add(address).ok_or(bad)?;
        self.offset.checked_add(end).ok_or(bad)?;
        let first_page = start & !0xfff;
        let last = start + len.max(1) as u64 - 1;
        if !(first_page..=last)
            .step_by(4096)
            .all(|page| (self.mapped)(page))
        {
            return Err(bad);
        }
        // SAFETY: every page of the range is mapped (checked above), in the bootloader's
        // map of physical memory; read-only use: the firmware's tables are never written.
        Ok(unsafe { core::slice::from_raw_parts(start as *const u8, len) })
    }

    fn u32_at(&self, address: u64, what: &'static str) -> Result<u32, AcpiError> {
        Ok(u32::from_le_bytes(
            self.bytes(address, 4, what)?.try_into().expect("4 bytes"),
        ))
    }

    /// The table at `address`, whole (its length is at offset 4 of its header), if its
    /// signature is `signature` and its bytes add up to zero.
    fn table(&self, address: u64, signature: &'static str) -> Result<&'static [u8], AcpiError> {
        let header = self.bytes(address, 36, signature)?;
        let length = self.u32_at(address + 4, signature)? as usize;
        if &header[..4] != signature.as_bytes() || !(36..=1 << 20).contains(&length) {
            return Err(AcpiError::BadTable(signature));
        }
        let table = self.bytes(address, length, signature)?;
        let sum = table.iter().fold(0u8, |sum, b| sum.wrapping_add(*b));
        if sum != 0 {
            return Err(AcpiError::BadTable(signature));
        }
        Ok(table)
    }
}

impl Physical<'_> {
    /// The address of the table signed `signature` among those the root table lists
    /// (`rsdp`: the RSDP's physical address), if there is one.
    fn find(&self, rsdp: Option<u64>, signature: [u8; 4]) -> Result<Option<u64>, AcpiError> {
        let rsdp = rsdp.ok_or(AcpiError::NoRsdp)?;
        let head = self.bytes(rsdp, 20, "RSDP")?;
        if &head[..8] != b"RSD PTR " || head.iter().fold(0u8, |s, b| s.wrapping_add(*b)) != 0 {
            return Err(AcpiError::BadTable("RSDP"));
        }
        // Revision 2 and later point at the XSDT (64-bit entries); the first, at the RSDT.
        let (root, name, entry_size) = if head[15] >= 2 {
            let xsdt = self.bytes(rsdp + 24, 8, "RSDP")?;
            let xsdt = u64::from_le_bytes(xsdt.try_into().expect("8 bytes"));
            (xsdt, "XSDT", 8)
        } else {
            (u64::from(self.u32_at(rsdp + 16, "RSDP")?), "RSDT", 4)
        };
        let root = self.table(root, name)?;
        Ok(root[36..]
            .chunks_exact(entry_size)
            .map(|entry| {
                let mut address = [0u8; 8];
                address[..entry_size].copy_from_slice(entry);
                u64::from_le_bytes(address)
            })
            .find(|&address| self.bytes(address, 4, name) == Ok(&signature[..])))
    }
}

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
