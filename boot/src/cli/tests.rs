//! Tests of the boot tool's command line: modes, flags and the errors of bad ones.

use super::*;

fn argv(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

#[test]
fn run_collects_boot_options_from_opts_and_positionals() {
    let mut v = argv("run --verbose hz=100");
    v.extend(["--opts".into(), "policy=eevdf  trace=on".into()]);
    let Mode::Run(args) = parse(&v).unwrap() else {
        panic!()
    };
    assert_eq!(args.options, ["hz=100", "policy=eevdf", "trace=on"]);
    assert!(args.verbose && !args.realtime);
}

#[test]
fn flags_are_checked() {
    assert!(
        parse(&argv("run --icount-shift 11"))
            .unwrap_err()
            .contains("out of range")
    );
    assert!(
        parse(&argv("run --timeout soon"))
            .unwrap_err()
            .contains("not a number")
    );
    assert!(
        parse(&argv("run --port 1"))
            .unwrap_err()
            .contains("unknown flag --port")
    );
    assert!(
        parse(&argv("run --opts"))
            .unwrap_err()
            .contains("needs a value")
    );
    assert!(parse(&argv("fly")).unwrap_err().contains("unknown mode"));
    assert!(parse(&[]).is_err());
}

#[test]
fn help_works_on_every_mode() {
    for line in [
        "run --help",
        "gdb -h",
        "lab --seconds 5 --help",
        "--help",
        "help",
    ] {
        assert_eq!(parse(&argv(line)), Ok(Mode::Help), "{line}");
    }
}

#[test]
fn gdb_takes_a_port_and_no_launch() {
    let Mode::Gdb(args) = parse(&argv("gdb --port 4000 --no-launch")).unwrap() else {
        panic!()
    };
    assert_eq!((args.gdb_port, args.no_launch), (4000, true));
}

#[test]
fn linux_needs_a_program_and_takes_no_boot_options() {
    let Mode::Linux(args) = parse(&argv("linux --timeout 60 -- /bin/hello a")).unwrap() else {
        panic!()
    };
    assert_eq!(args.options, ["--", "/bin/hello", "a"]);
    assert_eq!(args.timeout_secs, Some(60));
    for line in ["linux", "linux --", "linux policy=eevdf -- /bin/hello"] {
        assert!(parse(&argv(line)).is_err(), "{line}");
    }
}

#[test]
fn compare_runs_all_or_one_part() {
    use crate::compare::Part;
    let part = |line: &str| match parse(&argv(line)) {
        Ok(Mode::Compare { part, .. }) => Ok(part),
        Ok(_) => Err("another mode".to_string()),
        Err(e) => Err(e),
    };
    assert_eq!(part("compare"), Ok(Part::All));
    assert_eq!(part("compare --paths"), Ok(Part::Paths));
    assert_eq!(
        part("compare --several-cpus"),
        Ok(Part::Smp { quick: false })
    );
    assert_eq!(
        part("compare --several-cpus --quick"),
        Ok(Part::Smp { quick: true })
    );
    for line in ["compare --quick", "compare --paths --several-cpus"] {
        assert!(part(line).is_err(), "{line}");
    }
}

#[test]
fn docs_takes_generators_or_check() {
    use crate::docs::Action;
    assert_eq!(parse(&argv("docs")), Ok(Mode::Docs(Action::Render)));
    assert_eq!(parse(&argv("docs --check")), Ok(Mode::Docs(Action::Check)));
    assert_eq!(
        parse(&argv("docs run seeds")),
        Ok(Mode::Docs(Action::Generate(vec![
            "run".into(),
            "seeds".into()
        ])))
    );
    assert!(
        parse(&argv("docs lab"))
            .unwrap_err()
            .contains("no generator")
    );
    assert!(parse(&argv("docs --check run")).is_err());
}

#[test]
fn test_runner_passes_the_elf_and_the_rest() {
    assert_eq!(
        parse(&argv("test-runner /t/kernel-abc --nocapture")).unwrap(),
        Mode::TestRunner {
            kernel: "/t/kernel-abc".into(),
            extra: vec!["--nocapture".into()]
        }
    );
}

#[test]
fn smp_gives_qemu_cpus_and_tells_the_kernel() {
    let options = |line: &str| match parse(&argv(line)).unwrap() {
        Mode::Run(args) | Mode::Gdb(args) | Mode::Linux(args) => (args.smp, args.options),
        other => panic!("{other:?}"),
    };
    // The count goes before the program, whose words are its own.
    assert_eq!(
        options("run --smp 2 hz=100 -- /bin/nproc smp=9"),
        (
            Some(2),
            ["hz=100", "smp=2", "--", "/bin/nproc", "smp=9"]
                .map(String::from)
                .to_vec()
        )
    );
    assert_eq!(options("gdb --smp 4").1, ["smp=4"]);
    // Options that name a count keep theirs: the kernel refuses a mismatch itself.
    assert_eq!(options("run smp=3 --smp 2").1, ["smp=3"]);
    // No flag, no option: the uniprocessor runs stay as they were.
    assert_eq!(options("run hz=100"), (None, vec!["hz=100".to_string()]));
    // Linux takes no boot options; QEMU's -smp is all it needs.
    assert_eq!(
        options("linux --smp 64 -- /bin/nproc"),
        (Some(64), vec!["--".to_string(), "/bin/nproc".to_string()])
    );
}

#[test]
fn a_bad_cpu_count_is_refused() {
    for (line, why) in [
        ("run --smp 0", "--smp: 0 is out of range (1..=64)"),
        ("run --smp 65", "--smp: 65 is out of range (1..=64)"),
        (
            "linux --smp abc -- /bin/nproc",
            "--smp: 'abc' is not a number",
        ),
        ("gdb --smp", "--smp needs a value"),
        (
            "run --smp 8,sockets=3",
            "--smp: 3 sockets x 2 cores x 1 threads is not 8 CPUs",
        ),
        ("run --numa 2", "--numa needs --smp"),
        (
            "run --smp 6 --numa 4",
            "--numa: 6 CPUs in 4 sockets do not split into 4 nodes of whole sockets",
        ),
        (
            "lab --smp 2",
            "lab takes no --smp (it is for run, gdb and linux)",
        ),
        (
            "compare --smp 2",
            "compare takes no --smp (it is for run, gdb and linux)",
        ),
    ] {
        assert_eq!(parse(&argv(line)).unwrap_err(), why, "{line}");
    }
}

#[test]
fn repeat_is_run_s_and_takes_a_count() {
    let Mode::Run(args) = parse(&argv("run --repeat 3 --smp 2")).unwrap() else {
        panic!()
    };
    assert_eq!(args.repeat, 3);
    let Mode::Run(args) = parse(&argv("run")).unwrap() else {
        panic!()
    };
    assert_eq!(args.repeat, 1);
    for (line, error) in [
        ("run --repeat 0", "out of range"),
        ("run --repeat many", "not a number"),
        ("run --repeat", "needs a value"),
        ("run --repeat 2 --interactive", "neither --interactive"),
        ("run --repeat 2 --profile", "neither --interactive"),
        ("gdb --repeat 2", "unknown flag --repeat"),
        ("linux --repeat 2 -- /bin/true", "linux takes no --repeat"),
        ("compare --repeat 2", "compare takes no --repeat"),
        ("lab --repeat 2", "lab takes no --repeat"),
    ] {
        let got = parse(&argv(line)).unwrap_err();
        assert!(got.contains(error), "{line}: {got}");
    }
}
