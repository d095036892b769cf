//! The boot tool's `--smp N` from the outside: Linux 6.1, booted by `boot linux --smp 2`
//! under icount, must find two CPUs in the machine (the same machine cfslab gets with the
//! flag), and a CPU count the tool cannot use is refused before anything boots.

use systests::{Run, boot_command};

/// Runs the boot tool with `args` and waits for it.
fn boot_tool(args: &[&str]) -> Run {
    let output = boot_command(args)
        .output()
        .expect("cannot run the boot tool");
    Run {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).replace('\r', ""),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The boot tool's status for a command line it refuses (usage.rs: "64 usage error").
const USAGE: i32 = 64;

#[test]
fn linux_with_smp_2_counts_two_cpus() {
    let out = boot_tool(&["busybox"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let busybox = out.stdout.trim().to_string();
    // Two counts that come from different places: nproc asks the scheduler which CPUs the
    // shell may run on, /proc/cpuinfo lists the CPUs Linux brought up. linuxinit mounts
    // /proc only for some options, so the script mounts it itself. No double quotes: the
    // script travels on Linux's command line, which cannot pass them inside a word.
    let script = "B=/bin/busybox; $B mkdir -p /proc; $B mount -t proc proc /proc; \
                  echo nproc $($B nproc); echo cpuinfo $($B grep -c ^processor /proc/cpuinfo)";
    let run = boot_tool(&[
        "linux",
        "--smp",
        "2",
        "--icount-shift",
        "2",
        "--timeout",
        "300",
        "--add",
        &busybox,
        "--",
        "/bin/busybox",
        "sh",
        "-c",
        script,
    ]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let program = systests::linux_program_output(&run);
    assert!(program.lines().any(|l| l == "nproc 2"), "nproc:\n{program}");
    assert!(
        program.lines().any(|l| l == "cpuinfo 2"),
        "/proc/cpuinfo:\n{program}"
    );
}

#[test]
fn a_cpu_count_out_of_range_or_not_a_number_is_refused() {
    for (args, line) in [
        (
            &["run", "--smp", "0"][..],
            "boot: --smp: 0 is out of range (1..=64)",
        ),
        (
            &["linux", "--smp", "abc", "--", "/bin/hello"][..],
            "boot: --smp: 'abc' is not a number",
        ),
        (
            &["gdb", "--smp", "65"][..],
            "boot: --smp: 65 is out of range (1..=64)",
        ),
    ] {
        let run = boot_tool(args);
        assert_eq!(run.status, USAGE, "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.lines().next(), Some(line), "{args:?}");
        assert!(run.stdout.is_empty(), "{args:?} booted: {}", run.stdout);
    }
}
