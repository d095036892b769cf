//! From boot options to the `sched` crate's parameters: the era preset, then every override
//! the user gave (features, tunables, grouping, shares). The kernel builds its policy from
//! this, and the host simulator its seed runs, so that both run the same scheduler.

use crate::{Config, Grouping};
use sched::{FairParams, Tunable};

impl Config {
    /// The fair-class parameters for this configuration under `era`, ticking every
    /// `tick_ns`.
    pub fn fair_params(&self, era: sched::Era, tick_ns: u64) -> FairParams {
        let mut params = FairParams::preset(era);
        params.grouping = match self.effective_group() {
            Grouping::Uid => sched::Grouping::Uid,
            Grouping::None => sched::Grouping::None,
        };
        for setting in &self.features {
            params.features.set(setting.feature, setting.enabled);
        }
        let t = &self.tunables;
        // The latency and the minimum granularity together: they decide nr_latency.
        params.set_latency(t.get(Tunable::Latency), t.get(Tunable::MinGranularity));
        if let Some(ns) = t.get(Tunable::WakeupGranularity) {
            params.tunables.wakeup_granularity_ns = ns;
        }
        if let Some(ns) = t.get(Tunable::BaseSlice) {
            params.tunables.base_slice_ns = ns;
        }
        params.shares = self
            .shares
            .iter()
            .map(|s| (s.uid, u64::from(s.weight)))
            .collect();
        params.tick_ns = tick_ns;
        params
    }

    /// The tick length of [`Config::effective_hz`], in ns.
    pub fn tick_ns(&self) -> u64 {
        1_000_000_000 / u64::from(self.effective_hz())
    }
}
