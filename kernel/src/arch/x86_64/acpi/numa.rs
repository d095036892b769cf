//! The NUMA nodes the firmware describes: ACPI's SRAT (System Resource Affinity Table) says
//! which node — "proximity domain" — each processor's local APIC is in, and the SLIT
//! (System Locality Information Table) how far each node is from each other, 10 meaning
//! "itself" (Linux's `acpi_numa_init`, drivers/acpi/numa/srat.c, and `acpi_parse_slit`).
//! QEMU builds both from `-numa node,cpus=` and `-numa dist`.

use super::tables::{AcpiError, Physical};
use alloc::vec::Vec;

/// The nodes as the firmware gave them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numa {
    /// Each enabled processor's node, by APIC id.
    pub node_of_apic: Vec<(u32, u32)>,
    /// `distance[a][b]`, node `a` to node `b` (10 to itself); empty without a SLIT.
    pub distance: Vec<Vec<u32>>,
}

/// The processors' nodes and the nodes' distances, or `None` if the firmware has no SRAT
/// (a machine of one node).
///
/// # Safety
/// As [`super::processors`].
pub unsafe fn numa(
    rsdp: Option<u64>,
    physical_offset: u64,
    mapped: &dyn Fn(u64) -> bool,
) -> Result<Option<Numa>, AcpiError> {
    let memory = Physical {
        offset: physical_offset,
        mapped,
    };
    let Some(srat) = memory.find(rsdp, *b"SRAT")? else {
        return Ok(None);
    };
    let node_of_apic = affinities(memory.table(srat, "SRAT")?)?;
    // A SLIT that is not a distance matrix is ignored, as Linux's `slit_valid` does: the
    // nodes are then 10 from themselves and 20 from each other.
    let distance = match memory.find(rsdp, *b"SLIT")? {
        Some(slit) => distances(memory.table(slit, "SLIT")?).unwrap_or_default(),
        None => Vec::new(),
    };
    Ok(Some(Numa {
        node_of_apic,
        distance,
    }))
}

/// The SRAT's processor entries: after the header (36 bytes) and 12 reserved bytes, entries
/// of a type and a length. Type 0 is a local APIC's affinity (domain bits 0–7 at 2, APIC
/// id at 3, flags at 4 with bit 0 "enabled", domain bits 8–31 at 9 — read only from the
/// table's revision 2 on, as Linux does); type 2 an x2APIC's (domain at 4, x2APIC id at 8,
/// flags at 12). Memory's (type 1) are not needed here.
fn affinities(srat: &[u8]) -> Result<Vec<(u32, u32)>, AcpiError> {
    let bad = AcpiError::BadTable("SRAT");
    let u32_at = |at: usize| u32::from_le_bytes(srat[at..at + 4].try_into().expect("4 bytes"));
    let mut found = Vec::new();
    let mut at = 48;
    while at + 2 <= srat.len() {
        let (kind, length) = (srat[at], usize::from(srat[at + 1]));
        if length < 2 || at + length > srat.len() {
            return Err(bad);
        }
        match kind {
            0 if length >= 16 && u32_at(at + 4) & 1 != 0 => {
                // Bytes 9..12, read as the top of a u32, from revision 2 (header byte 8).
                let high = if srat[8] >= 2 { u32_at(at + 8) >> 8 } else { 0 };
                let domain = u32::from(srat[at + 2]) | high << 8;
                found.push((u32::from(srat[at + 3]), domain));
            }
            2 if length >= 24 && u32_at(at + 12) & 1 != 0 => {
                found.push((u32_at(at + 8), u32_at(at + 4)));
            }
            _ => {}
        }
        at += length;
    }
    Ok(found)
}

/// The SLIT's matrix: after the header, the number of localities N (8 bytes), then N × N
/// bytes, row by row. Each node is 10 from itself and more than 10 from another, or the
/// table is wrong (Linux's `slit_valid`).
fn distances(slit: &[u8]) -> Result<Vec<Vec<u32>>, AcpiError> {
    let bad = AcpiError::BadTable("SLIT");
    let n = u64::from_le_bytes(slit.get(36..44).ok_or(bad)?.try_into().expect("8 bytes"));
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| (1..=64).contains(&n))
        .ok_or(bad)?;
    let matrix = slit.get(44..44 + n * n).ok_or(bad)?;
    let rows: Vec<Vec<u32>> = matrix
        .chunks_exact(n)
        .map(|row| row.iter().map(|&d| u32::from(d)).collect())
        .collect();
    let sane = (0..n).all(|a| (0..n).all(|b| (rows[a][b] == 10) == (a == b) && rows[a][b] >= 10));
    if !sane {
        return Err(bad);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test_case]
    fn a_local_apic_entry_names_its_node() {
        let mut srat = alloc::vec![0u8; 48];
        // Type 0, length 16: domain 3, APIC id 5, enabled.
        let mut entry = [0u8; 16];
        entry[..5].copy_from_slice(&[0, 16, 3, 5, 1]);
        srat.extend_from_slice(&entry);
        // A disabled one is left out.
        entry[4] = 0;
        srat.extend_from_slice(&entry);
        assert_eq!(affinities(&srat), Ok(alloc::vec![(5, 3)]));
    }

    #[test_case]
    fn a_slit_is_a_matrix_ten_on_its_diagonal() {
        let mut slit = alloc::vec![0u8; 36];
        slit.extend_from_slice(&2u64.to_le_bytes());
        slit.extend_from_slice(&[10, 20, 20, 10]);
        assert_eq!(
            distances(&slit),
            Ok(alloc::vec![alloc::vec![10, 20], alloc::vec![20, 10]])
        );
        let last = slit.len() - 1;
        slit[last] = 20;
        assert_eq!(distances(&slit), Err(AcpiError::BadTable("SLIT")));
    }
}
