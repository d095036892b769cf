//! The boot option parser: command line → [`Config`], or one [`OptionError`] that names the
//! option, says what is wrong with it and lists what would be right.
//!
//! It reads hostile input calmly: any byte string, of any length, produces either a config or
//! an error, never a panic. Bad tokens are echoed back escaped and shortened, so a non-ASCII
//! or kilobyte-long key cannot garble the console line that reports it.

use crate::error::{OptionError, echo, list};
use crate::{ClockEvent, Config, Era, FeatureSetting, Grouping, LogLevel, Policy, Share};
use alloc::string::String;
use alloc::vec::Vec;

/// The longest command line accepted (fw_cfg's buffer in the kernel).
pub const MAX_CMDLINE_BYTES: usize = 4096;

/// Every key, in DESIGN.md's table order.
pub const KEYS: [&str; 21] = [
    "run",
    "tasks",
    "policy",
    "era",
    "features",
    "latency_ns",
    "min_granularity_ns",
    "wakeup_granularity_ns",
    "base_slice_ns",
    "group",
    "shares",
    "hz",
    "clockevent",
    "hrtimer",
    "duration",
    "seed",
    "trace",
    "log",
    "smp",
    "invariant",
    "invariant_ms",
];

/// `run=shell`: no scenario, but the shell, `/bin/sh`, as the console's session (`make
/// shell`); it stands alone, and excludes a program after ` -- `.
pub const SHELL: &str = "shell";

/// The shell's path in the initramfs.
const SHELL_PATH: &str = "/bin/sh";

/// Scenario names `run=` accepts (`lab` = all of the seed experiments).
pub const SCENARIOS: [&str; 8] = [
    "lab",
    "custom",
    "seed000-s1",
    "seed000-s2",
    "seed002-a",
    "seed002-b",
    "seed003",
    "seed003-io",
];

const HZ_VALUES: [u32; 3] = [100, 250, 1000];

/// The most CPUs `smp=` asks for: a bound that a 64-bit CPU mask covers, far above what a
/// teaching machine under TCG runs with.
pub const MAX_CPUS: u32 = 64;

/// Linux's MIN_SHARES and MAX_SHARES for a task group's weight (`sched::knobs::SHARES`).
const MIN_SHARES: u64 = *sched::knobs::SHARES.start();
const MAX_SHARES: u64 = *sched::knobs::SHARES.end();

const MIN_DURATION_NS: u64 = 10_000_000;
const MAX_DURATION_NS: u64 = 3_600_000_000_000;

/// The value of `table` named `value`, or an error listing the names.
fn choose<T: Copy>(
    key: &str,
    value: &str,
    table: &[(&'static str, T)],
    what: &str,
) -> Result<T, OptionError> {
    table
        .iter()
        .find(|(name, _)| *name == value)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            OptionError::new(
                key,
                alloc::format!("unknown {what} '{}'", echo(value)),
                list(table.iter().map(|(n, _)| n)),
            )
        })
}

/// A plain decimal integer: digits only, no sign, no overflow.
pub(super) fn parse_u64(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.bytes().try_fold(0u64, |acc, b| {
        acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })
}

fn parse_in_range(key: &str, value: &str, min: u64, max: u64) -> Result<u64, OptionError> {
    let valid = alloc::format!("an integer from {min} to {max}");
    let n = parse_u64(value).ok_or_else(|| {
        OptionError::new(
            key,
            alloc::format!("'{}' is not a number", echo(value)),
            &valid,
        )
    })?;
    if !(min..=max).contains(&n) {
        return Err(OptionError::new(
            key,
            alloc::format!("{n} is out of range"),
            &valid,
        ));
    }
    Ok(n)
}

fn parse_on_off(key: &str, value: &str) -> Result<bool, OptionError> {
    choose(key, value, &[("on", true), ("off", false)], "value")
}

/// Comma-separated items, none empty.
fn items<'a>(key: &str, value: &'a str, valid: &str) -> Result<Vec<&'a str>, OptionError> {
    let items: Vec<&str> = value.split(',').collect();
    if items.iter().any(|item| item.is_empty()) {
        return Err(OptionError::new(key, "empty item in the comma list", valid));
    }
    Ok(items)
}

fn parse_run(value: &str) -> Result<Vec<&'static str>, OptionError> {
    if value == SHELL {
        return Ok(alloc::vec![SHELL]);
    }
    if let Some(s) = crate::wasted::scenario(value) {
        return Ok(alloc::vec![s.name]);
    }
    let wasted = crate::wasted::SCENARIOS.iter().map(|s| s.name);
    let valid = alloc::format!(
        "{SHELL}, {} (each alone), or a comma list of {}",
        list(wasted),
        list(SCENARIOS)
    );
    let mut run = Vec::new();
    for item in items("run", value, &valid)? {
        let Some(&name) = SCENARIOS.iter().find(|&&s| s == item) else {
            return Err(OptionError::new(
                "run",
                alloc::format!("unknown scenario '{}'", echo(item)),
                &valid,
            ));
        };
        if run.contains(&name) {
            return Err(OptionError::new(
                "run",
                alloc::format!("scenario '{name}' listed twice"),
                &valid,
            ));
        }
        run.push(name);
    }
    Ok(run)
}

fn parse_features(value: &str) -> Result<Vec<FeatureSetting>, OptionError> {
    let valid = alloc::format!(
        "a comma list of {}, each optionally prefixed NO_",
        list(sched::Feature::ALL.iter().map(|(name, _)| name))
    );
    let mut settings: Vec<FeatureSetting> = Vec::new();
    for item in items("features", value, &valid)? {
        let (enabled, wanted) = match item.strip_prefix("NO_") {
            Some(rest) => (false, rest),
            None => (true, item),
        };
        let Some(feature) = sched::Feature::from_name(wanted) else {
            return Err(OptionError::new(
                "features",
                alloc::format!("unknown feature '{}'", echo(item)),
                &valid,
            ));
        };
        if settings.iter().any(|s| s.feature == feature) {
            return Err(OptionError::new(
                "features",
                alloc::format!("feature {} given twice", feature.name()),
                &valid,
            ));
        }
        settings.push(FeatureSetting { feature, enabled });
    }
    Ok(settings)
}

fn parse_shares(value: &str) -> Result<Vec<Share>, OptionError> {
    let valid =
        alloc::format!("a comma list of uid:weight, weight from {MIN_SHARES} to {MAX_SHARES}");
    let mut shares: Vec<Share> = Vec::new();
    for item in items("shares", value, &valid)? {
        let bad = |why: &str| {
            OptionError::new("shares", alloc::format!("'{}' {why}", echo(item)), &valid)
        };
        let (uid, weight) = item
            .split_once(':')
            .ok_or_else(|| bad("is not uid:weight"))?;
        let uid = parse_u64(uid)
            .and_then(|u| u32::try_from(u).ok())
            .ok_or_else(|| bad("has a bad uid"))?;
        let weight = parse_u64(weight).ok_or_else(|| bad("has a bad weight"))?;
        if !sched::knobs::SHARES.contains(&weight) {
            return Err(bad("has a weight out of range"));
        }
        if shares.iter().any(|s| s.uid == uid) {
            return Err(bad("repeats a uid"));
        }
        shares.push(Share {
            uid,
            weight: weight as u32,
        });
    }
    Ok(shares)
}

/// `10s`, `500ms`, `250us`, `1000000ns`.
/// A whole number with a unit (`s`, `ms`, `us`, `ns`) in nanoseconds, if well formed.
pub(super) fn parse_duration_value(value: &str) -> Option<u64> {
    let digits = value.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = value.split_at(digits);
    let scale = match unit {
        "s" => 1_000_000_000,
        "ms" => 1_000_000,
        "us" => 1_000,
        "ns" => 1,
        _ => return None,
    };
    parse_u64(number)?.checked_mul(scale)
}

fn parse_duration(value: &str) -> Result<u64, OptionError> {
    let valid = "a whole number of s, ms, us or ns, from 10ms to 3600s";
    let ns = parse_duration_value(value).ok_or_else(|| {
        OptionError::new(
            "duration",
            alloc::format!("'{}' is not a duration", echo(value)),
            valid,
        )
    })?;
    if !(MIN_DURATION_NS..=MAX_DURATION_NS).contains(&ns) {
        return Err(OptionError::new(
            "duration",
            alloc::format!("{} is out of range", echo(value)),
            valid,
        ));
    }
    Ok(ns)
}

/// Applies one `key=value` to `config`. `key` is known and `value` non-empty.
fn apply(config: &mut Config, key: &str, value: &str) -> Result<(), OptionError> {
    // A tunable, within Linux's sysctl bounds (as the files under /proc/sys/kernel/ keep
    // them).
    if let Some(tunable) = sched::Tunable::ALL
        .into_iter()
        .find(|t| t.option_name() == key)
    {
        let bounds = tunable.bounds();
        let ns = parse_in_range(key, value, *bounds.start(), *bounds.end())?;
        config.tunables.set(tunable, ns);
        return Ok(());
    }
    match key {
        "run" => config.run = parse_run(value)?,
        "tasks" => config.tasks = crate::tasks::parse(value)?,
        "policy" => config.policy = choose(key, value, &Policy::ALL, "policy")?,
        "era" => config.era = Some(choose(key, value, &Era::ALL, "era")?),
        "features" => config.features = parse_features(value)?,
        "group" => config.group = Some(choose(key, value, &Grouping::ALL, "grouping")?),
        "shares" => config.shares = parse_shares(value)?,
        "hz" => {
            let valid = list(HZ_VALUES);
            config.hz = parse_u64(value)
                .and_then(|n| HZ_VALUES.into_iter().find(|&hz| u64::from(hz) == n))
                .map(Some)
                .ok_or_else(|| {
                    OptionError::new(
                        key,
                        alloc::format!("unsupported tick rate '{}'", echo(value)),
                        valid,
                    )
                })?;
        }
        "clockevent" => {
            config.clockevent = choose(key, value, &ClockEvent::ALL, "clock event device")?
        }
        "hrtimer" => config.hrtimer = parse_on_off(key, value)?,
        "duration" => config.duration_ns = Some(parse_duration(value)?),
        "seed" => {
            config.seed = parse_u64(value).ok_or_else(|| {
                OptionError::new(
                    key,
                    alloc::format!("'{}' is not a number", echo(value)),
                    "an integer from 0 to 18446744073709551615",
                )
            })?
        }
        "trace" => config.trace = parse_on_off(key, value)?,
        "log" => config.log = choose(key, value, &LogLevel::ALL, "log level")?,
        // Only the count: whether the machine has that many CPUs is the kernel's to check
        // (against the ACPI MADT), since this crate knows nothing of the hardware.
        "smp" => config.smp = parse_in_range(key, value, 1, u64::from(MAX_CPUS))? as u32,
        "invariant" => config.invariant = parse_on_off(key, value)?,
        "invariant_ms" => config.invariant_ms = parse_in_range(key, value, 1, 3_600_000)? as u32,
        _ => unreachable!("apply is only called with keys from KEYS"),
    }
    Ok(())
}

/// Parses a whole command line; see [`Config::parse`].
pub fn parse(cmdline: &str) -> Result<Config, OptionError> {
    if cmdline.len() > MAX_CMDLINE_BYTES {
        return Err(OptionError::too_long(cmdline.len()));
    }
    let (options, program) = crate::program::split(cmdline)?;
    let mut config = Config {
        program,
        ..Config::default()
    };
    let mut seen: Vec<&str> = Vec::new();
    for token in options.split_ascii_whitespace() {
        let Some((key, value)) = token.split_once('=') else {
            return Err(OptionError::new(token, "expected key=value", list(KEYS)));
        };
        if key.is_empty() {
            return Err(OptionError::new(
                token,
                "missing key before '='",
                list(KEYS),
            ));
        }
        let Some(&key) = KEYS.iter().find(|&&k| k == key) else {
            return Err(OptionError::new(key, "unknown option", list(KEYS)));
        };
        if seen.contains(&key) {
            return Err(OptionError::new(
                key,
                "given twice",
                "each option at most once",
            ));
        }
        seen.push(key);
        if value.is_empty() {
            return Err(OptionError::new(key, "empty value", valid_values(key)));
        }
        apply(&mut config, key, value)?;
    }
    if config.run == [SHELL] {
        if !config.program.is_empty() {
            return Err(OptionError::new(
                "run",
                "run=shell runs /bin/sh, and a program follows ' -- '",
                "either run=shell or -- /bin/NAME, not both",
            ));
        }
        config.program = alloc::vec![SHELL_PATH.into()];
    }
    if let [name] = config.run[..]
        && crate::wasted::is_wasted(name)
    {
        crate::wasted::configure(&mut config, name, &seen)?;
    }
    crate::combinations::check(&config)?;
    Ok(config)
}

/// What `key` accepts, for the "empty value" error: the message an invalid value would give.
fn valid_values(key: &str) -> String {
    let mut probe = Config::default();
    apply(&mut probe, key, "\u{0}").map_or_else(|e| e.valid, |_| String::new())
}
