//! Reading ACPI's tables: the RSDP the bootloader found leads to the root table (RSDT or
//! XSDT), which lists the others by physical address; each is checked (signature, length,
//! checksum) before it is read. The MADT (`acpi`) and the SRAT and SLIT (`acpi::numa`) are
//! read through here.

use core::fmt;

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
pub(super) struct Physical<'a> {
    pub(super) offset: u64,
    pub(super) mapped: &'a dyn Fn(u64) -> bool,
}

impl Physical<'_> {
    /// `len` bytes at physical `address`; an error (`what`'s table is malformed) if any of
    /// their pages is not mapped, so that a table pointing anywhere is an error, not a
    /// page fault.
    pub(super) fn bytes(
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

    pub(super) fn u32_at(&self, address: u64, what: &'static str) -> Result<u32, AcpiError> {
        Ok(u32::from_le_bytes(
            self.bytes(address, 4, what)?.try_into().expect("4 bytes"),
        ))
    }

    /// The table at `address`, whole (its length is at offset 4 of its header), if its
    /// signature is `signature` and its bytes add up to zero.
    pub(super) fn table(
        &self,
        address: u64,
        signature: &'static str,
    ) -> Result<&'static [u8], AcpiError> {
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
    pub(super) fn find(
        &self,
        rsdp: Option<u64>,
        signature: [u8; 4],
    ) -> Result<Option<u64>, AcpiError> {
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
