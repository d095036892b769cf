//! Unit tests of the boot option parser, including hostile input (host; `tests/fuzz.rs`
//! fuzzes the whole grammar, and the kernel re-runs the hostile cases in QEMU).

use super::*;
use crate::parse::{KEYS, MAX_CMDLINE_BYTES};
use alloc::format;
use alloc::string::ToString;

mod task_specs;

fn error_of(cmdline: &str) -> OptionError {
    Config::parse(cmdline).expect_err("should be rejected")
}

#[test]
fn empty_and_blank_command_lines_give_the_defaults() {
    assert_eq!(Config::parse(""), Ok(Config::default()));
    assert_eq!(Config::parse("  \t \n "), Ok(Config::default()));
}

#[test]
fn every_key_parses() {
    let c = Config::parse(
        "run=seed000-s1,seed003 policy=cfs era=2.6.24 features=NO_START_DEBIT,GROUP_SLEEPER_CREDIT \
         latency_ns=20000000 min_granularity_ns=4000000 wakeup_granularity_ns=0 group=uid \
         shares=0:2048,1:512 hz=250 clockevent=pit hrtimer=off duration=500ms trace=on log=debug",
    )
    .unwrap();
    assert_eq!(c.run, ["seed000-s1", "seed003"]);
    assert_eq!(c.era, Some(Era::V2_6_24));
    assert_eq!(
        c.features,
        [
            FeatureSetting {
                feature: sched::Feature::StartDebit,
                enabled: false
            },
            FeatureSetting {
                feature: sched::Feature::GroupSleeperCredit,
                enabled: true
            }
        ]
    );
    assert_eq!(c.tunables.get(sched::Tunable::Latency), Some(20_000_000));
    assert_eq!(c.tunables.get(sched::Tunable::WakeupGranularity), Some(0));
    assert_eq!(
        c.shares,
        [
            Share {
                uid: 0,
                weight: 2048
            },
            Share {
                uid: 1,
                weight: 512
            }
        ]
    );
    assert_eq!(
        (c.effective_hz(), c.clockevent, c.hrtimer, c.trace),
        (250, ClockEvent::Pit, false, true)
    );
    assert_eq!(c.duration_ns, Some(500_000_000));
    assert_eq!(c.log, LogLevel::Debug);
    let e = Config::parse("policy=eevdf base_slice_ns=3000000").unwrap();
    assert_eq!(e.tunables.get(sched::Tunable::BaseSlice), Some(3_000_000));
}

#[test]
fn the_echo_is_canonical_and_parses_back() {
    for cmdline in [
        "",
        "policy=eevdf hz=100 duration=2s",
        "era=2.6.24 shares=1:512 features=NO_START_DEBIT trace=on",
        "policy=o1 run=seed002-a,seed002-b clockevent=pit hrtimer=off duration=15000us",
    ] {
        let echo = Config::parse(cmdline).unwrap().to_string();
        let again = Config::parse(&echo).unwrap_or_else(|e| panic!("echo '{echo}' rejected: {e}"));
        assert_eq!(again.to_string(), echo);
    }
    assert_eq!(
        Config::default().to_string(),
        "run=lab policy=cfs era=2.6.36 group=none hz=250 clockevent=lapic hrtimer=on seed=1 trace=off log=info"
    );
}

#[test]
fn defaults_follow_the_era() {
    let c = Config::parse("era=2.6.24").unwrap();
    assert_eq!(c.effective_group(), Grouping::Uid);
    let c = Config::parse("era=2.6.36").unwrap();
    assert_eq!(c.effective_group(), Grouping::None);
    assert_eq!(
        Config::parse("policy=eevdf").unwrap().effective_era(),
        Some(Era::V6_6)
    );
    assert_eq!(Config::parse("policy=o1").unwrap().effective_era(), None);
    // Each era ticks at its release's default unless hz= says otherwise.
    for (cmdline, hz) in [
        ("", 250),
        ("era=2.6.24", 250),
        ("policy=eevdf", 250),
        ("policy=o1", 1000),
        ("policy=o1 hz=100", 100),
        ("era=2.6.24 hz=1000", 1000),
    ] {
        assert_eq!(
            Config::parse(cmdline).unwrap().effective_hz(),
            hz,
            "{cmdline}"
        );
    }
}

#[test]
fn a_bad_hz_names_the_option_and_its_values() {
    let e = error_of("hz=7");
    assert_eq!(e.option, "hz");
    assert_eq!(e.valid, "100, 250, 1000");
    assert_eq!(
        e.to_string(),
        "bad boot option hz: unsupported tick rate '7' (valid: 100, 250, 1000)"
    );
}

#[test]
fn an_unknown_key_lists_the_keys() {
    let e = error_of("bogus=1");
    assert_eq!(
        (e.option.as_str(), e.reason.as_str()),
        ("bogus", "unknown option")
    );
    for key in KEYS {
        assert!(e.valid.contains(key), "{key} missing from {}", e.valid);
    }
}

#[test]
fn an_empty_value_lists_what_the_key_accepts() {
    let e = error_of("policy=");
    assert_eq!(
        (e.option.as_str(), e.reason.as_str()),
        ("policy", "empty value")
    );
    assert_eq!(e.valid, "cfs, eevdf, o1");
    assert!(error_of("duration=").valid.contains("ms"));
}

#[test]
fn malformed_tokens_are_rejected() {
    assert_eq!(error_of("=").reason, "missing key before '='");
    assert_eq!(error_of("==").reason, "missing key before '='");
    assert_eq!(error_of("=cfs").option, "=cfs");
    assert_eq!(error_of("policy").reason, "expected key=value");
    assert_eq!(error_of("hz=1000 hz=100").reason, "given twice");
    assert_eq!(error_of("policy=cfs=eevdf").option, "policy");
}

#[test]
fn very_long_input_is_refused_whole_and_echoed_short() {
    let long = "x".repeat(MAX_CMDLINE_BYTES + 1);
    let e = error_of(&long);
    assert_eq!(e.option, "cmdline");
    assert!(e.reason.contains(&format!("{}", MAX_CMDLINE_BYTES + 1)));
    // At the limit, padding is fine...
    let padded = format!("hz=100{}", " ".repeat(MAX_CMDLINE_BYTES - 6));
    assert_eq!(Config::parse(&padded).unwrap().hz, Some(100));
    // ...and a long bad key is cut in the report.
    let key = "k".repeat(3000);
    let e = error_of(&format!("{key}=1"));
    assert_eq!(e.option, format!("{}...", "k".repeat(40)));
}

#[test]
fn non_ascii_is_escaped_in_reports() {
    let e = error_of("pölicy=cfs");
    assert_eq!(e.option, "p\\u{f6}licy");
    let e = error_of("policy=cfs\u{200b}");
    assert!(e.reason.contains("cfs\\u{200b}"), "{}", e.reason);
    let e = Config::parse_bytes(b"hz=100 \xff\xfe=1").unwrap_err();
    assert_eq!(e.option, "cmdline");
    assert!(e.reason.contains("byte 7"), "{}", e.reason);
}

#[test]
fn numbers_are_checked_for_range_and_form() {
    assert!(error_of("latency_ns=99999").reason.contains("out of range"));
    assert!(
        error_of("latency_ns=1000000001")
            .reason
            .contains("out of range")
    );
    assert!(error_of("latency_ns=-5").reason.contains("not a number"));
    assert!(error_of("latency_ns=+5").reason.contains("not a number"));
    assert!(
        error_of("latency_ns=99999999999999999999999")
            .reason
            .contains("not a number")
    );
    assert!(error_of("hz=1000.0").reason.contains("unsupported"));
}

#[test]
fn durations_need_a_unit_and_a_sane_length() {
    let ns = |s: &str| Config::parse(&format!("duration={s}")).map(|c| c.duration_ns.unwrap());
    assert_eq!(ns("10s"), Ok(10_000_000_000));
    assert_eq!(ns("10ms"), Ok(10_000_000));
    assert_eq!(ns("25000us"), Ok(25_000_000));
    assert!(ns("10").is_err());
    assert!(ns("1h").is_err());
    assert!(ns("ms").is_err());
    assert!(ns("9ms").is_err());
    assert!(ns("3601s").is_err());
    assert!(ns("99999999999999999999s").is_err());
}

#[test]
fn lists_reject_unknown_repeated_and_empty_items() {
    assert!(error_of("run=seed001").reason.contains("unknown scenario"));
    assert!(error_of("run=seed003,seed003").reason.contains("twice"));
    assert!(error_of("run=lab,,seed003").reason.contains("empty item"));
    assert!(
        error_of("features=START_DEBT")
            .reason
            .contains("unknown feature")
    );
    assert!(
        error_of("features=START_DEBIT,NO_START_DEBIT")
            .reason
            .contains("twice")
    );
    assert!(error_of("features=NO_").reason.contains("unknown feature"));
    assert!(
        error_of("era=2.6.24 shares=1:1")
            .reason
            .contains("out of range")
    );
    assert!(
        error_of("era=2.6.24 shares=1:1024,1:512")
            .reason
            .contains("repeats")
    );
    assert!(
        error_of("era=2.6.24 shares=1")
            .reason
            .contains("uid:weight")
    );
    assert!(
        error_of("era=2.6.24 shares=x:1024")
            .reason
            .contains("bad uid")
    );
    let pit = error_of("smp=2 clockevent=pit");
    assert_eq!(pit.option, "clockevent");
    assert!(pit.reason.contains("CPU 0 alone"), "{pit:?}");
    assert!(Config::parse("smp=1 clockevent=pit").is_ok());
}

#[test]
fn run_shell_runs_the_shell_alone_and_echoes_back() {
    let c = Config::parse("run=shell policy=eevdf").unwrap();
    assert_eq!(c.program, ["/bin/sh"]);
    // The echo names run=shell, not the program it stands for, and parses back.
    let echoed = c.to_string();
    assert!(
        echoed.contains("run=shell") && !echoed.contains(" -- "),
        "{echoed}"
    );
    let again = Config::parse(&echoed).unwrap();
    assert_eq!((again.to_string(), again.program), (echoed, c.program));
    assert_eq!(error_of("run=shell -- /bin/hello").option, "run");
    assert_eq!(error_of("run=shell,lab").option, "run");
}

#[test]
fn smp_takes_a_cpu_count_and_is_echoed_past_one() {
    assert_eq!(Config::default().smp, 1);
    for (cmdline, n) in [("smp=1", 1), ("smp=2", 2), ("smp=64", 64), ("smp=007", 7)] {
        assert_eq!(Config::parse(cmdline).unwrap().smp, n, "{cmdline}");
    }
    // One CPU leaves the echo as it always was; more are named, and parse back.
    assert_eq!(
        Config::parse("smp=1").unwrap().to_string(),
        Config::default().to_string()
    );
    let echo = Config::parse("smp=4 hz=100").unwrap().to_string();
    assert!(echo.ends_with(" log=info smp=4"), "{echo}");
    assert_eq!(Config::parse(&echo).unwrap().smp, 4);
    let e = error_of("smp=65");
    assert_eq!(
        e.to_string(),
        "bad boot option smp: 65 is out of range (valid: an integer from 1 to 64)"
    );
    assert!(error_of("smp=0").reason.contains("out of range"));
    for bad in [
        "smp=abc",
        "smp=-1",
        "smp=2.0",
        "smp=99999999999999999999999",
    ] {
        assert!(error_of(bad).reason.contains("not a number"), "{bad}");
    }
    let e = error_of("smp=");
    assert_eq!(
        (e.reason.as_str(), e.valid.as_str()),
        ("empty value", "an integer from 1 to 64")
    );
    assert_eq!(error_of("smp=2 smp=2").reason, "given twice");
}

#[test]
fn the_invariant_is_off_unless_asked_and_its_threshold_is_the_paper_s() {
    let c = Config::default();
    assert_eq!((c.invariant, c.invariant_ms), (false, 100));
    let c = Config::parse("invariant=on").unwrap();
    assert_eq!((c.invariant, c.invariant_ms), (true, 100));
    // The threshold, before or after, is the one used; alone it does not turn it on.
    for cmdline in [
        "invariant_ms=250 invariant=on",
        "invariant=on invariant_ms=250",
    ] {
        let c = Config::parse(cmdline).unwrap();
        assert_eq!((c.invariant, c.invariant_ms), (true, 250), "{cmdline}");
    }
    assert!(!Config::parse("invariant_ms=250").unwrap().invariant);
    // Off leaves the echo as it was; on is named, and parses back.
    assert_eq!(
        Config::parse("invariant=off").unwrap().to_string(),
        Config::default().to_string()
    );
    let echo = Config::parse("smp=4 invariant=on").unwrap().to_string();
    assert!(
        echo.ends_with(" smp=4 invariant=on invariant_ms=100"),
        "{echo}"
    );
    let again = Config::parse(&echo).unwrap();
    assert_eq!(
        (again.invariant, again.invariant_ms, again.to_string()),
        (true, 100, echo)
    );
    assert_eq!(error_of("invariant=yes").option, "invariant");
    assert!(error_of("invariant_ms=0").reason.contains("out of range"));
    assert!(
        error_of("invariant_ms=3600001")
            .reason
            .contains("out of range")
    );
    assert!(error_of("invariant_ms=1s").reason.contains("not a number"));
}
