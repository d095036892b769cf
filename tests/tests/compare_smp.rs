//! `make compare` on several CPUs (docs/compare.md, "On several CPUs"): each scenario runs
//! once on Linux 6.1 and once on cfslab's 6.6 (`cargo boot compare --several-cpus --quick`, which
//! stores nothing), and each run's program line reads as a figure. Linux is fetched from
//! Debian's archive the first time; if it cannot be, the test fails rather than skips.

const SCENARIOS: [&str; 4] = [
    "smp-spread",
    "smp-affine",
    "wasted-group-imbalance",
    "wasted-group-construction",
];

#[test]
fn the_scenarios_of_several_cpus_run_and_read_on_both_kernels() {
    let run = systests::boot_tool(&["compare", "--several-cpus", "--quick"]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    for name in SCENARIOS {
        let row = format!("| `{name}` (");
        assert!(
            run.stdout.contains(&row),
            "no row for {name}:\n{}",
            run.stdout
        );
    }
    // One Linux run and cfslab's 6.6 for each, each with its figure and verdict.
    let rows = |prefix: &str| run.stdout.lines().filter(|l| l.contains(prefix)).count();
    assert_eq!(rows("| Linux 6.1"), 4, "{}", run.stdout);
    assert_eq!(rows("| | cfslab 6.6 |"), 4, "{}", run.stdout);
    let verdicts = run.stdout.lines().filter(|l| l.starts_with("| "));
    for line in verdicts.filter(|l| l.contains("Linux 6.1") || l.contains("cfslab")) {
        assert!(
            line.ends_with("| yes |") || line.ends_with("| no |"),
            "{line}"
        );
    }
}
