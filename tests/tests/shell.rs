//! The shell, `/bin/sh` (userland/shell): a Linux program like every one here, so its
//! grammar, builtins and error lines are checked natively on the host, fed from a pipe; and
//! on cfslab through `-- /bin/sh -c ...`, where it runs the workloads as jobs under cfslab's
//! scheduler and uid rules. (`live_scheduler.rs` types into it on the console.)

use std::io::Write;
use std::process::{Command, Stdio};
use systests::{on_cfslab, user_programs};

/// Runs the shell natively with `script` on its standard input and the userland programs
/// first in `$PATH`: (status, stdout, stderr).
fn native(script: &str) -> (i32, String, String) {
    let path = format!("{}:/bin:/usr/bin", user_programs().display());
    let mut child = Command::new(user_programs().join("sh"))
        .env("PATH", path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs natively");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The programs' `cpu` RESULT lines of a run on cfslab, in the order they came.
fn cpu_lines(run: &systests::Run) -> Vec<serde_json::Value> {
    run.results()
        .into_iter()
        .filter(|r| r["kind"] == "cpu")
        .collect()
}

#[test]
fn bad_input_is_one_error_line_and_the_shell_goes_on() {
    let long = "x".repeat(10_000);
    let script = format!(
        "echo first\nfrobnicate 1\nkill abc\nnice -n 99 hog\nrenice five 1\necho 'open\n{long}\nsleep soon\necho a | b\necho last\n"
    );
    let (status, stdout, stderr) = native(&script);
    assert_eq!(stdout, "first\nlast\n", "{stderr}");
    let errors: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        errors,
        [
            "sh: frobnicate: command not found (try help)",
            "sh: kill: 'abc' is not a pid or %job",
            "sh: nice: '99' is not a number from -20 to 19",
            "sh: renice: 'five' is not a number from -20 to 19",
            "sh: unterminated '",
            "sh: line too long (10000 bytes; at most 4096)",
            "sh: sleep: 'soon' is not a number of seconds",
            "sh: '|' is not supported (see help)",
        ]
    );
    // The last command succeeded: so does the shell, at the end of its input.
    assert_eq!(status, 0);
}

#[test]
fn output_goes_to_a_file_and_exit_sets_the_status() {
    let file = std::env::temp_dir().join(format!("cfslab-sh-{}.txt", std::process::id()));
    let script = format!(
        "echo  \"two  blanks\"  kept > {0}\nexit 3\necho never\n",
        file.display()
    );
    let (status, stdout, _) = native(&script);
    assert_eq!(status, 3);
    assert_eq!(stdout, "");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "two  blanks kept\n"
    );
    let _ = std::fs::remove_file(file);
}

#[test]
fn background_jobs_are_listed_waited_for_and_timed() {
    let (status, stdout, stderr) = native("hog -t 1 &\njobs\nwait\ntime job 1000 99999999999999\n");
    assert_eq!(status, 0, "{stderr}");
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with("RESULT"))
        .collect();
    // `[1] PID`, then the job running, then its end reported by `wait`.
    assert!(lines[0].starts_with("[1] "), "{stdout}");
    let pid = &lines[0][4..];
    assert_eq!(lines[1], format!("[1] Running  {pid}  hog -t 1"));
    assert_eq!(lines[2], "[1] Done  hog -t 1");
    // `time`: bash's three lines; the job burnt 1 ms of CPU.
    let real = stderr
        .lines()
        .find(|l| l.starts_with("real\t0m"))
        .expect("real");
    assert!(stderr.contains("\nuser\t0m0.00"), "{stderr}");
    assert!(real.ends_with('s'), "{real}");
}

/// On cfslab, as root: two hogs in the background, one of them as uid 7 (`su`), share the
/// CPU (no groups: 2.6.36's default), `jobs` lists both, and uid 7 may not renice root's
/// job (Linux's rule: only root may change another user's process). At most 32 words: the
/// boot command line's limit for init's argv.
#[test]
fn on_cfslab_jobs_share_the_cpu_and_su_renice_follow_the_uid_rules() {
    // On one CPU even under `SYSTESTS_SMP`: the hogs' shares are of one CPU they share.
    let run = on_cfslab(
        "",
        "/bin/sh -c hog -t 1 & su 7 hog -t 1 & jobs ; wait ; hog -t 1 & su 7 sh -c renice 5 6 ; wait",
        &["--smp", "1"],
    );
    let out = &run.stdout;
    assert!(out.contains("[1] Running  4  hog -t 1"), "{out}");
    assert!(out.contains("[2] Running  5  hog -t 1"), "{out}");
    assert!(out.contains("[1] Done  hog -t 1"), "{out}");
    let cpu = cpu_lines(&run);
    assert_eq!(cpu.len(), 3, "{out}");
    // Two hogs at nice 0: half the CPU each, within a scheduling period's rounding.
    for hog in &cpu[..2] {
        let share = hog["share"].as_f64().unwrap();
        assert!((share - 0.5).abs() < 0.03, "{hog}");
    }
    let uids: Vec<u64> = cpu[..2]
        .iter()
        .map(|r| r["uid"].as_u64().unwrap())
        .collect();
    assert!(uids.contains(&0) && uids.contains(&7), "{uids:?}");
    assert!(out.contains("sh: renice: 6: EPERM"), "{out}");
    assert_eq!(run.result("exit")["status"], 0, "{out}");
}

/// A session typed at cfslab's console (`boot run --input`, a line at each prompt): the
/// terminal's editing (Backspace, Ctrl-U), Ctrl-C ending a foreground hog and not the
/// background one, a bad line, and Ctrl-D ending the shell.
///
/// Keys arrive in host time while the guest's clock follows its instructions, so the guest
/// seconds between two keys depend on the host's speed (`^C` alone waits a host second of
/// quiet output). The background hog is therefore far longer than any session (1 000 s) and
/// is killed at the end: whatever the host's speed, it is still running when `jobs` lists it.
#[test]
fn a_session_typed_at_the_console_edits_interrupts_and_ends() {
    let script = std::env::temp_dir().join(format!("cfslab-session-{}.txt", std::process::id()));
    std::fs::write(
        &script,
        "hog -t 1000 &\nechp^Ho hi\nwrong line^Uecho after\nhog -t 100\n^C\nkill abc\njobs\nkill %1\nwait\n^D\n",
    )
    .unwrap();
    let run = systests::boot_with(
        "run=shell",
        &[
            "--input",
            script.to_str().unwrap(),
            "--icount-shift",
            "2",
            "--timeout",
            "300",
        ],
    );
    let _ = std::fs::remove_file(&script);
    let out = &run.stdout;
    // Backspace erased the p: `echo hi` ran.
    assert!(out.lines().any(|l| l == "hi"), "{out}");
    // Ctrl-U threw away what was typed before it on the line.
    assert!(!out.contains("wrong: command not found"), "{out}");
    assert!(out.lines().any(|l| l == "after"), "{out}");
    // Ctrl-C ended the foreground hog (it never reported its 100 s) but not the background
    // one, still listed, nor the shell, which took the next lines.
    assert!(out.contains("^C"), "{out}");
    assert!(
        out.contains("sh: kill: 'abc' is not a pid or %job"),
        "{out}"
    );
    assert!(out.contains("[1] Running  4  hog -t 1000"), "{out}");
    // `kill %1` sends SIGTERM (15) to the background job, and `wait` reports how it ended.
    assert!(out.contains("[1] Killed (signal 15)  hog -t 1000"), "{out}");
    // Neither hog reported: the foreground one was interrupted, the background one killed.
    let hogs = cpu_lines(&run);
    assert!(hogs.is_empty(), "{hogs:?}");
    // Ctrl-D at the prompt: `exit`, status 0.
    assert!(out.lines().any(|l| l.ends_with("exit")), "{out}");
    assert_eq!(run.result("exit")["status"], 0, "{out}");
}

/// `cat`, `ls` and `ps` read files by path as Linux's do; natively they read the host's, and
/// `ps` reads Linux's own `/proc` formats (stat, status, sched) — the ones cfslab's `/proc`
/// is to write.
#[test]
fn cat_ls_and_ps_read_linux_files() {
    let dir = std::env::temp_dir().join(format!("cfslab-ls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("b"), "two\n").unwrap();
    std::fs::write(dir.join("a"), "one\n").unwrap();
    let run = |program: &str, args: &[&str]| {
        let out = Command::new(user_programs().join(program))
            .args(args)
            .output()
            .expect("runs natively");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (a, b) = (dir.join("a"), dir.join("b"));
    let (status, out, err) = run(
        "cat",
        &[a.to_str().unwrap(), "/no/such", b.to_str().unwrap()],
    );
    assert_eq!((status, out.as_str()), (Some(1), "one\ntwo\n"));
    assert_eq!(err, "cat: /no/such: ENOENT (2)\n");
    let (status, out, _) = run("ls", &[dir.to_str().unwrap()]);
    assert_eq!((status, out.as_str()), (Some(0), "a\nb\n"));
    let _ = std::fs::remove_dir_all(&dir);
    // ps: a header, then this test's own process among the lines, with its parent.
    let (status, out, err) = run("ps", &[]);
    assert_eq!(status, Some(0), "{err}");
    assert!(
        out.starts_with("   PID   PPID   UID  NI S  P  %CPU VRUNTIME(ms)"),
        "{out}"
    );
    let me = std::process::id().to_string();
    let mine = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(me.as_str()))
        .unwrap_or_else(|| panic!("no line for pid {me}:\n{out}"));
    assert!(mine.split_whitespace().count() >= 12, "{mine}");
    // top: the same table every interval until a key, or -n frames.
    let (status, out, err) = run("top", &["-n", "2", "-d", "0.1"]);
    assert_eq!(status, Some(0), "{err}");
    assert_eq!(out.matches("top: frame ").count(), 2, "{out}");
    assert_eq!(run("top", &["-d", "0"]).0, Some(2));
}

/// `top` ends at a key, without waiting for its frames.
#[test]
fn top_ends_at_a_key() {
    let mut child = Command::new(user_programs().join("top"))
        .args(["-d", "0.1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("runs natively");
    std::thread::sleep(std::time::Duration::from_millis(350));
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"q").unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(0));
    let frames = String::from_utf8_lossy(&out.stdout)
        .matches("top: frame ")
        .count();
    assert!((2..=6).contains(&frames), "{frames} frames");
}

/// Keys typed while the machine boots wait for the shell, and none is lost: they wait in
/// the UART and in QEMU (which holds back what the UART's FIFO cannot take) until the
/// first program opens the terminal, so the boot's self-check never sees them in its heap.
#[test]
fn keys_typed_during_boot_wait_for_the_shell_and_none_is_lost() {
    let mut child = systests::boot_command(&[
        "run",
        "--timeout",
        "300",
        "--interactive",
        "--opts",
        "run=shell",
    ])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("cannot run the boot tool");
    // All at once, as `printf '...' | make shell` types them: long before the prompt.
    let script = b"echo typed-during-boot\nps\nexit\n";
    child.stdin.take().unwrap().write_all(script).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(!stdout.contains("PANIC"), "{stdout}");
    // The echo of the typed lines as the terminal opens, whole (the first key is there),
    // then at the prompt (`# `) the command's output.
    let lines: Vec<&str> = stdout.lines().map(str::trim_end).collect();
    assert!(lines.contains(&"echo typed-during-boot"), "{stdout}");
    assert!(lines.contains(&"# typed-during-boot"), "{stdout}");
    assert!(
        lines.iter().any(|l| l.ends_with(" sh")),
        "ps ran:\n{stdout}"
    );
}
