//! The scheduler's writable files, by Linux's paths and rules: the sysctls
//! `/proc/sys/kernel/sched_*_ns`, `/sys/kernel/debug/sched_features` (and, under EEVDF,
//! `/sys/kernel/debug/sched/features`) and (with per-uid
//! groups, as 2.6.24) `/sys/kernel/uids/UID/cpu_share`. Only root may open them for writing
//! (`open_file`); a value Linux would refuse is EINVAL. Which knobs exist follows the
//! policy: CFS's three tunables or EEVDF's base slice, the features that policy honours,
//! and none under O(1) (2.6.11 had neither sysctls nor features for its scheduler).

use crate::sched::hotplug::{self, HotplugError};
use crate::sched::knobs;
use crate::user::errno;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use sched::{Feature, KnobError, Tunable};

/// A writable scheduler file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    Sysctl(Tunable),
    Features,
    CpuShare(u32),
    /// `/sys/devices/system/cpu/cpuN/online` (`cpus`).
    CpuOnline(usize),
}

/// The files of `/proc/sys/kernel/`: the policy's tunables.
pub fn sysctls() -> Vec<(&'static str, Knob)> {
    let Some(params) = knobs::fair_params() else {
        return Vec::new();
    };
    Tunable::ALL
        .into_iter()
        .filter(|t| t.applies_to(params.era.is_eevdf()))
        .map(|t| (t.sysctl_name(), Knob::Sysctl(t)))
        .collect()
}

/// The files of `/sys/kernel/debug/`: `sched_features`, for a policy that has features.
pub fn debugfs() -> Vec<(&'static str, Knob)> {
    match knobs::fair_params() {
        Some(_) => alloc::vec![("sched_features", Knob::Features)],
        None => Vec::new(),
    }
}

/// The files of `/sys/kernel/debug/sched/`, where 5.13 moved the features: `features`,
/// the same file as `sched_features`, for EEVDF's era (6.6), which has only that path in
/// Linux; cfslab keeps `sched_features` beside it, the one path every era has.
pub fn debugfs_sched() -> Vec<(&'static str, Knob)> {
    match knobs::fair_params() {
        Some(params) if params.era.is_eevdf() => alloc::vec![("features", Knob::Features)],
        _ => Vec::new(),
    }
}

/// Does the policy group tasks by uid (so that `/sys/kernel/uids` exists)?
pub fn has_uid_groups() -> bool {
    knobs::fair_params().is_some_and(|p| p.grouping == sched::Grouping::Uid)
}

/// The uids that have a group (Linux's `/sys/kernel/uids/` held one directory per
/// `user_struct`, i.e. per uid with processes).
pub fn uids_with_groups() -> Vec<u32> {
    knobs::group_shares()
        .into_iter()
        .map(|(uid, _)| uid)
        .collect()
}

impl Knob {
    /// What reading the file gives: a number and a newline, or the feature list.
    pub fn text(self) -> Result<String, i64> {
        let params = || knobs::fair_params().ok_or(-errno::ENOENT);
        Ok(match self {
            Knob::CpuOnline(cpu) => online_text(cpu),
            Knob::Sysctl(t) => format!("{}\n", t.get(&params()?.tunables)),
            Knob::Features => features_line(&params()?),
            Knob::CpuShare(uid) => {
                let shares = knobs::group_shares()
                    .into_iter()
                    .find(|&(u, _)| u == uid)
                    .map(|(_, w)| w)
                    .map_or_else(|| params().map(|p| p.shares_of(uid)), Ok)?;
                format!("{shares}\n")
            }
        })
    }

    /// Applies what a `write` brought. The whole write is the value, as Linux takes one
    /// value per write for these files.
    pub fn write(self, bytes: &[u8]) -> Result<(), i64> {
        let text = || core::str::from_utf8(bytes).map_err(|_| -errno::EINVAL);
        let result = match self {
            Knob::CpuOnline(cpu) => return write_online(cpu, bytes),
            Knob::Sysctl(t) => knobs::set_tunable(t, number(text()?)?),
            Knob::Features => {
                let (feature, on) = feature_setting(text()?)?;
                knobs::set_feature(feature, on)
            }
            Knob::CpuShare(uid) => knobs::set_group_shares(uid, number(text()?)?).map(drop),
        };
        result.map_err(|e| match e {
            KnobError::OutOfRange | KnobError::NotThisPolicy => -errno::EINVAL,
        })
    }
}

/// Every feature of the policy, those off with a `NO_` prefix, on one line (Linux's
/// `sched_feat_show`).
fn features_line(params: &sched::FairParams) -> String {
    let mut line = String::new();
    for (name, feature) in Feature::ALL {
        if feature.applies_to(params.era.is_eevdf()) {
            let no = if params.features.has(feature) {
                ""
            } else {
                "NO_"
            };
            line += &format!("{no}{name} ");
        }
    }
    line.push('\n');
    line
}

/// A decimal number with blanks around it (`echo 6000000 >` brings a newline), as Linux's
/// `proc_dointvec_minmax` reads one; anything else is EINVAL.
fn number(text: &str) -> Result<u64, i64> {
    let digits = text.trim();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(-errno::EINVAL);
    }
    digits.parse().map_err(|_| -errno::EINVAL)
}

/// `NAME` turns a feature on, `NO_NAME` off (Linux's `sched_feat_write`, which strips the
/// blanks around it); an unknown name is EINVAL.
fn feature_setting(text: &str) -> Result<(Feature, bool), i64> {
    let name = text.trim();
    let (name, on) = match name.strip_prefix("NO_") {
        Some(rest) => (rest, false),
        None => (name, true),
    };
    Feature::from_name(name)
        .map(|f| (f, on))
        .ok_or(-errno::EINVAL)
}

/// What `cpuN/online` reads: `1` or `0`, and a newline.
pub fn online_text(cpu: usize) -> String {
    let (_, online) = hotplug::cpu_masks();
    format!("{}\n", u8::from(online & 1 << cpu != 0))
}

/// A write to `cpuN/online`: [`kstrtobool`]'s value, then the CPU taken down or brought up
/// (the write returns once it is done); writing the state it is in changes nothing.
pub fn write_online(cpu: usize, bytes: &[u8]) -> Result<(), i64> {
    // An empty write changes nothing (sysfs does not call the file's store for one).
    if bytes.is_empty() {
        return Ok(());
    }
    let up = kstrtobool(bytes).ok_or(-errno::EINVAL)?;
    let done = match up {
        true => hotplug::cpu_up(cpu),
        false => hotplug::cpu_down(cpu),
    };
    done.map_err(|e| match e {
        HotplugError::NoSuchCpu => -errno::ENODEV,
        HotplugError::Busy => -errno::EBUSY,
        HotplugError::NoAnswer => -errno::EIO,
    })
}

/// Linux's `kstrtobool` (lib/kstrtox.c, 6.1: `t`/`f` since 6.0), which sysfs's boolean
/// files read: the first character decides — `1`, `y`, `t` true; `0`, `n`, `f` false, in
/// either case — or, after an `o`, the second: `on` true, `of` false. Anything else is no
/// value (EINVAL).
pub fn kstrtobool(text: &[u8]) -> Option<bool> {
    match text {
        [b'1' | b'y' | b'Y' | b't' | b'T', ..] => Some(true),
        [b'0' | b'n' | b'N' | b'f' | b'F', ..] => Some(false),
        [b'o' | b'O', b'n' | b'N', ..] => Some(true),
        [b'o' | b'O', b'f' | b'F', ..] => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test_case]
    fn kstrtobool_reads_the_first_characters_as_linux_does() {
        for yes in [&b"1\n"[..], b"y", b"Yes", b"on", b"ON\n", b"1junk", b"true"] {
            assert_eq!(kstrtobool(yes), Some(true), "{yes:?}");
        }
        for no in [&b"0\n"[..], b"n", b"No", b"off", b"OfF", b"false"] {
            assert_eq!(kstrtobool(no), Some(false), "{no:?}");
        }
        for bad in [&b""[..], b"\n", b"2", b"o", b"ox", b" 1", b"-1"] {
            assert_eq!(kstrtobool(bad), None, "{bad:?}");
        }
    }
}
