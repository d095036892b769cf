//! Turning the boot options into a scheduling policy from the `sched` crate (the options'
//! own `Config::fair_params` builds the fair class's parameters).

use crate::config::{Config, Policy as ConfigPolicy};
use alloc::boxed::Box;
use sched::{Fair, O1, Policy};

/// The policy `config` asks for, ticking every `tick_ns`.
pub fn policy_from(config: &Config, tick_ns: u64) -> Box<dyn Policy + Send> {
    let Some(era) = config
        .effective_era()
        .filter(|_| config.policy != ConfigPolicy::O1)
    else {
        return Box::new(O1::new(tick_ns));
    };
    Box::new(Fair::new(config.fair_params(era, tick_ns)))
}
