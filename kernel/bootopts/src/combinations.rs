//! Checks between options: each option is fine alone, but not every combination means
//! something — an era of another policy, a tunable or feature the policy does not have,
//! groups under O(1), `tasks=` without `run=custom`. Each refusal names the option at fault.

use crate::parse::{OptionError, list};
use crate::{Config, Era, Grouping, Policy};
use alloc::string::String;

/// Checks between options: each is fine alone, but not every combination means something.
pub(crate) fn check(config: &Config) -> Result<(), OptionError> {
    let custom = config.run.contains(&"custom");
    if custom && config.tasks.is_empty() {
        return Err(OptionError::new(
            "run",
            "run=custom needs tasks=",
            "run=custom tasks=KIND[:ARG][@UID][*COUNT][%NICE],...",
        ));
    }
    if !custom && !config.tasks.is_empty() {
        return Err(OptionError::new(
            "tasks",
            "tasks= only applies to run=custom",
            "run=custom tasks=...",
        ));
    }
    let policy = crate::name_of(&Policy::ALL, config.policy);
    if let Some(era) = config.era {
        let eras_of_policy = list(
            Era::ALL
                .iter()
                .filter(|(_, e)| crate::policy_of(*e) == config.policy)
                .map(|(n, _)| n),
        );
        if config.policy == Policy::O1 {
            return Err(OptionError::new(
                "era",
                "policy=o1 is Linux 2.6.11's scheduler and has no era presets",
                "no era= with policy=o1",
            ));
        }
        if crate::policy_of(era) != config.policy {
            let name = crate::name_of(&Era::ALL, era);
            return Err(OptionError::new(
                "era",
                alloc::format!("era {name} is not a {policy} era"),
                eras_of_policy,
            ));
        }
    }
    let t = &config.tunables;
    let (cfs_only, eevdf_only) = (
        [
            ("latency_ns", t.latency_ns),
            ("min_granularity_ns", t.min_granularity_ns),
            ("wakeup_granularity_ns", t.wakeup_granularity_ns),
        ],
        [("base_slice_ns", t.base_slice_ns)],
    );
    let allowed: &[_] = match config.policy {
        Policy::Cfs => &cfs_only,
        Policy::Eevdf => &eevdf_only,
        Policy::O1 => &[],
    };
    let given = cfs_only
        .iter()
        .chain(eevdf_only.iter())
        .filter(|(_, v)| v.is_some());
    for (key, _) in given {
        if !allowed.iter().any(|(k, _)| k == key) {
            let valid = if allowed.is_empty() {
                String::from("none with this policy")
            } else {
                list(allowed.iter().map(|(k, _)| k))
            };
            return Err(OptionError::new(
                key,
                alloc::format!("not a tunable of policy={policy}"),
                alloc::format!("tunables: {valid}"),
            ));
        }
    }
    check_features(config, policy)?;
    if config.policy == Policy::O1 {
        if !config.features.is_empty() {
            return Err(OptionError::new(
                "features",
                "policy=o1 has no sched_features",
                "no features= with policy=o1",
            ));
        }
        if config.group == Some(Grouping::Uid) || !config.shares.is_empty() {
            return Err(OptionError::new(
                "group",
                "policy=o1 has no group scheduling",
                "group=none or no group= with policy=o1",
            ));
        }
    }
    if !config.shares.is_empty() && config.effective_group() != Grouping::Uid {
        return Err(OptionError::new(
            "shares",
            "group weights need per-uid groups",
            "shares= together with group=uid",
        ));
    }
    Ok(())
}

/// `features=` may only name features the chosen fair policy honours (`policy=o1`, which
/// has none, is refused separately).
fn check_features(config: &Config, policy: &str) -> Result<(), OptionError> {
    let eevdf = match config.policy {
        Policy::Cfs => false,
        Policy::Eevdf => true,
        Policy::O1 => return Ok(()),
    };
    let Some(wrong) = config
        .features
        .iter()
        .find(|s| !s.feature.applies_to(eevdf))
    else {
        return Ok(());
    };
    let own = list(
        sched::Feature::ALL
            .iter()
            .filter(|(_, f)| f.applies_to(eevdf))
            .map(|(name, _)| name),
    );
    Err(OptionError::new(
        "features",
        alloc::format!(
            "{} is not a feature of policy={policy}",
            wrong.feature.name()
        ),
        alloc::format!("with policy={policy}: {own}, each optionally prefixed NO_"),
    ))
}
