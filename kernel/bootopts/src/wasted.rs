//! The Wasted Cores lab's scenarios (`run=wasted-*`, docs/wasted-cores.md): each runs
//! `/bin/wasted` (userland/c/wasted.c) on a machine of 8 CPUs in 4 NUMA nodes (`boot --smp
//! 8 --numa 4`) under 6.6's balancer with Linux 4.1's behaviour switched back — the bug —
//! and the invariant checker on. `features=` on top turns a fix on (e.g. `LB_MIN_LOAD`,
//! `NUMA_GROUPS_FROM_SELF`); `group=` and `invariant=` may be set otherwise too. Like
//! `run=shell`, such a scenario stands alone and takes no program after ` -- `.
//!
//! The simulator runs the same bugs at the paper's scale (`sched::sim::wasted`).

use crate::{Config, FeatureSetting, Grouping, OptionError, Policy};
use alloc::string::String;
use alloc::vec::Vec;
use sched::Feature;

/// The machine the scenarios run on: `boot --smp 8 --numa 4`, four NUMA nodes of two CPUs
/// on a ring (wasted.c's `NODE_CPUS`), so that nodes 1 and 3, like 0 and 2, are two hops
/// apart.
pub const CPUS: u32 = 8;
/// See [`CPUS`].
pub const NODES: u32 = 4;

/// How `wasted wakeup` (`run=wasted-overload-wakeup`) names its database's worker: this,
/// then its pid (userland/c/wasted.c's `WAKEUP_WORKER`), for a reader of the run's trace.
pub const WAKEUP_WORKER: &str = "wakeup: the database's worker is pid ";

/// The scenario named `name`.
pub fn scenario(name: &str) -> Option<&'static Scenario> {
    SCENARIOS.iter().find(|s| s.name == name)
}

/// A scenario of the lab: a bug's workload in the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scenario {
    /// Its `run=` name.
    pub name: &'static str,
    /// The program it runs, and its words.
    pub argv: &'static str,
    /// It runs with per-uid groups (`group=uid`).
    pub per_uid: bool,
    /// The `features=` that fixes its bug on top of 4.1's switches (the paper's fix, or
    /// Linux's where the two are one).
    pub fix: &'static str,
}

/// The scenarios.
pub const SCENARIOS: [Scenario; 4] = [
    Scenario {
        name: "wasted-group-imbalance",
        argv: "/bin/wasted imbalance 8 96 50",
        per_uid: true,
        fix: "LB_MIN_LOAD",
    },
    Scenario {
        name: "wasted-group-construction",
        argv: "/bin/wasted construction 1 3 4 200",
        per_uid: false,
        fix: "NUMA_GROUPS_FROM_SELF",
    },
    Scenario {
        name: "wasted-overload-wakeup",
        argv: "/bin/wasted wakeup 8 200",
        per_uid: false,
        fix: "WAKE_LONGEST_IDLE",
    },
    Scenario {
        name: "wasted-missing-domains",
        argv: "/bin/wasted hotplug 7 8 200",
        per_uid: false,
        fix: "HOTPLUG_KEEPS_NUMA",
    },
];

/// Whether `name` is one of the lab's scenarios.
pub fn is_wasted(name: &str) -> bool {
    scenario(name).is_some()
}

/// Sets `config` up for scenario `name`, the options in `given` kept as the user set them.
pub fn configure(config: &mut Config, name: &str, given: &[&str]) -> Result<(), OptionError> {
    let &Scenario { argv, per_uid, .. } = scenario(name).expect("a wasted scenario");
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
    let mut features: Vec<FeatureSetting> = Feature::LINUX_4_1_OFF
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

#[cfg(test)]
mod tests {
    use crate::{Config, Grouping, Policy};
    use alloc::string::ToString;

    fn error_of(cmdline: &str) -> crate::OptionError {
        Config::parse(cmdline).unwrap_err()
    }

    #[test]
    fn a_wasted_cores_scenario_runs_its_program_with_4_1_s_switches_and_echoes_back() {
        let c = Config::parse("run=wasted-group-construction").unwrap();
        assert_eq!(c.program.join(" "), "/bin/wasted construction 1 3 4 200");
        assert_eq!(c.policy, Policy::Eevdf);
        assert!(c.invariant);
        assert_eq!(
            c.features_value(),
            "NO_LB_GROUP_TYPES,NO_NUMA_GROUPS_FROM_SELF,NO_WAKE_LONGEST_IDLE,NO_HOTPLUG_KEEPS_NUMA,\
             NO_NEWIDLE_ON_SHORT_IDLE"
        );
        let echoed = c.to_string();
        assert!(!echoed.contains(" -- "), "{echoed}");
        let again = Config::parse(&echoed).unwrap();
        assert_eq!((again.to_string(), &again.program), (echoed, &c.program));
        // A fix on top replaces its switch; the group imbalance runs with per-uid groups.
        let c = Config::parse("run=wasted-group-imbalance features=LB_MIN_LOAD,LB_GROUP_TYPES")
            .unwrap();
        assert_eq!(c.group, Some(Grouping::Uid));
        assert_eq!(
            c.features_value(),
            "NO_NUMA_GROUPS_FROM_SELF,NO_WAKE_LONGEST_IDLE,NO_HOTPLUG_KEEPS_NUMA,\
             NO_NEWIDLE_ON_SHORT_IDLE,LB_MIN_LOAD,LB_GROUP_TYPES"
        );
        // Missing Scheduling Domains cycles a CPU through hotplug first.
        let c = Config::parse("run=wasted-missing-domains").unwrap();
        assert_eq!(c.program.join(" "), "/bin/wasted hotplug 7 8 200");
        // It stands alone, on 6.6's balancer.
        assert_eq!(
            error_of("run=wasted-group-imbalance -- /bin/hello").option,
            "run"
        );
        assert_eq!(error_of("run=wasted-group-imbalance,lab").option, "run");
        assert_eq!(
            error_of("run=wasted-group-imbalance policy=cfs").option,
            "policy"
        );
    }
}
