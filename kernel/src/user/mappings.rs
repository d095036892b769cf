//! Where a process's anonymous mappings are: the address ranges `mmap` has handed out and
//! `munmap` has not taken back, merged where they touch. This is what Linux's VMAs (its
//! maple tree of `vm_area_struct`s) tell `get_unmapped_area`, reduced to what cfslab needs:
//! which addresses are taken. The protection of each page is in the page table itself.
//!
//! A new mapping goes at the highest free range below the top of the mmap area that is
//! long enough, as Linux's `unmapped_area_topdown` (mm/mmap.c, 6.1) places it. So an
//! address `munmap` gives back is used again: a program that maps and unmaps in a loop
//! keeps reusing the same few addresses, and the page tables under them, rather than
//! marching down through the address space.
//!
//! The search walks the ranges from the top, so it costs the number of ranges above the
//! gap it finds; Linux keeps the largest gap below each node of its tree to make that
//! logarithmic. Merging keeps the list short: a program's mappings that touch are one range.

use alloc::collections::BTreeMap;
use alloc::sync::Arc;

/// Taken ranges, `start → end` (page-aligned, end exclusive), none touching another. A
/// fork shares the parent's ranges until either side changes them (`Arc::make_mut`): most
/// children exit or exec first, and then nothing is copied.
#[derive(Debug, Clone, Default)]
pub struct Mappings {
    ranges: Arc<BTreeMap<u64, u64>>,
}

impl Mappings {
    /// Whether any taken range overlaps `start..end`.
    pub fn overlaps(&self, start: u64, end: u64) -> bool {
        // The last range starting before `end` is the only one that can reach into it.
        self.ranges
            .range(..end)
            .next_back()
            .is_some_and(|(_, &range_end)| range_end > start)
    }

    /// The highest `len` bytes free within `floor..ceiling`, if there is room.
    pub fn find_top_down(&self, len: u64, floor: u64, ceiling: u64) -> Option<u64> {
        let room_above = |bottom: u64, top: u64| top >= bottom.saturating_add(len);
        // `top` is the upper end of the gap under consideration: first the ceiling, then
        // the start of each range, walking down.
        let mut top = ceiling;
        for (&start, &end) in self.ranges.range(..ceiling).rev() {
            if room_above(end.max(floor), top) {
                return Some(top - len);
            }
            top = top.min(start);
            if !room_above(floor, top) {
                return None;
            }
        }
        room_above(floor, top).then(|| top - len)
    }

    /// Marks `start..end` taken, merging it with the ranges it touches or overlaps.
    pub fn insert(&mut self, start: u64, end: u64) {
        let (mut start, mut end) = (start, end);
        // Every range that overlaps or touches `start..end` starts at or before `end`
        // and ends at or after `start`.
        let touching: alloc::vec::Vec<(u64, u64)> = self
            .ranges
            .range(..=end)
            .rev()
            .take_while(|(_, range_end)| **range_end >= start)
            .map(|(&s, &e)| (s, e))
            .collect();
        let ranges = Arc::make_mut(&mut self.ranges);
        for (s, e) in touching {
            ranges.remove(&s);
            start = start.min(s);
            end = end.max(e);
        }
        ranges.insert(start, end);
    }

    /// Marks `start..end` free: ranges inside it go, ranges across its ends are cut.
    pub fn remove(&mut self, start: u64, end: u64) {
        let overlapping: alloc::vec::Vec<(u64, u64)> = self
            .ranges
            .range(..end)
            .rev()
            .take_while(|(_, range_end)| **range_end > start)
            .map(|(&s, &e)| (s, e))
            .collect();
        if overlapping.is_empty() {
            return;
        }
        let ranges = Arc::make_mut(&mut self.ranges);
        for (s, e) in overlapping {
            ranges.remove(&s);
            if s < start {
                ranges.insert(s, start);
            }
            if e > end {
                ranges.insert(end, e);
            }
        }
    }

    /// Whether no range is taken (the tests' check that every range went back).
    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u64 = 4096;

    fn ranges(m: &Mappings) -> alloc::vec::Vec<(u64, u64)> {
        m.ranges.iter().map(|(&s, &e)| (s, e)).collect()
    }

    /// Mapping top-down from the ceiling, then freeing the middle one: the next mapping
    /// of its size goes back into its hole (addresses are reused, as in Linux).
    #[test_case]
    fn a_freed_range_is_found_again() {
        let mut m = Mappings::default();
        let (floor, top) = (100 * P, 200 * P);
        for expected in [199 * P, 198 * P, 197 * P] {
            let at = m.find_top_down(P, floor, top).unwrap();
            assert_eq!(at, expected);
            m.insert(at, at + P);
        }
        assert_eq!(
            ranges(&m),
            [(197 * P, 200 * P)],
            "touching ranges are merged"
        );
        m.remove(198 * P, 199 * P);
        assert_eq!(ranges(&m), [(197 * P, 198 * P), (199 * P, 200 * P)]);
        assert_eq!(m.find_top_down(P, floor, top), Some(198 * P), "the hole");
        assert_eq!(
            m.find_top_down(2 * P, floor, top),
            Some(195 * P),
            "too small a hole"
        );
        assert!(m.overlaps(198 * P - 1, 198 * P + 1));
        assert!(!m.overlaps(198 * P, 199 * P));
    }

    /// No room: between the floor and the lowest range, and above a full area.
    #[test_case]
    fn no_room_is_none() {
        let mut m = Mappings::default();
        m.insert(10 * P, 20 * P);
        assert_eq!(m.find_top_down(P, 10 * P, 20 * P), None);
        assert_eq!(m.find_top_down(3 * P, 8 * P, 20 * P), None);
        assert_eq!(m.find_top_down(2 * P, 8 * P, 20 * P), Some(8 * P));
        m.remove(0, u64::MAX);
        assert!(m.is_empty());
    }
}
