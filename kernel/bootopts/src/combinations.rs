//! Checks between options: each option is fine alone, but not every combination means
//! something — an era of another policy, a tunable or feature the policy does not have,
//! groups under O(1), `tasks=` without `run=custom`, the PIT with several CPUs. Each refusal names the option at fault.

use crate::error::{OptionError, list};
use crate::{ClockEvent, Config, Era, Grouping, Policy};
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
    // Each policy has its own tunables (6.6 replaced CFS's three with the base slice); O(1)
    // has none.
    let allowed: alloc::vec::Vec<&str> = sched::Tunable::ALL
        .into_iter()
        .filter(|t| match config.policy {
            Policy::Cfs => t.applies_to(false),
            Policy::Eevdf => t.applies_to(true),
            Policy::O1 => false,
        })
        .map(sched::Tunable::option_name)
        .collect();
    for (tunable, _) in config.tunables.given() {
        let key = tunable.option_name();
        if !allowed.contains(&key) {
            let valid = if allowed.is_empty() {
                String::from("none with this policy")
            } else {
                list(allowed.iter())
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
    // The PIT interrupts the boot CPU alone: the others would have no tick and no timers.
    if config.smp > 1 && config.clockevent == ClockEvent::Pit {
        return Err(OptionError::new(
            "clockevent",
            "clockevent=pit ticks CPU 0 alone",
            "clockevent=lapic (the default) with smp above 1",
        ));
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

#[cfg(test)]
mod tests {
    use crate::{Config, OptionError};

    fn error_of(cmdline: &str) -> OptionError {
        Config::parse(cmdline).expect_err("should be rejected")
    }

    #[test]
    fn combinations_that_mean_nothing_are_rejected() {
        assert_eq!(error_of("policy=cfs era=6.6").option, "era");
        assert_eq!(error_of("policy=eevdf era=2.6.24").option, "era");
        assert_eq!(error_of("policy=o1 era=2.6.24").option, "era");
        assert_eq!(
            error_of("policy=eevdf latency_ns=6000000").option,
            "latency_ns"
        );
        assert_eq!(error_of("base_slice_ns=3000000").option, "base_slice_ns");
        assert_eq!(
            error_of("policy=o1 features=START_DEBIT").option,
            "features"
        );
        assert_eq!(error_of("policy=o1 group=uid").option, "group");
        assert_eq!(error_of("group=none shares=1:512").option, "shares");
        assert_eq!(error_of("era=2.6.36 shares=1:512").option, "shares");
    }

    /// Regression: a feature the policy does not have was accepted silently.
    #[test]
    fn features_must_belong_to_the_policy() {
        for (cmdline, feature) in [
            ("policy=eevdf features=START_DEBIT", "START_DEBIT"),
            ("policy=eevdf features=PLACE_LAG,NO_ASYM_GRAN", "ASYM_GRAN"),
            (
                "policy=eevdf features=GENTLE_FAIR_SLEEPERS",
                "GENTLE_FAIR_SLEEPERS",
            ),
            ("policy=cfs features=RUN_TO_PARITY", "RUN_TO_PARITY"),
            ("era=2.6.24 features=NO_PLACE_LAG", "PLACE_LAG"),
        ] {
            let e = error_of(cmdline);
            assert_eq!(e.option, "features", "{cmdline}");
            assert!(e.reason.starts_with(feature), "{cmdline}: {}", e.reason);
        }
        let e = error_of("policy=eevdf features=START_DEBIT");
        assert!(e.valid.contains("RUN_TO_PARITY") && !e.valid.contains("START_DEBIT"));
        for ok in [
            "policy=eevdf features=NO_RUN_TO_PARITY,WAKEUP_PREEMPT",
            "policy=cfs features=NO_WAKEUP_PREEMPT,LAST_BUDDY",
        ] {
            assert!(Config::parse(ok).is_ok(), "{ok}");
        }
    }
}
