//! The Wasted Cores lab's scenarios (`run=wasted-*`, docs/wasted-cores.md): each runs
//! `/bin/wasted` (userland/c/wasted.c) on a machine of 8 CPUs in 4 NUMA nodes (`boot --smp
//! 8 --numa 4`) under 6.6's balancer with Linux 4.1's behaviour switched back — the bug —
//! and the invariant checker on. `features=` on top turns a fix on (e.g. `LB_MIN_LOAD`,
//! `NUMA_GROUPS_FROM_SELF`); `group=` and `invariant=` may be set otherwise too. Like
//! `run=shell`, such a scenario stands alone and takes no program after ` -- `.
//!
//! The simulator runs the same bugs at the paper's scale (`sched::sim::wasted`); Overload-
//! on-Wakeup and Missing Scheduling Domains have no kernel scenario yet.

use crate::{Config, FeatureSetting, Grouping, OptionError, Policy};
use alloc::string::String;
use alloc::vec::Vec;
use sched::Feature;

/// The scenarios, each with its program's argv and whether it needs per-uid groups.
pub const SCENARIOS: [(&str, &str, bool); 2] = [
    (
        "wasted-group-imbalance",
        "/bin/wasted imbalance 8 96 50",
        true,
    ),
    (
        "wasted-group-construction",
        "/bin/wasted construction 1 3 4 200",
        false,
    ),
];

/// 4.1's behaviour: the four balancer switches set back.
const FOUR_ONE: [Feature; 4] = [
    Feature::LbGroupTypes,
    Feature::NumaGroupsFromSelf,
    Feature::WakeLongestIdle,
    Feature::HotplugKeepsNuma,
];

/// Whether `name` is one of the lab's scenarios.
pub fn is_wasted(name: &str) -> bool {
    SCENARIOS.iter().any(|(n, _, _)| *n == name)
}

/// Sets `config` up for scenario `name`, the options in `given` kept as the user set them.
pub fn configure(config: &mut Config, name: &str, given: &[&str]) -> Result<(), OptionError> {
    let &(_, argv, per_uid) = SCENARIOS
        .iter()
        .find(|(n, _, _)| *n == name)
        .expect("a wasted scenario");
    if !config.program.is_empty() {
        return Err(OptionError::new(
            "run",
            alloc::format!("run={name} runs /bin/wasted, and a program follows ' -- '"),
            "either the scenario or -- /bin/NAME, not both",
        ));
    }
    if given.contains(&"policy") && config.policy != Policy::Eevdf {
        return Err(OptionError::new(
            "policy",
            alloc::format!("run={name} runs 6.6's balancer"),
            "policy=eevdf (or no policy=)",
        ));
    }
    config.policy = Policy::Eevdf;
    if !given.contains(&"invariant") {
        config.invariant = true;
    }
    if per_uid && !given.contains(&"group") {
        config.group = Some(Grouping::Uid);
    }
    let mut features: Vec<FeatureSetting> = FOUR_ONE
        .iter()
        .map(|&feature| FeatureSetting {
            feature,
            enabled: false,
        })
        .collect();
    for s in &config.features {
        features.retain(|f| f.feature != s.feature);
        features.push(*s);
    }
    config.features = features;
    config.program = argv.split(' ').map(String::from).collect();
    Ok(())
}
