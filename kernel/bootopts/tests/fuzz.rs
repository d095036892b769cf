//! The whole boot-option grammar, fuzzed on the host with proptest: random lines, and
//! mutations of valid ones. Every outcome must be a configuration whose canonical echo parses
//! back to itself, or exactly one printable error line that names the option at fault. No
//! input may panic: the kernel runs this parser before anything else, and a panic there
//! would end the run without telling the user what was wrong.
//!
//! 10^5 cases per `cargo test` (the three properties below together); `PROPTEST_CASES`
//! raises each property's count for a longer hunt. The random seed is fixed, so every run
//! (and CI) tries the same cases; `PROPTEST_RNG_SEED=N` hunts elsewhere.

use bootopts::{Config, KEYS, MAX_CMDLINE_BYTES, OptionError};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngSeed};

/// The seed used unless PROPTEST_RNG_SEED names another.
const FIXED_SEED: u64 = 0x00cf_51ab;

/// Cases per property, unless PROPTEST_CASES says otherwise: 40 000 + 40 000 + 20 000.
fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    let rng_seed = match std::env::var("PROPTEST_RNG_SEED") {
        Ok(_) => ProptestConfig::default().rng_seed,
        Err(_) => RngSeed::Fixed(FIXED_SEED),
    };
    ProptestConfig {
        cases,
        rng_seed,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The reasons a token that has no valid key is rejected with (the option is then the
/// token itself, echoed).
const TOKEN_REASONS: [&str; 3] = [
    "unknown option",
    "expected key=value",
    "missing key before '='",
];

/// What every outcome must satisfy.
fn check_outcome(cmdline: &str, outcome: Result<Config, OptionError>) -> Result<(), TestCaseError> {
    match outcome {
        Ok(config) => {
            let echo = config.to_string();
            let again = Config::parse(&echo)
                .map_err(|e| TestCaseError::fail(format!("echo {echo:?} rejected: {e}")))?;
            prop_assert_eq!(again.to_string(), echo, "echo of {:?}", cmdline);
        }
        Err(e) => {
            let line = e.to_string();
            prop_assert!(line.starts_with("bad boot option "), "{:?}", line);
            prop_assert!(
                line.chars().all(|c| c.is_ascii() && !c.is_ascii_control()),
                "not one printable line: {:?}",
                line
            );
            prop_assert!(!e.option.is_empty() && !e.valid.is_empty(), "{:?}", line);
            // At most 40 characters echoed, each at worst a \u{10ffff} escape, plus "...".
            prop_assert!(e.option.len() <= 40 * 10 + 3, "{:?}", line);
            let names_a_key = KEYS.contains(&e.option.as_str())
                || e.option == "cmdline"
                || e.option == bootopts::program::SEPARATOR;
            let names_its_token = TOKEN_REASONS.iter().any(|r| e.reason.starts_with(r));
            prop_assert!(
                names_a_key || names_its_token,
                "names no option: {:?}",
                line
            );
        }
    }
    Ok(())
}

/// Pieces of values the grammar cares about: separators, signs, huge numbers, units,
/// non-ASCII, names of real values.
fn value_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            ":",
            "@",
            "*",
            "%",
            ",",
            "-",
            "+",
            "=",
            "",
            "NO_",
            "s",
            "ms",
            "us",
            "ns",
            "ö",
            "\u{0}",
            "\u{7f}",
            "\u{10ffff}",
            "99999999999999999999",
            "18446744073709551615",
            "-9223372036854775808",
            "0",
            "1",
            "19",
            "-20",
            "250",
            "1000",
            "lab",
            "custom",
            "seed003",
            "seed000-s1",
            "hog",
            "sleeper",
            "waker",
            "makej",
            "lat3",
            "cfs",
            "eevdf",
            "o1",
            "2.6.24",
            "6.6",
            "uid",
            "none",
            "on",
            "off",
            "START_DEBIT",
            "PLACE_LAG",
            "RUN_TO_PARITY",
            "lapic",
            "pit",
            "debug",
        ])
        .prop_map(String::from),
        "[0-9]{1,20}",
        "[a-z:@*%,+-]{0,8}",
        any::<char>().prop_map(String::from),
    ]
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::collection::vec(value_piece(), 0..8).prop_map(|p| p.concat()),
        1 => (value_piece(), 1usize..5000).prop_map(|(p, n)| p.repeat(n).chars().take(5000).collect()),
    ]
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (prop::sample::select(KEYS.to_vec()), value()).prop_map(|(k, v)| format!("{k}={v}")),
        1 => value(),
        1 => any::<String>(),
    ]
}

fn line() -> impl Strategy<Value = String> {
    prop::collection::vec(token(), 0..6).prop_map(|t| t.join(" "))
}

/// Valid command lines, one per line of this list's combinations.
const VALID: [&str; 8] = [
    "",
    "run=seed000-s1,seed003 era=2.6.24 features=NO_START_DEBIT,GROUP_SLEEPER_CREDIT latency_ns=20000000 group=uid shares=0:2048,1:512 hz=250 clockevent=pit hrtimer=off duration=500ms trace=on log=debug",
    "policy=eevdf base_slice_ns=3000000 features=NO_PLACE_LAG run=seed002-a",
    "policy=o1 run=seed002-a,seed002-b duration=15000us seed=42 smp=4",
    "run=custom tasks=sleeper:50ms@1,hog@2*2%-5,waker,makej:4%19",
    "run=custom tasks=lat3:1s*2 policy=eevdf hz=100",
    "era=2.6.32 min_granularity_ns=1000000 wakeup_granularity_ns=0 features=ASYM_GRAN",
    "run=lab era=2.6.36 group=none trace=off log=warn",
];

/// A mutation of a valid line.
#[derive(Debug, Clone)]
enum Mutation {
    Insert(usize, String),
    Delete(usize, usize),
    Replace(usize, String),
    Duplicate(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), value()).prop_map(|(at, s)| Mutation::Insert(at, s)),
        (any::<usize>(), 0usize..20).prop_map(|(at, n)| Mutation::Delete(at, n)),
        (any::<usize>(), value_piece()).prop_map(|(at, s)| Mutation::Replace(at, s)),
        (any::<usize>(), 1usize..40).prop_map(|(at, n)| Mutation::Duplicate(at, n)),
    ]
}

/// The char boundary at or before `at % (len + 1)`.
fn boundary(s: &str, at: usize) -> usize {
    let mut at = at % (s.len() + 1);
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn mutate(line: &str, mutations: &[Mutation]) -> String {
    let mut s = line.to_string();
    for m in mutations {
        match m {
            Mutation::Insert(at, text) => s.insert_str(boundary(&s, *at), text),
            Mutation::Delete(at, n) => {
                let from = boundary(&s, *at);
                let to = boundary(&s, from + n).max(from);
                s.replace_range(from..to, "");
            }
            Mutation::Replace(at, text) => {
                let from = boundary(&s, *at);
                let to = boundary(&s, from + text.len().max(1)).max(from);
                s.replace_range(from..to, text);
            }
            Mutation::Duplicate(at, n) => {
                let from = boundary(&s, *at);
                let to = boundary(&s, from + n).max(from);
                let copy = s[from..to].to_string();
                s.insert_str(to, &copy);
            }
        }
    }
    s
}

proptest! {
    #![proptest_config(cases(40_000))]

    #[test]
    fn random_lines_give_a_config_or_one_line(cmdline in line()) {
        check_outcome(&cmdline, Config::parse(&cmdline))?;
    }

    #[test]
    fn mutated_valid_lines_give_a_config_or_one_line(
        base in prop::sample::select(VALID.to_vec()),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let cmdline = mutate(base, &mutations);
        check_outcome(&cmdline, Config::parse(&cmdline))?;
    }
}

proptest! {
    #![proptest_config(cases(20_000))]

    #[test]
    fn random_bytes_give_a_config_or_one_line(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let outcome = Config::parse_bytes(&bytes);
        check_outcome(&String::from_utf8_lossy(&bytes), outcome)?;
    }
}

#[test]
fn the_valid_lines_are_valid() {
    for line in VALID {
        check_outcome(line, Config::parse(line)).unwrap();
        assert!(Config::parse(line).is_ok(), "{line}");
    }
    assert!(Config::parse(&"x".repeat(MAX_CMDLINE_BYTES + 1)).is_err());
}
