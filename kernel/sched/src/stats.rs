//! Summaries of latency samples: min, average, percentiles, max (the figures cyclictest
//! and schbench print). Pure arithmetic, shared by the host simulator and the kernel's lab.

use alloc::vec::Vec;

/// A summary of a set of nanosecond samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Smallest sample.
    pub min: u64,
    /// Mean (rounded down).
    pub avg: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest sample.
    pub max: u64,
}

/// The `per_mille`-th per-mille (0–1000) of sorted samples, nearest-rank.
pub fn per_mille(sorted: &[u64], per_mille: u64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (per_mille * sorted.len() as u64).div_ceil(1000).max(1) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

impl Summary {
    /// Summarises `samples` (all zero for none).
    pub fn of(samples: &[u64]) -> Summary {
        if samples.is_empty() {
            return Summary::default();
        }
        let mut sorted: Vec<u64> = samples.to_vec();
        sorted.sort_unstable();
        Summary {
            n: sorted.len(),
            min: sorted[0],
            avg: (sorted.iter().map(|&s| u128::from(s)).sum::<u128>() / sorted.len() as u128)
                as u64,
            p50: per_mille(&sorted, 500),
            p90: per_mille(&sorted, 900),
            p99: per_mille(&sorted, 990),
            p999: per_mille(&sorted, 999),
            max: *sorted.last().unwrap(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<u64> = (1..=100).collect();
        let s = Summary::of(&samples);
        assert_eq!(
            (s.min, s.p50, s.p90, s.p99, s.max, s.avg),
            (1, 50, 90, 99, 100, 50)
        );
        assert_eq!(Summary::of(&[7]).p99, 7);
        assert_eq!(Summary::of(&[]), Summary::default());
    }
}
