//! Where a plot's axis ticks go: round values a reader can read at a glance (1, 2 or 5
//! times a power of ten on a linear axis; powers of ten on a logarithmic one), and when to
//! use which — a latency axis whose values span two decades or more is logarithmic, or the
//! small values (the common case) are squeezed into the first pixel.

/// A scale from data values to [0, 1] along an axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// 0 at the left, `max` at the right.
    Linear { max: f64 },
    /// `min` at the left, `max` at the right, by decades; values below `min` sit at `min`.
    Log { min: f64, max: f64 },
}

impl Scale {
    /// The scale for values `lo..=hi` (`lo` the smallest positive one): logarithmic when
    /// they span at least two decades, else linear from 0; ends rounded out to ticks.
    pub fn for_range(lo: f64, hi: f64) -> Scale {
        let hi = hi.max(1.0);
        let lo = lo.clamp(1.0, hi);
        if hi / lo >= 100.0 {
            Scale::Log {
                min: 10f64.powf(lo.log10().floor()),
                max: 10f64.powf(hi.log10().ceil()),
            }
        } else {
            Scale::Linear {
                max: *linear_ticks(hi).last().unwrap_or(&hi),
            }
        }
    }

    /// Where `v` falls, from 0 (left) to 1 (right).
    pub fn position(self, v: f64) -> f64 {
        match self {
            Scale::Linear { max } => (v / max).clamp(0.0, 1.0),
            Scale::Log { min, max } => {
                ((v.max(min).log10() - min.log10()) / (max.log10() - min.log10())).clamp(0.0, 1.0)
            }
        }
    }

    /// The tick values, each a round number, covering the whole axis.
    pub fn ticks(self) -> Vec<f64> {
        match self {
            Scale::Linear { max } => core::iter::once(0.0).chain(linear_ticks(max)).collect(),
            Scale::Log { min, max } => {
                let decades = (max / min).log10().round() as i32;
                // With few decades, 2 and 5 between the powers of ten too.
                let steps: &[f64] = if decades <= 2 {
                    &[1.0, 2.0, 5.0]
                } else {
                    &[1.0]
                };
                (0..=decades)
                    .flat_map(|d| steps.iter().map(move |s| min * 10f64.powi(d) * s))
                    .filter(|&t| t <= max * 1.000_001)
                    .collect()
            }
        }
    }

    pub fn is_log(self) -> bool {
        matches!(self, Scale::Log { .. })
    }
}

/// Ticks from one step up to the first tick ≥ `hi`, in steps of 1, 2 or 5 × 10^k chosen
/// to give 4 to 8 intervals.
fn linear_ticks(hi: f64) -> Vec<f64> {
    let raw = hi / 8.0;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * power);
    let n = (hi / step).ceil().max(1.0) as u32;
    (1..=n).map(|i| f64::from(i) * step).collect()
}

/// A tick's label: an integer with thousands kept short (2000 → "2k", 1500000 → "1.5M").
pub fn label(v: f64) -> String {
    let short = |x: f64, unit: &str| {
        let text = format!("{x:.1}");
        format!("{}{unit}", text.trim_end_matches(".0"))
    };
    if v >= 1e6 {
        short(v / 1e6, "M")
    } else if v >= 1e3 {
        short(v / 1e3, "k")
    } else {
        format!("{v:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round() {
        // The old axis ticked at max/4: 3097, 6194, ... for a maximum of 12 389.
        let scale = Scale::for_range(5_000.0, 12_389.0);
        assert_eq!(scale, Scale::Linear { max: 14_000.0 });
        assert_eq!(
            scale.ticks(),
            [
                0.0, 2_000.0, 4_000.0, 6_000.0, 8_000.0, 10_000.0, 12_000.0, 14_000.0
            ]
        );
        assert_eq!(Scale::for_range(1.0, 45.0).ticks().last(), Some(&50.0));
    }

    #[test]
    fn values_spanning_decades_get_a_log_axis() {
        // seed 000: wake-ups of a few µs beside 20 ms ones.
        let scale = Scale::for_range(3.0, 20_000.0);
        assert_eq!(
            scale,
            Scale::Log {
                min: 1.0,
                max: 100_000.0
            }
        );
        assert_eq!(
            scale.ticks(),
            [1.0, 10.0, 100.0, 1_000.0, 10_000.0, 100_000.0]
        );
        assert!((scale.position(1_000.0) - 0.6).abs() < 1e-9);
        assert_eq!(scale.position(0.0), 0.0, "below the axis sits at its start");
        let two = Scale::for_range(1.0, 100.0);
        assert_eq!(two.ticks(), [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
        let narrow = Scale::for_range(20.0, 1_500.0);
        assert_eq!(narrow, Scale::Linear { max: 1_600.0 }, "75 times: linear");
    }

    #[test]
    fn labels_are_short() {
        assert_eq!(label(0.0), "0");
        assert_eq!(label(500.0), "500");
        assert_eq!(label(20_000.0), "20k");
        assert_eq!(label(1_200.0), "1.2k");
        assert_eq!(label(1_500_000.0), "1.5M");
    }
}
