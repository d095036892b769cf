//! From boot options to the `sched` crate's parameters: the era preset, then every override
//! the user gave (features, tunables, grouping, shares). The kernel builds its policy from
//! this, and the host simulator its seed runs, so that both run the same scheduler.

use crate::{Config, Grouping};
use sched::FairParams;

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
        params.set_latency(t.latency_ns, t.min_granularity_ns);
        if let Some(wakeup) = t.wakeup_granularity_ns {
            params.tunables.wakeup_granularity_ns = wakeup;
        }
        if let Some(slice) = t.base_slice_ns {
            params.tunables.base_slice_ns = slice;
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
