//! Debian's busybox (`busybox-static`, glibc, fetched once by the boot tool) on cfslab: the
//! same binary runs scripts natively on the host and as cfslab's `/bin/sh`, and both must
//! print the same; the applets that show the machine itself (`ps`, `top`, `free`) are
//! checked against cfslab's state; and `ash` takes a typed session with job control. `boot
//! run --busybox` puts it and its applets (hard links) under `/bin`.

use std::process::Command;
use systests::{assert_nothing_leaked, boot_command, boot_with, program_output};

/// A script whose output does not depend on the machine: exit statuses through `$?`
/// (glibc passes `int`s zero-extended: read as 64 bits, every status was 255), command
/// substitution, a pipeline, a subshell, the applets as links.
const SCRIPT: &str = "echo hello; false; echo \"false: $?\"; sh -c 'exit 3'; echo \"exit 3: $?\"; \
                      (exit 7); echo \"subshell: $?\"; seq 1 100 | wc -l; \
                      echo \"$(echo nested $(echo deep))\"; x=$(printf '%s-' a b c); echo $x; \
                      sleep 1; basename /bin/ls; echo done";

/// Runs `script` with busybox's `sh -c` on cfslab (nothing leaked) and `native_script`
/// with the same binary on the host (the boot tool caches it and says where); returns what
/// each printed, cfslab's without its "not implemented" lines. Both must end with `done`.
fn on_cfslab_and_natively(script: &str, native_script: &str) -> (String, String) {
    let run = systests::busybox_sh(script, &[]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_nothing_leaked(&run);
    let out = boot_command(&["busybox"])
        .output()
        .expect("runs the boot tool");
    let busybox = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let native = Command::new(&busybox)
        .args(["sh", "-c", native_script])
        .output()
        .expect("busybox runs natively");
    let expected = String::from_utf8_lossy(&native.stdout).into_owned();
    assert!(expected.ends_with("done\n"), "{expected}");
    let on_cfslab: String = program_output(&run)
        .lines()
        .filter(|l| !l.starts_with("cfslab: system call"))
        .map(|l| format!("{l}\n"))
        .collect();
    (on_cfslab, expected)
}

#[test]
fn busybox_sh_runs_a_script_as_on_linux() {
    // The script as one word after the boot tool's `--`, quotes and all.
    let (on_cfslab, expected) = on_cfslab_and_natively(SCRIPT, SCRIPT);
    assert_eq!(on_cfslab, expected);
}

/// What the applets a session uses print that does not depend on the machine: `cd` and `pwd`,
/// `cmd & wait` with its status, a trap's handler, `kill` of a job, `ulimit -n` set and read
/// back, `seq | wc -l`, `sleep`, `id -u`, `cat` of a file through sendfile, and `taskset` to
/// a CPU the machine does not have (EINVAL: "Invalid argument", status 1) and to CPU 0.
/// Standard error goes with standard output, as both are the console on cfslab.
const APPLETS: &str = "exec 2>&1; cd /proc && pwd; cd /; sleep 1 & wait $!; echo \"wait: $?\"; \
                       (exit 5) & wait $!; echo \"wait 5: $?\"; \
                       trap 'echo caught USR1' USR1; kill -USR1 $$; \
                       sleep 100 & kill $!; wait $!; echo \"killed: $?\"; \
                       ulimit -n 100; ulimit -n; (ulimit -n 2000) 2>/dev/null || echo raise refused; \
                       seq 1 1000 | wc -l; id -u; cat /proc/self/cmdline | tr '\\0' ' '; echo; \
                       taskset 0x40000000 true; echo \"no CPU 30: $?\"; \
                       taskset 1 echo on CPU 0; \
                       echo done";

#[test]
fn busybox_applets_answer_as_on_linux() {
    // Each line of APPLETS is checked against the same busybox on the host. `ulimit -n 100`
    // sets the hard limit too, so raising it again is refused for root as for anyone: on
    // the host because 999999999 is past its nr_open, on cfslab because 2000 is past its
    // 1024 descriptors.
    let native = APPLETS.replace("2000", "999999999");
    let (on_cfslab, expected) = on_cfslab_and_natively(APPLETS, &native);
    assert_eq!(on_cfslab, expected);
}

#[test]
fn busybox_ps_top_free_and_proc_read_cfslab_as_linux_would_show_it() {
    // What differs from the host by nature (its processes, CPUs and memory), checked against
    // what cfslab's own state must make of it.
    let script = "sleep 100 & ps; top -b -n 1 | head -4; free | head -2; uptime; nproc; \
                  cat /proc/loadavg; grep MemTotal /proc/meminfo; head -1 /proc/stat; \
                  readlink /proc/$$/exe; kill $!";
    let run = systests::busybox_sh(script, &[]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_nothing_leaked(&run);
    let out = program_output(&run);
    let lines: Vec<&str> = out.lines().collect();
    // ps: the shell and the sleeper by their command lines (/proc/PID/cmdline).
    assert!(lines.iter().any(|l| l.ends_with(" sleep 100")), "{out}");
    assert!(
        lines.iter().any(|l| l.contains(" /bin/sh -c sleep 100 &")),
        "{out}"
    );
    // top's header: memory, CPU and the load average from /proc/meminfo, stat and loadavg.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Mem: ") && l.contains("K free")),
        "{out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("CPU: ") && l.contains("% idle")),
        "{out}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("Load average: ")),
        "{out}"
    );
    // free and uptime ask sysinfo: the memory is what /proc/meminfo says.
    let mem_total: u64 = lines
        .iter()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|l| l.trim().strip_suffix(" kB"))
        .and_then(|n| n.trim().parse().ok())
        .expect("MemTotal");
    let free_total: u64 = lines
        .iter()
        .find(|l| l.starts_with("Mem:") && !l.contains('K'))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .expect("free's Mem line");
    assert_eq!(free_total, mem_total, "{out}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" up ") && l.contains("load average: 0.00")),
        "{out}"
    );
    // nproc: the CPUs the run has (its affinity's); the runnable count and last pid of
    // /proc/loadavg; /proc/stat's cpu line.
    let cpus = systests::harness_cpus().to_string();
    assert!(lines.contains(&cpus.as_str()), "{out}");
    assert!(
        lines.iter().any(|l| l.starts_with("0.00 0.00 0.00 ")),
        "{out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("cpu  ") && l.split_whitespace().count() == 11),
        "{out}"
    );
    // The shell's program, through the exe link.
    assert!(lines.contains(&"/bin/sh"), "{out}");
}

/// A session typed at busybox's `ash` on the console (`make shell SH=busybox`): job control
/// — a background job, a foreground one stopped with Ctrl-Z, `jobs`, `bg`, `fg`, Ctrl-C, `kill
/// %N` — and the line editor's history (the Up arrow brings back the last line).
#[test]
fn a_busybox_ash_session_has_job_control_and_history() {
    let script = std::env::temp_dir().join(format!("cfslab-ash-{}.txt", std::process::id()));
    std::fs::write(
        &script,
        "sleep 1000 &\njobs\nsleep 2000\n^Z\njobs\nbg %2\nfg %1\n^C\nkill %2\nwait\n\
         echo history-one\n\x1b[A\necho status $?\nexit\n",
    )
    .unwrap();
    let run = boot_with(
        "run=shell",
        &[
            "--busybox",
            "--input",
            script.to_str().unwrap(),
            "--icount-shift",
            "2",
        ],
    );
    let _ = std::fs::remove_file(&script);
    let out = &run.stdout;
    assert_eq!(run.status, 0, "{out}{}", run.stderr);
    assert_nothing_leaked(&run);
    let has = |text: &str| out.contains(text);
    // ash's own lines, as on Linux: the jobs table, Ctrl-Z's stop, bg, the kill.
    assert!(has("[1]+  Running                    sleep 1000"), "{out}");
    assert!(has("^Z"), "{out}");
    assert!(has("[2]+  Stopped                    sleep 2000"), "{out}");
    assert!(has("[2] sleep 2000"), "bg continues it:\n{out}");
    assert!(has("^C"), "{out}");
    assert!(has("[2]+  Terminated                 sleep 2000"), "{out}");
    // The Up arrow ran `echo history-one` again: its output twice.
    assert_eq!(out.matches("\nhistory-one").count(), 2, "{out}");
    assert!(has("status 0"), "{out}");
}
