//! The scheduler live: sessions typed at cfslab's console (`boot run --input`, the
//! scripts in tests/sessions/) that change nice values, sysctls, sched_features and uid
//! group weights while hogs run, and check that the measured shares and latencies move as
//! the theory says (docs/scheduler.md §3, §6). Typed input arrives when the host sees the
//! prompt, so a session's figures vary a little from run to run: the assertions leave room
//! for that, never for a different outcome.

use serde_json::Value;
use std::path::{Path, PathBuf};
use systests::Run;

fn sessions() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions")
}

/// Boots `run=shell OPTIONS` and types tests/sessions/SCRIPT at the console. On one CPU,
/// even under `SYSTESTS_SMP`: the sessions' hogs share a CPU, and what the tests check —
/// a renice, a weight, a feature changing their split — is how they share it (on two
/// CPUs each hog would have one to itself).
fn session(options: &str, script: &str) -> Run {
    let path = sessions().join(script);
    systests::boot_with(
        &format!("run=shell {options}"),
        &[
            "--input",
            path.to_str().unwrap(),
            "--icount-shift",
            "2",
            "--timeout",
            "400",
            "--smp",
            "1",
        ],
    )
}

/// The `n` lines the console showed after the first line that reads `line` (trailing
/// blanks and the terminal's CR removed).
fn lines_after(out: &str, line: &str, n: usize) -> Vec<String> {
    lines_after_each(out, line, n)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no line {line:?} in: {out}"))
}

/// The `n` lines after each line that reads `line`, one vector per occurrence (trailing
/// blanks and the terminal's CR removed).
fn lines_after_each(out: &str, line: &str, n: usize) -> Vec<Vec<String>> {
    let lines: Vec<&str> = out.lines().map(str::trim_end).collect();
    (0..lines.len())
        .filter(|&at| lines[at] == line)
        .map(|at| {
            lines[at + 1..(at + 1 + n).min(lines.len())]
                .iter()
                .map(|l| l.to_string())
                .collect()
        })
        .collect()
}

/// Pid 4's share of what pids 4 and 5 ran between the session's two
/// `cat /proc/4/schedstat /proc/5/schedstat` (a schedstat line: run time in ns, time waiting,
/// times run) — a window that starts after the change under test, whatever the host's speed.
fn share_of_pid_4_over_the_sleep(out: &str) -> f64 {
    let reads = lines_after_each(out, "# cat /proc/4/schedstat /proc/5/schedstat", 2);
    assert_eq!(reads.len(), 2, "{out}");
    let run_ns = |read: usize, hog: usize| -> f64 {
        reads[read][hog]
            .split_whitespace()
            .next()
            .and_then(|ns| ns.parse().ok())
            .unwrap_or_else(|| panic!("a schedstat line: {:?}", reads[read]))
    };
    let (four, five) = (run_ns(1, 0) - run_ns(0, 0), run_ns(1, 1) - run_ns(0, 1));
    four / (four + five)
}

/// The `program` RESULT lines of `kind` ("cpu", "latency"), in order.
fn results(run: &Run, kind: &str, program: &str) -> Vec<Value> {
    run.results()
        .into_iter()
        .filter(|r| r["kind"] == kind && r["program"] == program)
        .collect()
}

/// Two root hogs (pids 4 and 5) under 2.6.36's defaults, no groups: `ps` lists both;
/// `renice 5 5` gives them weights 1024 and 335, so the first gets 1024 / 1359 = 75.3 % of
/// what the two get — measured from their `/proc/PID/schedstat` run times read before and
/// after a 2 s `sleep`, all after the renice (a share over the hogs' whole lives would depend
/// on how soon, in guest time, the host typed `renice`); uid 7 may neither renice root's hog
/// nor write a sysctl (EPERM,
/// EACCES); a latency below Linux's 100 µs bound is EINVAL; and NO_START_DEBIT, written
/// while they run, shows in the feature list and shortens how long each new timer thread
/// of `wakeup_latency` waits: with START_DEBIT a new thread starts one virtual slice after
/// min_vruntime, behind both hogs; without, at min_vruntime, so it runs after at most the
/// current hog's slice.
#[test]
fn renice_sysctl_rules_and_a_feature_flip_act_at_once() {
    let run = session("", "renice_and_features.txt");
    let out = &run.stdout;
    let ps_hogs = out
        .lines()
        .filter(|l| l.ends_with(" hog") && l.contains(" R "))
        .count();
    assert_eq!(ps_hogs, 2, "ps lists both running hogs: {out}");
    let share = share_of_pid_4_over_the_sleep(out);
    assert!((0.73..=0.78).contains(&share), "nice 0 vs 5: {share}");
    assert!(out.contains("sh: renice: 4: EPERM"), "{out}");
    assert!(
        out.contains("sh: /proc/sys/kernel/sched_latency_ns: EACCES (13)"),
        "{out}"
    );
    assert!(out.contains("sh: write: EINVAL (22)"), "{out}");
    let features = out
        .lines()
        .find(|l| l.starts_with("FAIR_SLEEPERS "))
        .expect("the feature list");
    assert!(
        features.contains(" NO_START_DEBIT ") && !features.contains(" START_DEBIT "),
        "{features}"
    );
    let latency = results(&run, "latency", "wakeup_latency");
    assert_eq!(latency.len(), 2, "{out}");
    let avg = |r: &Value| r["avg_us"].as_f64().unwrap();
    assert!(
        avg(&latency[1]) < 0.75 * avg(&latency[0]),
        "NO_START_DEBIT: {} µs, START_DEBIT: {} µs",
        avg(&latency[1]),
        avg(&latency[0])
    );
    assert_eq!(run.result("exit")["status"], 0, "{out}");
}

/// Per-uid groups (group=uid, 2.6.24's FAIR_USER_SCHED): `/sys/kernel/uids/` has a
/// directory per uid with tasks; writing 3072 to uid 7's cpu_share against root's 1024
/// gives uid 7's hog 3/4 of the CPU (root's quarter is shared with `top`), `top` shows it
/// as it happens, and a word instead of a number is EINVAL.
#[test]
fn writing_cpu_share_changes_the_per_uid_split() {
    let run = session("group=uid", "cpu_share.txt");
    let out = &run.stdout;
    // What the console shows after each line typed at the prompt.
    let after = |command: &str, n: usize| lines_after(out, &format!("# {command}"), n);
    assert_eq!(after("ls /sys/kernel/uids", 2), ["0", "7"]);
    assert_eq!(
        after(
            "cat /sys/kernel/uids/0/cpu_share /sys/kernel/uids/7/cpu_share",
            2
        ),
        ["1024", "1024"]
    );
    assert_eq!(after("cat /sys/kernel/uids/7/cpu_share", 1), ["3072"]);
    assert!(out.contains("sh: write: EINVAL (22)"), "{out}");
    // Over a `sleep` (the shell and `sleep` asleep in root's group): uid 7's hog gets 3/4 of
    // the CPU, root's hog the rest.
    let share = share_of_pid_4_over_the_sleep(out);
    assert!((0.72..=0.78).contains(&share), "uid 7's share {share}");
    let frame = out
        .split("top: frame 3,")
        .nth(1)
        .expect("top's third frame");
    let uid7_line = frame
        .lines()
        .find(|l| l.trim_start().starts_with("4 "))
        .expect("hog 4 in top");
    let percent: f64 = uid7_line
        .split_whitespace()
        .nth(6)
        .unwrap()
        .parse()
        .unwrap();
    assert!((70.0..=80.0).contains(&percent), "{uid7_line}");
    assert_eq!(run.result("exit")["status"], 0, "{out}");
}

/// docs/shell.md's session (tests/sessions/docs_session.txt): hogs as uid 7 and root, a
/// sleeper waking every 10 ms, `top`, then NO_FAIR_SLEEPERS. With sleeper credit the sleeper
/// wakes placed before min_vruntime and preempts the hog at once; without it, it waits for the
/// running hog's slice to end, so its average latency rises. The page's transcript is this
/// run's output (`CFSLAB_BLESS=1` rewrites it, and `docs/data/session.txt`, which the boot
/// tool's test checks the page against); the commands it shows must be the script's.
#[test]
fn the_documented_session_is_real() {
    let run = session("group=uid", "docs_session.txt");
    let latency = results(&run, "latency", "sleeper");
    assert_eq!(latency.len(), 2, "{}", run.stdout);
    let avg = |r: &Value| r["avg_us"].as_f64().unwrap();
    assert!(
        avg(&latency[1]) > 2.0 * avg(&latency[0]),
        "NO_FAIR_SLEEPERS {} µs vs {} µs",
        avg(&latency[1]),
        avg(&latency[0])
    );
    let transcript = systests::session_transcript(&run.stdout);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let doc_path = root.join("docs/shell.md");
    if std::env::var_os("CFSLAB_BLESS").is_some() {
        let doc = std::fs::read_to_string(&doc_path).unwrap();
        std::fs::write(&doc_path, systests::replace_session(&doc, &transcript)).unwrap();
        std::fs::write(root.join("docs/data/session.txt"), &transcript).unwrap();
    }
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    let typed = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.strip_prefix("# "))
            .map(String::from)
            .collect()
    };
    let shown = typed(systests::session_block(&doc).expect("docs/shell.md's session block"));
    let script = std::fs::read_to_string(sessions().join("docs_session.txt")).unwrap();
    // What the console echoes after the prompt: each line, and Ctrl-D as the shell's
    // `exit`; `[after ...]` keys go to `top`, not to a prompt.
    let script_lines: Vec<String> = script
        .lines()
        .filter(|l| !l.starts_with("[after"))
        .map(|l| {
            if l == "^D" {
                "exit".into()
            } else {
                l.to_string()
            }
        })
        .collect();
    assert_eq!(shown, script_lines, "docs/shell.md's session vs the script");
    assert_eq!(typed(&transcript), script_lines, "this run's session");
}

/// The knobs follow the policy (no typed input: `sh -c`, so this run is deterministic).
/// EEVDF has one tunable, the base slice (0.75 ms in 6.6), writable, and its tasks' `sched`
/// files show their deadline; O(1), Linux 2.6.11's, had neither sysctls nor features, so
/// there are none to list or read. And `/proc/self` is whoever reads it.
#[test]
fn the_knobs_follow_the_policy() {
    let slice = "/proc/sys/kernel/sched_base_slice_ns";
    let eevdf = systests::on_cfslab(
        "policy=eevdf",
        &format!(
            "/bin/sh -c ls /proc/sys/kernel ; cat {slice} ; echo 3000000 > {slice} ; \
             cat {slice} ; echo 50 > {slice} ; cat /proc/1/sched /proc/self/status"
        ),
        &[],
    );
    let out = &eevdf.stdout;
    assert_eq!(
        lines_after(out, "sched_base_slice_ns", 2),
        ["750000", "3000000"],
        "{out}"
    );
    assert!(out.contains("sh: write: EINVAL (22)"), "{out}");
    assert!(out.contains("se.deadline "), "{out}");
    // `/proc/self` is the reader's own process: `cat`'s.
    assert!(out.lines().any(|l| l.trim_end() == "Name:\tcat"), "{out}");
    assert_eq!(eevdf.result("exit")["status"], 0, "{out}");

    let o1 = systests::on_cfslab(
        "policy=o1",
        "/bin/sh -c ls /proc/sys/kernel /sys/kernel/debug ; cat /sys/kernel/debug/sched_features",
        &[],
    );
    let out = &o1.stdout;
    assert_eq!(
        lines_after(out, "/proc/sys/kernel:", 2),
        ["", "/sys/kernel/debug:"],
        "nothing to list: {out}"
    );
    assert!(
        out.contains("cat: /sys/kernel/debug/sched_features: ENOENT (2)"),
        "{out}"
    );
}
