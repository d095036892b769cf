//! Turning the boot options into a scheduling policy from the `sched` crate: the era preset,
//! then every override the user gave (features, tunables, grouping, shares).

use crate::config::{Config, Grouping as ConfigGrouping, Policy as ConfigPolicy};
use alloc::boxed::Box;
use sched::{Fair, FairParams, Grouping, O1, Policy};

/// The policy `config` asks for, ticking every `tick_ns`.
pub fn policy_from(config: &Config, tick_ns: u64) -> Box<dyn Policy + Send> {
    let Some(era) = config
        .effective_era()
        .filter(|_| config.policy != ConfigPolicy::O1)
    else {
        return Box::new(O1::new(tick_ns));
    };
    Box::new(Fair::new(fair_params(config, era, tick_ns)))
}

/// The fair-class parameters for `config` under `era`.
pub fn fair_params(config: &Config, era: sched::Era, tick_ns: u64) -> FairParams {
    let mut params = FairParams::preset(era);
    params.grouping = match config.effective_group() {
        ConfigGrouping::Uid => Grouping::Uid,
        ConfigGrouping::None => Grouping::None,
    };
    for setting in &config.features {
        params.features.set(setting.feature, setting.enabled);
    }
    let t = &config.tunables;
    params.set_latency(t.latency_ns, t.min_granularity_ns);
    if let Some(wakeup) = t.wakeup_granularity_ns {
        params.tunables.wakeup_granularity_ns = wakeup;
    }
    if let Some(slice) = t.base_slice_ns {
        params.tunables.base_slice_ns = slice;
    }
    params.shares = config
        .shares
        .iter()
        .map(|s| (s.uid, u64::from(s.weight)))
        .collect();
    params.tick_ns = tick_ns;
    params
}
