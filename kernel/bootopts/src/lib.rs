//! # bootopts — cfslab's boot options: what the host asked this run to do
//!
//! The options arrive as one string through fw_cfg (`opt/cfslab/cmdline`), space-separated
//! `key=value` pairs, and are validated *all* before anything runs: a typo must not cost a
//! ten-second experiment. The table of keys and values is DESIGN.md's contract; this module
//! holds the parsed result ([`Config`]) and prints it back in canonical form for the boot
//! banner. The parser itself is in [`parse`].
//!
//! The crate is `no_std` and pure, like the `sched` crate: the kernel reads the bytes from
//! fw_cfg and hands them here; host tests (unit tests and a proptest fuzz of the whole
//! grammar, `tests/fuzz.rs`) run the very same code. It does not read fw_cfg, print, or act
//! on an option: that is the kernel's business.

#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(test)]
extern crate std;

mod combinations;
mod error;
mod params;
mod parse;
pub mod program;
pub mod scenarios;
pub mod tasks;
#[cfg(test)]
mod tests;
pub mod wasted;

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

pub use error::OptionError;
pub use parse::{KEYS, MAX_CMDLINE_BYTES, MAX_CPUS, SCENARIOS};

/// Scheduling policy (`policy=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// The Completely Fair Scheduler, 2.6.23–6.5, in the era chosen with `era=`.
    Cfs,
    /// Earliest Eligible Virtual Deadline First, Linux 6.6+.
    Eevdf,
    /// The O(1) scheduler of Linux 2.6.11 (seed 002's kernel).
    O1,
}

/// A Linux release whose scheduler tunables and features `era=` reproduces (the scheduler
/// crate's presets).
pub use sched::Era;

/// What tasks are grouped by for group scheduling (`group=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// One group per uid, as CONFIG_FAIR_USER_SCHED (2.6.24) and USER_SCHED (2.6.25) did.
    Uid,
    /// No groups: every task competes on its own.
    None,
}

/// The timer device driving ticks and timers (`clockevent=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockEvent {
    /// The local APIC timer, in one-shot mode (hrtimers).
    Lapic,
    /// The 8254 PIT, periodic at `hz` (the 2005 world).
    Pit,
}

/// One `features=` entry: a sched_features name, set or (with `NO_`) cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureSetting {
    pub feature: sched::Feature,
    pub enabled: bool,
}

/// One `shares=` entry: the weight of uid `uid`'s group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    pub uid: u32,
    pub weight: u32,
}

/// Tunables overridden on the command line (`sched::Tunable`, named by its sysctl without
/// `sched_`); those not given keep the era's value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tunables {
    values: [Option<u64>; sched::Tunable::ALL.len()],
}

impl Tunables {
    /// The value given for `tunable`, if any.
    pub fn get(&self, tunable: sched::Tunable) -> Option<u64> {
        self.values[tunable as usize]
    }

    /// Gives `tunable` the value `ns`.
    pub fn set(&mut self, tunable: sched::Tunable, ns: u64) {
        self.values[tunable as usize] = Some(ns);
    }

    /// The tunables given, with their values, in `sched::Tunable::ALL`'s order.
    pub fn given(&self) -> impl Iterator<Item = (sched::Tunable, u64)> + '_ {
        sched::Tunable::ALL
            .into_iter()
            .filter_map(|t| Some((t, self.get(t)?)))
    }
}

/// Console verbosity (`log=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

/// The Wasted Cores paper's threshold (§4.1): a core idle beside a waiting task for longer
/// than this is a violation.
pub const DEFAULT_INVARIANT_MS: u32 = 100;

/// The validated boot options. Fields left `None` or empty mean "the default", which may
/// depend on other options (see the `effective_*` methods).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Scenario names, in order; `["lab"]` by default.
    pub run: Vec<&'static str>,
    /// The tasks of `run=custom`.
    pub tasks: Vec<tasks::TaskSpec>,
    pub policy: Policy,
    pub era: Option<Era>,
    pub features: Vec<FeatureSetting>,
    pub tunables: Tunables,
    pub group: Option<Grouping>,
    pub shares: Vec<Share>,
    /// The tick rate given with `hz=`; `None` = the era's (see [`Config::effective_hz`]).
    pub hz: Option<u32>,
    pub clockevent: ClockEvent,
    pub hrtimer: bool,
    /// Length of each scenario's measured window; `None` = the scenario's own default.
    pub duration_ns: Option<u64>,
    /// The seed of the workloads' phase variation (`sched::programs`): the same seed gives
    /// the same figures.
    pub seed: u64,
    pub trace: bool,
    pub log: LogLevel,
    /// The program after ` -- ` (its argv), run instead of the scenarios; empty for none.
    pub program: Vec<String>,
    /// The CPUs to run on (`smp=`, 1 to [`MAX_CPUS`]); the kernel refuses a count the
    /// machine's ACPI MADT does not list.
    pub smp: u32,
    /// The Wasted Cores invariant is checked (`invariant=`).
    pub invariant: bool,
    /// Its threshold, in ms (`invariant_ms=`, the paper's 100 by default).
    pub invariant_ms: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            run: alloc::vec!["lab"],
            tasks: Vec::new(),
            policy: Policy::Cfs,
            era: None,
            features: Vec::new(),
            tunables: Tunables::default(),
            group: None,
            shares: Vec::new(),
            hz: None,
            clockevent: ClockEvent::Lapic,
            hrtimer: true,
            duration_ns: None,
            seed: sched::programs::DEFAULT_SEED,
            trace: false,
            log: LogLevel::Info,
            program: Vec::new(),
            smp: 1,
            invariant: false,
            invariant_ms: DEFAULT_INVARIANT_MS,
        }
    }
}

impl Config {
    /// The `features=` value in force, as it would be written (empty for none).
    pub fn features_value(&self) -> String {
        let names: Vec<String> = self
            .features
            .iter()
            .map(|s| alloc::format!("{}{}", if s.enabled { "" } else { "NO_" }, s.feature.name()))
            .collect();
        names.join(",")
    }

    /// Parses and validates a boot command line (see the module docs).
    pub fn parse(cmdline: &str) -> Result<Config, OptionError> {
        parse::parse(cmdline)
    }

    /// Parses raw fw_cfg bytes, which need not be UTF-8.
    pub fn parse_bytes(cmdline: &[u8]) -> Result<Config, OptionError> {
        let text =
            core::str::from_utf8(cmdline).map_err(|e| OptionError::not_utf8(e.valid_up_to()))?;
        Self::parse(text)
    }

    /// The era in force: the one given, or the policy's default (2.6.36, the last CFS
    /// before EEVDF, for `cfs`; 6.6 for `eevdf`). `None` for `o1`, which has no eras.
    pub fn effective_era(&self) -> Option<Era> {
        match self.policy {
            Policy::O1 => None,
            Policy::Cfs => Some(self.era.unwrap_or(Era::V2_6_36)),
            Policy::Eevdf => Some(self.era.unwrap_or(Era::V6_6)),
        }
    }

    /// The tick rate in force: the one given, or the era's default — 1000 for `o1` (2.6.11
    /// on x86), 250 for every CFS and EEVDF era (the default from 2.6.13 on). The seeds'
    /// kernels ran at these rates, so their figures are reproduced at them.
    pub fn effective_hz(&self) -> u32 {
        self.hz.unwrap_or_else(|| match self.effective_era() {
            Some(era) => era.default_hz(),
            None => sched::o1::HZ,
        })
    }

    /// The grouping in force: the one given, or the era's: per-uid groups were the default
    /// configuration in 2.6.24 (FAIR_USER_SCHED) and 2.6.25 (USER_SCHED), none afterwards.
    pub fn effective_group(&self) -> Grouping {
        self.group.unwrap_or(match self.effective_era() {
            Some(Era::V2_6_24 | Era::V2_6_25) => Grouping::Uid,
            _ => Grouping::None,
        })
    }
}

impl Policy {
    pub const ALL: [(&'static str, Policy); 3] = [
        ("cfs", Policy::Cfs),
        ("eevdf", Policy::Eevdf),
        ("o1", Policy::O1),
    ];
}

/// The `policy=` name of `policy`.
pub fn policy_name(policy: Policy) -> &'static str {
    name_of(&Policy::ALL, policy)
}

/// The policy an era's scheduler is.
pub fn policy_of(era: Era) -> Policy {
    if era.is_eevdf() {
        Policy::Eevdf
    } else {
        Policy::Cfs
    }
}

impl Grouping {
    pub const ALL: [(&'static str, Grouping); 2] =
        [("uid", Grouping::Uid), ("none", Grouping::None)];
}

impl ClockEvent {
    pub const ALL: [(&'static str, ClockEvent); 2] =
        [("lapic", ClockEvent::Lapic), ("pit", ClockEvent::Pit)];
}

impl LogLevel {
    pub const ALL: [(&'static str, LogLevel); 5] = [
        ("error", LogLevel::Error),
        ("warn", LogLevel::Warn),
        ("info", LogLevel::Info),
        ("debug", LogLevel::Debug),
        ("trace", LogLevel::Trace),
    ];
}

/// The name a `(name, value)` table gives `value`.
fn name_of<T: PartialEq + Copy>(table: &[(&'static str, T)], value: T) -> &'static str {
    table
        .iter()
        .find(|(_, v)| *v == value)
        .map_or("?", |(name, _)| name)
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

/// Writes `ns` in the largest unit that divides it exactly, as `duration=` accepts it.
pub(crate) fn write_duration(f: &mut fmt::Formatter<'_>, ns: u64) -> fmt::Result {
    const UNITS: [(u64, &str); 4] = [
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ];
    let (div, unit) = UNITS
        .iter()
        .find(|(div, _)| ns.is_multiple_of(*div))
        .copied()
        .unwrap_or((1, "ns"));
    write!(f, "{}{unit}", ns / div)
}

/// The canonical option string: every option in force, defaults resolved, in table order
/// (`smp=` only when more than one CPU is asked for). It parses back to the same effective configuration.
impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "run={}", self.run.join(","))?;
        if !self.tasks.is_empty() {
            write!(f, " tasks={}", tasks::to_string(&self.tasks))?;
        }
        write!(f, " policy={}", name_of(&Policy::ALL, self.policy))?;
        if let Some(era) = self.effective_era() {
            write!(f, " era={}", name_of(&Era::ALL, era))?;
        }
        if !self.features.is_empty() {
            write!(f, " features={}", self.features_value())?;
        }
        for (tunable, value) in self.tunables.given() {
            write!(f, " {}={value}", tunable.option_name())?;
        }
        if self.policy != Policy::O1 {
            write!(
                f,
                " group={}",
                name_of(&Grouping::ALL, self.effective_group())
            )?;
        }
        if !self.shares.is_empty() {
            let shares: Vec<String> = self
                .shares
                .iter()
                .map(|s| alloc::format!("{}:{}", s.uid, s.weight))
                .collect();
            write!(f, " shares={}", shares.join(","))?;
        }
        write!(f, " hz={}", self.effective_hz())?;
        write!(
            f,
            " clockevent={}",
            name_of(&ClockEvent::ALL, self.clockevent)
        )?;
        write!(f, " hrtimer={}", on_off(self.hrtimer))?;
        if let Some(ns) = self.duration_ns {
            f.write_str(" duration=")?;
            write_duration(f, ns)?;
        }
        write!(f, " seed={}", self.seed)?;
        write!(f, " trace={}", on_off(self.trace))?;
        write!(f, " log={}", name_of(&LogLevel::ALL, self.log))?;
        // One CPU is echoed by leaving it out: the uniprocessor line stays the one every
        // recorded figure and document shows.
        if self.smp != 1 {
            write!(f, " smp={}", self.smp)?;
        }
        // Echoed only when asked for, like `smp=`: the line every recorded figure shows
        // stays as it was.
        if self.invariant {
            f.write_str(" invariant=on")?;
        }
        if self.invariant || self.invariant_ms != DEFAULT_INVARIANT_MS {
            write!(f, " invariant_ms={}", self.invariant_ms)?;
        }
        // run=shell and a Wasted Cores scenario stand for their program: not echoed.
        let stands_for_program =
            self.run == [parse::SHELL] || matches!(self.run[..], [name] if wasted::is_wasted(name));
        if !self.program.is_empty() && !stands_for_program {
            let argv: Vec<String> = self.program.iter().map(|w| program::quoted(w)).collect();
            write!(f, " -- {}", argv.join(" "))?;
        }
        Ok(())
    }
}
