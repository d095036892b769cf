//! Helpers for cfslab's system tests: boot the real kernel through the real `boot` tool (as
//! `make run` does) and read what it printed. Tests assert on the machine-readable lines
//! (`RESULT {...}`, `boot options: ...`, `bad boot option ...`), never on decoration.

pub mod gdb_session;
pub mod imports;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A test whose Linux side cannot run on this host (`why`: no root, one CPU) says so in its
/// result: it fails, naming what is missing, unless `CFSLAB_WITHOUT_LINUX=1` accepts
/// cfslab's side checked alone — then the reason is printed and the test goes on.
pub fn linux_side_unavailable(test: &str, why: &str) {
    let accepted = std::env::var("CFSLAB_WITHOUT_LINUX").is_ok_and(|v| v == "1");
    assert!(
        accepted,
        "{test}: {why}, so Linux's side cannot run here; CFSLAB_WITHOUT_LINUX=1 checks \
         cfslab's side alone"
    );
    eprintln!("{test}: {why}: cfslab's side checked alone (CFSLAB_WITHOUT_LINUX=1)");
}

/// How many CPUs a run that names no count of its own gets: `SYSTESTS_SMP`'s, else 1.
pub fn harness_cpus() -> u32 {
    let n = std::env::var("SYSTESTS_SMP")
        .ok()
        .and_then(|n| n.parse().ok());
    n.unwrap_or(1)
}

/// The CPUs a cfslab run of the tests gets: `SYSTESTS_SMP=N`, so that the whole suite can
/// run on several CPUs (`SYSTESTS_SMP=2 cargo test -p systests`) — for a run (`run`) that
/// names no CPU count of its own (no `--smp` flag, no `smp=` option).
fn added_smp<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Option<String> {
    let n = std::env::var("SYSTESTS_SMP").ok().filter(|n| n != "1")?;
    let words: Vec<String> = args
        .iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect();
    let own = words.iter().any(|w| w == "--smp" || w.contains("smp="));
    (words.first().map(String::as_str) == Some("run") && !own).then_some(n)
}

/// `cargo run -q -p boot -- ARGS`, from the workspace root, as a command to adjust and run;
/// a run gets `--smp N` under `SYSTESTS_SMP=N` (see `added_smp`).
pub fn boot_command<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace_root())
        .args(["run", "-q", "-p", "boot", "--"]);
    match (added_smp(args), args.split_first()) {
        (Some(n), Some((run, rest))) => command.arg(run).args(["--smp", &n]).args(rest),
        _ => command.args(args),
    };
    command
}

/// A run's console as the tests expect it whatever `SYSTESTS_SMP` says: if the harness
/// gave the run its N CPUs, the CPUs' lines go (the first after a check that it says all N
/// came up; the RESULT of their contention check, which the kernel asserts itself), and so does the ` smp=N` the harness added to the options' echoes (the lines that
/// echo the options: `boot options: `, a scenario's header, the self-check's RESULT);
/// everything else, line ends included, stays as the kernel printed it. `tests/smp.rs`
/// checks both lines itself.
pub fn as_on_one_cpu<S: AsRef<std::ffi::OsStr>>(args: &[S], stdout: String) -> String {
    let Some(n) = added_smp(args) else {
        return stdout;
    };
    let all_up = format!("cpus: {n} of {n} online");
    stdout
        .split_inclusive('\n')
        .filter(|line| {
            let cpus = line.starts_with("cpus: ");
            assert!(
                !cpus || line.starts_with(&all_up),
                "not every CPU came up: {line}"
            );
            !cpus && !line.starts_with("RESULT {\"kind\":\"cpus\"")
        })
        .map(|line| {
            if line.contains("run=") {
                line.replacen(&format!(" smp={n}"), "", 1)
            } else {
                line.to_string()
            }
        })
        .collect()
}

/// One finished kernel run.
#[derive(Debug)]
pub struct Run {
    /// The boot tool's exit status (0 success, 1 failure, 2 bad options, 3 timeout, ...).
    pub status: i32,
    /// The kernel's serial output.
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The lines of the serial output.
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        self.stdout.lines()
    }

    /// The first line starting with `prefix`, without the prefix.
    pub fn line_after(&self, prefix: &str) -> Option<&str> {
        self.lines().find_map(|l| l.strip_prefix(prefix))
    }

    /// Every `RESULT {...}` line, parsed.
    pub fn results(&self) -> Vec<Value> {
        self.lines()
            .filter_map(|l| l.strip_prefix("RESULT "))
            .map(|json| {
                serde_json::from_str(json).unwrap_or_else(|e| panic!("bad RESULT line {json}: {e}"))
            })
            .collect()
    }

    /// The RESULT lines of `kind` for `scenario`.
    pub fn results_of(&self, kind: &str, scenario: &str) -> Vec<Value> {
        self.results()
            .into_iter()
            .filter(|r| r["kind"] == kind && r["scenario"] == scenario)
            .collect()
    }

    /// The one RESULT line of `kind`.
    pub fn result(&self, kind: &str) -> Value {
        let mut found = self.results().into_iter().filter(|r| r["kind"] == kind);
        let first = found
            .next()
            .unwrap_or_else(|| panic!("no RESULT of kind {kind} in:\n{}", self.stdout));
        assert!(found.next().is_none(), "several RESULTs of kind {kind}");
        first
    }
}

/// Boots the kernel with `options` (deterministic mode, 120 s timeout) and waits for the end.
pub fn boot(options: &str) -> Run {
    boot_with(options, &[])
}

/// Boots the kernel with `options` and extra boot-tool flags (e.g. `--icount-shift 2`).
pub fn boot_with(options: &str, flags: &[&str]) -> Run {
    let mut args = vec!["run", "--timeout", "300", "--opts", options];
    args.extend_from_slice(flags);
    let output: Output = boot_command(&args)
        .output()
        .expect("cannot run the boot tool");
    Run {
        status: output.status.code().unwrap_or(-1),
        stdout: as_on_one_cpu(&args, String::from_utf8_lossy(&output.stdout).into_owned()),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs `argv` (`/bin/NAME` and its arguments) on Linux 6.1 in the same QEMU (`boot
/// linux`, icount shift 2), and returns the run with the console's line ends as `\n`.
pub fn on_linux(argv: &[&str]) -> Run {
    let mut args = vec!["linux", "--icount-shift", "2", "--timeout", "300", "--"];
    args.extend_from_slice(argv);
    boot_tool(&args)
}

/// Runs the boot tool with `args` and waits for it; the console's line ends become `\n`.
pub fn boot_tool(args: &[&str]) -> Run {
    let output = boot_command(args)
        .output()
        .expect("cannot run the boot tool");
    Run {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).replace('\r', ""),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The program's lines in a run on Linux: up to its RESULT line, without Linux's own
/// (`quiet` leaves few, each with a `[  time]` stamp).
pub fn linux_program_output(run: &Run) -> String {
    run.lines()
        .take_while(|l| !l.starts_with("RESULT "))
        .filter(|l| !l.starts_with('['))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Builds the user programs once (through the boot tool, as `make run` does) and returns
/// their directory: the same files run natively on the host and on cfslab.
pub fn user_programs() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = boot_command(&["userland"])
            .output()
            .expect("cannot run the boot tool");
        assert!(
            out.status.success(),
            "boot userland failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
}

/// Boots cfslab to run `-- argv` after `options` (at icount shift 2) and returns the run.
pub fn on_cfslab(options: &str, argv: &str, flags: &[&str]) -> Run {
    let mut all = vec!["--icount-shift", "2"];
    all.extend_from_slice(flags);
    boot_with(&format!("{options} -- {argv}"), &all)
}

/// Runs `script` with busybox's `sh -c` on cfslab (at icount shift 2), with `flags` more
/// (`--smp 2`, say), and returns the run.
pub fn busybox_sh(script: &str, flags: &[&str]) -> Run {
    let mut all = vec!["--icount-shift", "2", "--busybox"];
    all.extend_from_slice(flags);
    all.extend_from_slice(&["--", "/bin/sh", "-c", script]);
    boot_with("", &all)
}

/// Every frame a program and its children used is back, and the heap is within the few
/// kilobytes the kernel's tables keep as capacity after their growth (see
/// `user::process::run_program`): the largest is the runqueue's table of the tasks'
/// scheduling parts (`sched::rq`, 120 bytes a slot, grown to the most tasks alive at once).
/// A leak of even a few bytes per process would exceed it in a run of thousands. Each CPU
/// has its runqueue and policy tables, so the allowance is per CPU online: 12 KiB, as a
/// balancer may move a program's tasks through every CPU, whose tables then each grow to
/// them once (measured: `csmp spread 4 200` on four CPUs in 2.6.24 grows the heap by
/// 32,112 bytes; three runs of it in one boot by 35,280, the shell's own included).
pub fn assert_nothing_leaked(run: &Run) {
    let memory = run.result("memory");
    assert_eq!(memory["frames_after"], memory["frames_before"], "{memory}");
    let grew = memory["heap_bytes_after"].as_i64().unwrap()
        - memory["heap_bytes_before"].as_i64().unwrap();
    // The run's own count, or the harness's (`as_on_one_cpu` takes its CPUs' lines out).
    let several = |l: &str| l.starts_with("RESULT {\"kind\":\"cpus\"");
    let own = match run.lines().any(several) {
        true => run.result("cpus")["online"].as_i64().unwrap(),
        false => 1,
    };
    let cpus = own.max(harness_cpus().into());
    assert!((0..12_288 * cpus).contains(&grew), "{memory}");
}

/// A fork bomb's run (`/bin/forkbomb`, userland/programs/src/bin/forkbomb.rs): it ended
/// normally, the processes beyond the limit met EAGAIN and every one was reaped; returns the
/// frames in use before and after, and the heap after.
pub fn fork_bomb_memory(run: &Run) -> (i64, i64, i64) {
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("the rest met EAGAIN; all reaped"),
        "{}",
        run.stdout
    );
    let m = run.result("memory");
    let n = |k: &str| m[k].as_i64().unwrap();
    (n("frames_before"), n("frames_after"), n("heap_bytes_after"))
}

/// The fuzzer's run (`/bin/fuzz`, userland/programs/src/bin/fuzz.rs) ended normally, said
/// the kernel is still there, and every frame came back.
pub fn fuzz_ran_to_its_end(run: &Run) {
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.lines()
            .any(|l| l.starts_with("fuzz: done: ") && l.ends_with("the kernel is still here")),
        "{}",
        run.stdout
    );
    assert_nothing_leaked(run);
}

/// Runs a checking program both ways: `native` on the host, which must pass every check
/// (its output ending in `NAME: all checks passed`), and `/bin/NAME` on cfslab, which must
/// end with status 0 and every frame back. Returns the host's output and cfslab's run, for
/// the caller to compare.
pub fn checked_on_both(native: &mut Command, name: &str) -> (String, Run) {
    let expected = checked_natively(native, name);
    let run = on_cfslab("", &format!("/bin/{name}"), &[]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_nothing_leaked(&run);
    (expected, run)
}

/// [`checked_on_both`]'s host half: runs `native`, which must pass every check (its output
/// ending in `NAME: all checks passed`), and returns its output.
pub fn checked_natively(native: &mut Command, name: &str) -> String {
    let native = native.output().expect("runs natively");
    let expected = String::from_utf8_lossy(&native.stdout).into_owned();
    assert!(native.status.success(), "{expected}");
    assert!(
        expected.ends_with(&format!("{name}: all checks passed\n")),
        "{expected}"
    );
    expected
}

/// The program's lines on cfslab: between the self-check's RESULT and its own.
pub fn program_output(run: &Run) -> String {
    run.lines()
        .skip_while(|l| !l.starts_with("RESULT {\"kind\":\"selfcheck\""))
        .skip(1)
        .take_while(|l| !l.starts_with("RESULT "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// docs/shell.md's session transcript sits between these markers, in a `text` block (the
/// boot tool's `session` block, checked against `docs/data/session.txt`).
const SESSION_BEGIN: &str = "<!-- session -->\n```text\n";
const SESSION_END: &str = "```\n<!-- /session -->";

/// A typed session's output as docs/shell.md shows it: from the first prompt to the shell's
/// `exit`, without terminal control codes, the samples' JSON lines, or more than three of
/// a program's per-sample lines in a row (the rest are counted).
pub fn session_transcript(stdout: &str) -> String {
    let per_sample = |l: &str| {
        l.strip_suffix(" ms")
            .is_some_and(|n| n.parse::<f64>().is_ok())
    };
    let mut out = String::new();
    let mut started = false;
    let mut run = 0;
    let lines: Vec<String> = stdout
        .replace("\x1b[H\x1b[2J", "")
        .replace('\r', "")
        .lines()
        .map(String::from)
        .collect();
    for (i, line) in lines.iter().enumerate() {
        started |= line.starts_with("# ");
        if !started || line.starts_with("RESULT {\"kind\":\"samples\"") {
            continue;
        }
        if per_sample(line) {
            run += 1;
            if run <= 3 {
                out += &format!("{line}\n");
            }
            let next_too = lines.get(i + 1).is_some_and(|l| per_sample(l));
            if !next_too && run > 3 {
                out += &format!("[... {} more lines like these]\n", run - 3);
            }
            continue;
        }
        run = 0;
        out += &format!("{line}\n");
        if line == "# exit" {
            break;
        }
    }
    out
}

/// The transcript inside a document's session markers.
pub fn session_block(doc: &str) -> Option<&str> {
    let start = doc.find(SESSION_BEGIN)? + SESSION_BEGIN.len();
    let len = doc[start..].find(SESSION_END)?;
    Some(&doc[start..start + len])
}

/// The document with `transcript` between its session markers.
pub fn replace_session(doc: &str, transcript: &str) -> String {
    let Some(old) = session_block(doc) else {
        return doc.to_string();
    };
    let start = old.as_ptr() as usize - doc.as_ptr() as usize;
    format!("{}{transcript}{}", &doc[..start], &doc[start + old.len()..])
}
