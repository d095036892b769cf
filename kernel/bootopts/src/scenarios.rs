//! The seed experiments, defined once: each scenario's tasks, era, grouping and default
//! window, and the lab's matrix of variants (the rows of each seed's table), as boot options.
//!
//! Three users read this one definition: the kernel's lab (`run=seed003` starts these tasks),
//! the host simulator's seed tests (`kernel/sched/tests/seeds.rs` runs every variant on the
//! simulator) and `boot lab` (`make lab` runs every variant in the kernel). A variant is a
//! boot-option string, so that each row of a table can be reproduced with one command.

use crate::tasks::{TaskKind, TaskSpec};
use crate::{Config, Era, Grouping, Policy};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

/// The scenarios `run=lab` stands for, in order.
pub const SEED_SCENARIOS: [&str; 5] = [
    "seed000-s1",
    "seed000-s2",
    "seed002-a",
    "seed002-b",
    "seed003",
];

/// One scenario: tasks to start, and the era and grouping the experiment needs unless the
/// boot options say otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scenario {
    /// `run=` name.
    pub name: &'static str,
    /// What it measures, in one sentence with its unit (the console's header line).
    pub measures: &'static str,
    /// The era the experiment needs, unless `era=` is given (and the policy is CFS).
    pub era: Option<Era>,
    /// The grouping it needs, unless `group=` is given.
    pub group: Option<Grouping>,
    /// The default measured window (short: `make run` runs them all; `duration=` overrides).
    pub duration_ns: u64,
    pub tasks: Vec<TaskSpec>,
}

fn spec(kind: TaskKind, arg: u64, uid: u32, count: u32) -> TaskSpec {
    TaskSpec {
        kind,
        arg,
        uid,
        count,
        nice: 0,
        io: false,
    }
}

impl Scenario {
    /// The scenario `run=name` runs; `custom` takes `config.tasks`. `None` for an unknown
    /// name (the parser accepts only known ones).
    pub fn named(name: &str, config: &Config) -> Option<Scenario> {
        use TaskKind::*;
        let (name, measures, era, group, duration_ns, tasks) = match name {
            // seed 000 script 1: uid 1 runs the sleeper alone; uid 2 two hogs.
            "seed000-s1" => (
                "seed000-s1",
                "how late uid 1's sleeper woke after each 100 ms sleep (µs), while uid 2 runs two CPU hogs",
                Some(Era::V2_6_24),
                Some(Grouping::Uid),
                3 * S,
                alloc::vec![spec(Sleeper, S / 10, 1, 1), spec(Hog, 0, 2, 2)],
            ),
            // Script 2: uid 1 runs the sleeper and a hog; uid 2 a hog.
            "seed000-s2" => (
                "seed000-s2",
                "how late uid 1's sleeper woke after each 100 ms sleep (µs), beside a hog of its own uid and one of uid 2",
                Some(Era::V2_6_24),
                Some(Grouping::Uid),
                3 * S,
                alloc::vec![
                    spec(Sleeper, S / 10, 1, 1),
                    spec(Hog, 0, 1, 1),
                    spec(Hog, 0, 2, 1)
                ],
            ),
            // seed 002 run A: two lat3 with 1 s loops.
            "seed002-a" => (
                "seed002-a",
                "the longest gap in each loop of two lat3 tasks, each spinning 1 s between 1 ms sleeps (µs): the time another task held the CPU",
                None,
                None,
                3 * S,
                alloc::vec![spec(Lat3, S, 1, 2)],
            ),
            // Run B: a 1 s loop beside a 10 s loop.
            "seed002-b" => (
                "seed002-b",
                "the longest gap in each loop of a 1 s lat3 beside a 10 s one (µs): the time another task held the CPU",
                None,
                None,
                3 * S,
                alloc::vec![spec(Lat3, S, 1, 1), spec(Lat3, 10 * S, 1, 1)],
            ),
            // seed 003: wakeup-latency (10 ms) beside make -j10, on the 2.6.36 tunables.
            "seed003" => (
                "seed003",
                "how late the waker thread ran after each 10 ms timer expiry (µs), while make -j10's jobs keep the CPU busy",
                Some(Era::V2_6_36),
                None,
                2 * S,
                alloc::vec![spec(Waker, 10 * MS, 1, 1), spec(Makej, 10, 1, 1)],
            ),
            // The same with make's jobs sleeping on I/O between bursts, as a real build does.
            "seed003-io" => (
                "seed003-io",
                "how late the waker thread ran after each 10 ms timer expiry (µs), while make -j10's jobs alternate CPU bursts and I/O sleeps",
                Some(Era::V2_6_36),
                None,
                2 * S,
                alloc::vec![
                    spec(Waker, 10 * MS, 1, 1),
                    TaskSpec {
                        io: true,
                        ..spec(Makej, 10, 1, 1)
                    }
                ],
            ),
            "custom" => (
                "custom",
                "how late each sleeper, waker and lat3 task ran after its sleep or timer (µs), and each task's CPU time",
                None,
                None,
                2 * S,
                config.tasks.clone(),
            ),
            _ => return None,
        };
        Some(Scenario {
            name,
            measures,
            era,
            group,
            duration_ns,
            tasks,
        })
    }

    /// The options the scenario runs with: the user's, with the scenario's era and grouping
    /// where the user left them open.
    pub fn config_for(&self, user: &Config) -> Config {
        let mut c = user.clone();
        if c.era.is_none() && c.policy == Policy::Cfs {
            c.era = self.era;
        }
        if c.group.is_none() && c.policy != Policy::O1 {
            c.group = self.group;
        }
        c
    }
}

/// The scenarios a `run=` list stands for, in order (`lab` = [`SEED_SCENARIOS`]).
pub fn expand_run(run: &[&'static str]) -> Vec<&'static str> {
    let mut names = Vec::new();
    for &name in run {
        if name == "lab" {
            names.extend(SEED_SCENARIOS);
        } else {
            names.push(name);
        }
    }
    names
}

/// One row of the lab: a seed experiment run with some options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// "seed000", "seed002", "seed003".
    pub experiment: &'static str,
    /// The scenario it runs (`run=`).
    pub scenario: &'static str,
    /// What the row of the seed's table says.
    pub label: String,
    /// The boot options, without `duration=`, `seed=` or `trace=`.
    pub options: String,
    /// The lab traces this row (one per experiment).
    pub traced: bool,
    /// The shortest window that shows the row's effect, in seconds (the lab's default if
    /// longer).
    pub min_seconds: u64,
}

/// Every row of the three seeds' tables: seed 000's scripts with and without group sleeper
/// credit and groups, seed 002's runs under O(1) and CFS, and seed 003's feature
/// combinations, the thread's min_granularity tune and EEVDF.
pub fn matrix() -> Vec<Variant> {
    let mut rows = Vec::new();
    let mut add = |experiment, scenario, label: String, options: String, traced| {
        // Run B's stall comes after the 10 s loop's first cycle (the thread's 2 499.6 ms was
        // about 13 s in): seed 002 needs 30 s windows, as its host simulation has.
        let min_seconds = if experiment == "seed002" { 30 } else { 0 };
        rows.push(Variant {
            experiment,
            scenario,
            label,
            options,
            traced,
            min_seconds,
        })
    };
    for (script, scenario) in [(1, "seed000-s1"), (2, "seed000-s2")] {
        for (label, extra) in [
            ("group=uid, group sleeper credit off", "group=uid"),
            (
                "group=uid, group sleeper credit on",
                "group=uid features=GROUP_SLEEPER_CREDIT",
            ),
            ("group=none", "group=none"),
        ] {
            add(
                "seed000",
                scenario,
                format!("script {script}, {label}"),
                format!("run={scenario} era=2.6.24 {extra}"),
                script == 2 && extra == "group=uid",
            );
        }
    }
    for (run, scenario) in [
        ("A: 1 s + 1 s loops", "seed002-a"),
        ("B: 1 s + 10 s loops", "seed002-b"),
    ] {
        for policy in ["o1", "cfs"] {
            add(
                "seed002",
                scenario,
                format!("{policy}, {run}"),
                format!("run={scenario} policy={policy}"),
                scenario == "seed002-a" && policy == "o1",
            );
        }
    }
    for features in seed003_feature_sets() {
        let label = if features.is_empty() {
            "vanilla".to_string()
        } else {
            features.join(" + ")
        };
        let options = if features.is_empty() {
            "run=seed003 era=2.6.36".to_string()
        } else {
            format!("run=seed003 era=2.6.36 features={}", features.join(","))
        };
        add("seed003", "seed003", label, options, features.is_empty());
    }
    // Peter Zijlstra's tune (2.6.36's 0.75 ms minimum granularity, divided by 3), make's
    // jobs with their I/O sleeps, and EEVDF.
    add(
        "seed003",
        "seed003",
        "min_granularity/3".into(),
        "run=seed003 era=2.6.36 min_granularity_ns=250000".into(),
        false,
    );
    add(
        "seed003",
        "seed003-io",
        "jobs with I/O".into(),
        "run=seed003-io era=2.6.36".into(),
        false,
    );
    add(
        "seed003",
        "seed003",
        "EEVDF (6.6)".into(),
        "run=seed003 policy=eevdf".into(),
        false,
    );
    rows
}

/// seed 003's feature combinations: each of START_DEBIT, DYN_GRANULARITY,
/// CLAMP_CHILD_RIGHTMOST and VFORK_SLEEPER_CREDIT on or off, as settings that differ from the
/// 2.6.36 preset.
fn seed003_feature_sets() -> Vec<Vec<String>> {
    let mut sets = Vec::new();
    for start_debit in [true, false] {
        for dyn_gran in [false, true] {
            for clamp in [false, true] {
                for vfork_credit in [true, false] {
                    let mut set = Vec::new();
                    for (on, default, name) in [
                        (start_debit, true, "START_DEBIT"),
                        (dyn_gran, false, "DYN_GRANULARITY"),
                        (clamp, false, "CLAMP_CHILD_RIGHTMOST"),
                        (vfork_credit, true, "VFORK_SLEEPER_CREDIT"),
                    ] {
                        if on != default {
                            set.push(format!("{}{name}", if on { "" } else { "NO_" }));
                        }
                    }
                    sets.push(set);
                }
            }
        }
    }
    sets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_parses_and_names_a_known_scenario() {
        let rows = matrix();
        assert_eq!(rows.iter().filter(|v| v.experiment == "seed000").count(), 6);
        assert_eq!(rows.iter().filter(|v| v.experiment == "seed002").count(), 4);
        // 2^4 feature combinations, the min_granularity tune, jobs with I/O and EEVDF.
        assert_eq!(
            rows.iter().filter(|v| v.experiment == "seed003").count(),
            19
        );
        assert_eq!(rows.iter().filter(|v| v.traced).count(), 3);
        for v in &rows {
            let config = Config::parse(&v.options).unwrap_or_else(|e| panic!("{}: {e}", v.options));
            let run = expand_run(&config.run);
            assert_eq!(run.len(), 1, "{}", v.options);
            assert!(Scenario::named(run[0], &config).is_some());
        }
        for name in SEED_SCENARIOS {
            assert!(
                Scenario::named(name, &Config::default()).is_some(),
                "{name}"
            );
        }
    }
}
