//! A set of CPUs (Linux's `cpumask_t`): one bit per CPU, so up to 64 — the Wasted Cores
//! paper's machine, and more than QEMU's guests here.

use core::fmt;

/// The most CPUs a [`CpuSet`] holds.
pub const MAX_CPUS: usize = 64;

/// A set of CPUs, by index.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CpuSet(u64);

impl CpuSet {
    /// No CPU.
    pub const EMPTY: CpuSet = CpuSet(0);

    /// The set whose bits are `bits` (CPU `i` is bit `i`).
    pub const fn from_bits(bits: u64) -> CpuSet {
        CpuSet(bits)
    }

    /// CPUs `0..n`.
    pub fn first(n: usize) -> CpuSet {
        assert!(n <= MAX_CPUS, "{n} CPUs: at most {MAX_CPUS}");
        CpuSet(if n == MAX_CPUS {
            u64::MAX
        } else {
            (1 << n) - 1
        })
    }

    /// CPU `cpu` alone.
    pub fn one(cpu: usize) -> CpuSet {
        assert!(cpu < MAX_CPUS, "CPU {cpu}: at most {MAX_CPUS}");
        CpuSet(1 << cpu)
    }

    /// The bits (CPU `i` is bit `i`).
    pub fn bits(self) -> u64 {
        self.0
    }

    /// Whether `cpu` is in the set.
    pub fn contains(self, cpu: usize) -> bool {
        cpu < MAX_CPUS && self.0 & 1 << cpu != 0
    }

    /// The set with `cpu` added.
    pub fn with(self, cpu: usize) -> CpuSet {
        self | CpuSet::one(cpu)
    }

    /// The set without `cpu`.
    pub fn without(self, cpu: usize) -> CpuSet {
        CpuSet(self.0 & !CpuSet::one(cpu).0)
    }

    /// How many CPUs (`cpus_weight`).
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The lowest CPU (`first_cpu`).
    pub fn lowest(self) -> Option<usize> {
        (self.0 != 0).then(|| self.0.trailing_zeros() as usize)
    }

    /// Whether every CPU of `self` is in `other`.
    pub fn is_subset(self, other: CpuSet) -> bool {
        self.0 & !other.0 == 0
    }

    /// The CPUs from `start` upwards, then from the lowest up to it (`for_each_cpu_wrap`).
    pub fn iter_from(self, start: usize) -> impl Iterator<Item = usize> {
        let above = self.iter().filter(move |&c| c >= start);
        above.chain(self.iter().filter(move |&c| c < start))
    }

    /// The CPUs, lowest first.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        let mut rest = self.0;
        core::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let cpu = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            Some(cpu)
        })
    }
}

impl core::ops::BitOr for CpuSet {
    type Output = CpuSet;
    fn bitor(self, other: CpuSet) -> CpuSet {
        CpuSet(self.0 | other.0)
    }
}

impl core::ops::BitAnd for CpuSet {
    type Output = CpuSet;
    fn bitand(self, other: CpuSet) -> CpuSet {
        CpuSet(self.0 & other.0)
    }
}

impl FromIterator<usize> for CpuSet {
    fn from_iter<I: IntoIterator<Item = usize>>(cpus: I) -> CpuSet {
        cpus.into_iter().fold(CpuSet::EMPTY, CpuSet::with)
    }
}

/// As Linux's cpulist: `0-3,8`.
impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut cpus = self.iter().peekable();
        let mut first = true;
        while let Some(start) = cpus.next() {
            let mut end = start;
            while cpus.peek() == Some(&(end + 1)) {
                end = cpus.next().unwrap_or(end);
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if end == start {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
        }
        if first {
            f.write_str("(none)")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::vec::Vec;

    #[test]
    fn sets_read_as_linux_s_cpu_lists() {
        let set: CpuSet = [0, 1, 2, 3, 8, 10, 11].into_iter().collect();
        assert_eq!(format!("{set:?}"), "0-3,8,10-11");
        assert_eq!(set.len(), 7);
        assert_eq!(set.lowest(), Some(0));
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(format!("{:?}", CpuSet::first(64)), "0-63");
        assert!(CpuSet::first(4).is_subset(set) && !set.is_subset(CpuSet::first(4)));
        assert_eq!(
            set.without(8).with(9),
            [0, 1, 2, 3, 9, 10, 11].into_iter().collect()
        );
    }
}
