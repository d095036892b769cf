//! Several CPUs from the outside. cfslab finds the machine's CPUs in ACPI's MADT and starts
//! each one; `smp=` must agree with the machine. Linux 6.1, booted by `boot linux --smp 2`
//! under icount, finds two CPUs in the same machine. A CPU count the boot tool cannot use
//! is refused before anything boots.

use systests::{boot_tool, boot_with};

/// The boot tool's status for a command line it refuses (usage.rs: "64 usage error").
const USAGE: i32 = 64;

/// Linux 6.1 with `--smp 2` in the same QEMU: what busybox's `nproc` says, then its
/// `/proc/cpuinfo`.
fn linux_cpus() -> String {
    let out = boot_tool(&["busybox"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let busybox = out.stdout.trim().to_string();
    // linuxinit mounts /proc only for some options, so the script mounts it itself. No
    // double quotes: the script travels on Linux's command line, which cannot pass them
    // inside a word.
    let script = "B=/bin/busybox; $B mkdir -p /proc; $B mount -t proc proc /proc; \
                  echo nproc $($B nproc); $B cat /proc/cpuinfo";
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
    systests::linux_program_output(&run)
}

/// `/proc/cpuinfo`'s blocks: each a list of (field, value), in order.
fn cpuinfo_blocks(text: &str) -> Vec<Vec<(String, String)>> {
    text.split("\n\n")
        .filter(|block| block.contains("processor\t: "))
        .map(|block| {
            block
                .lines()
                .skip_while(|l| !l.starts_with("processor\t: "))
                .filter_map(|l| l.split_once(": ").or_else(|| l.split_once(':')))
                .map(|(k, v)| (k.to_string(), v.trim().to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn cfslab_lists_its_cpus_in_linux_s_formats() {
    let linux = linux_cpus();
    // Two counts that come from different places: nproc asks the scheduler which CPUs the
    // shell may run on, /proc/cpuinfo lists the CPUs Linux brought up.
    assert!(linux.lines().any(|l| l == "nproc 2"), "nproc:\n{linux}");
    let theirs = cpuinfo_blocks(&linux);
    assert_eq!(theirs.len(), 2, "Linux's /proc/cpuinfo:\n{linux}");
    let run = boot_with("-- /bin/cat /proc/cpuinfo /proc/stat", &["--smp", "2"]);
    assert_eq!(run.status, 0, "{}", run.stdout);
    let ours = cpuinfo_blocks(&run.stdout.replace('\r', ""));
    assert_eq!(ours.len(), 2, "cfslab's /proc/cpuinfo:\n{}", run.stdout);
    for (cpu, (mine, linux)) in ours.iter().zip(&theirs).enumerate() {
        // Each of cfslab's fields is one of Linux's, in Linux's order, with Linux's value:
        // the same CPUID and the same topology. The clock's rate is measured, by each
        // kernel its own way, so only its form is compared.
        let mut at = 0;
        for (key, value) in mine {
            let found = linux[at..].iter().position(|(k, _)| k == key);
            let Some(found) = found else {
                panic!("CPU {cpu}: {key:?} is not Linux's, or out of its order: {linux:?}")
            };
            at += found;
            if key.starts_with("cpu MHz") {
                assert!(value.parse::<f64>().is_ok(), "{key}: {value}");
            } else {
                assert_eq!(value, &linux[at].1, "CPU {cpu}: {key}");
            }
            at += 1;
        }
    }
    // /proc/stat: the machine, then a line per CPU, ten times each; the machine's idle time
    // is the CPUs' (each rounded down to USER_HZ on its own: within one tick per CPU).
    let times = |name: &str| -> Vec<u64> {
        let line = run.lines().find_map(|l| l.strip_prefix(name));
        let line = line.unwrap_or_else(|| panic!("no {name:?} line:\n{}", run.stdout));
        line.split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect()
    };
    let (all, cpu0, cpu1) = (times("cpu  "), times("cpu0 "), times("cpu1 "));
    assert!([&all, &cpu0, &cpu1].iter().all(|t| t.len() == 10));
    let idle = cpu0[3] + cpu1[3];
    assert!(
        (idle..=idle + 2).contains(&all[3]),
        "{all:?} {cpu0:?} {cpu1:?}"
    );
    assert!(cpu1[3] > 0, "the AP idles: {cpu1:?}");
    assert!(run.lines().all(|l| !l.starts_with("cpu2 ")));
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

#[test]
fn smp_must_agree_with_the_machine() {
    // smp=2 on QEMU's default single CPU: the MADT lists one.
    let run = boot_with("smp=2 run=seed003", &[]);
    assert_eq!(run.status, 2, "{}", run.stdout);
    assert_eq!(
        run.line_after("cfslab: smp=2 but the machine has "),
        Some("1 CPU (its ACPI MADT says so): give QEMU -smp 2 (the boot tool's --smp), or smp=1"),
        "{}",
        run.stdout
    );
    assert!(run.results().is_empty(), "{}", run.stdout);
    // And a count the option cannot take is a bad boot option, status 2, one line.
    for bad in ["smp=0", "smp=65", "smp=abc"] {
        let run = boot_with(bad, &[]);
        assert_eq!(run.status, 2, "{bad}: {}", run.stdout);
        let errors: Vec<&str> = run
            .lines()
            .filter(|l| l.starts_with("bad boot option smp"))
            .collect();
        assert_eq!(errors.len(), 1, "{bad}:\n{}", run.stdout);
    }
}

/// `/proc/sched_debug`'s CPU sections: each `cpu#N` line's number and the text up to the
/// next section (or the end of the file, at `/proc/schedstat`'s first line).
fn cpu_sections(text: &str) -> Vec<(usize, &str)> {
    let text = text.split("\nversion 15\n").next().unwrap();
    text.split("\ncpu#")
        .skip(1)
        .map(|section| {
            let (number, rest) = section.split_once('\n').unwrap();
            (number.parse().unwrap(), rest)
        })
        .collect()
}

/// The value of field `.name` in a section of `/proc/sched_debug`.
fn field<'a>(section: &'a str, name: &str) -> &'a str {
    let line = section.lines().find(|l| l.trim_start().starts_with(name));
    let line = line.unwrap_or_else(|| panic!("no {name} in:\n{section}"));
    line.split_once(": ").unwrap().1.trim()
}

#[test]
fn each_cpu_has_a_runqueue_of_its_own() {
    let files = "/proc/sched_debug /proc/schedstat /proc/self/stat";
    let run = boot_with(&format!("-- /bin/cat {files}"), &["--smp", "3"]);
    assert_eq!(run.status, 0, "{}", run.stdout);
    let pid = run.result("exit")["pid"].to_string();
    let text = run.stdout.replace('\r', "");
    // Linux's layout: a `cpu#N` section per CPU, in order, each with its counters, its
    // policy's runqueue (`cfs_rq[N]:/`) and the table of its tasks.
    let sections = cpu_sections(&text);
    let numbers: Vec<usize> = sections.iter().map(|&(n, _)| n).collect();
    assert_eq!(numbers, [0, 1, 2], "{text}");
    // A new task starts on the CPU with the fewest tasks running or waiting, the creating
    // CPU first among equals, then the lowest: the boot task, running on CPU 0, starts
    // `cat` on CPU 1, where it is the current task, in its table. CPU 0 has switched (the
    // boot task now waits for `cat`); CPU 2 has had nothing to do.
    let (_, cpu1) = sections[1];
    assert_eq!(field(cpu1, ".curr->pid"), pid, "{cpu1}");
    assert!(
        cpu1.lines()
            .any(|l| l.starts_with(">R") && l.contains(" cat ")),
        "{cpu1}"
    );
    assert_ne!(
        field(sections[0].1, ".nr_switches"),
        "0",
        "{}",
        sections[0].1
    );
    // CPU 2's runqueue holds its idle task alone: nothing runs or waits there, nothing
    // ever switched, and its table lists no task. A fresh cfs_rq's min_vruntime starts
    // 2^20 ns below zero, as Linux's does (so that wrap-around is exercised early).
    for &(n, ap) in &sections[2..] {
        assert_eq!(field(ap, ".nr_running"), "0", "cpu#{n}:\n{ap}");
        assert_eq!(field(ap, ".nr_switches"), "0", "cpu#{n}:\n{ap}");
        assert_eq!(field(ap, ".curr->pid"), "0", "cpu#{n}:\n{ap}");
        assert!(ap.contains(&format!("\ncfs_rq[{n}]:/\n")), "cpu#{n}:\n{ap}");
        assert_eq!(field(ap, ".min_vruntime"), "-1.048576", "cpu#{n}:\n{ap}");
        let mut table = ap.lines().skip_while(|l| !l.starts_with("-----"));
        assert!(table.next().is_some(), "cpu#{n}: no table:\n{ap}");
        assert!(
            table.all(|l| l.trim().is_empty()),
            "cpu#{n} lists tasks:\n{ap}"
        );
    }
    // /proc/schedstat: a line per CPU; the idle CPU 2's counters are all zero.
    let numbered = |l: &&str| {
        let rest = l.strip_prefix("cpu");
        rest.is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    };
    let schedstat: Vec<&str> = text.lines().filter(numbered).collect();
    assert_eq!(schedstat.len(), 3, "{text}");
    for (n, line) in schedstat.iter().enumerate() {
        let mut words = line.split_whitespace();
        assert_eq!(words.next(), Some(format!("cpu{n}").as_str()), "{line}");
        let counters: Vec<u64> = words.map(|w| w.parse().unwrap()).collect();
        assert_eq!(counters.len(), 9, "{line}");
        assert_eq!(counters.iter().all(|&c| c == 0), n == 2, "{line}");
    }
    // /proc/self/stat: field 39, the processor, is the CPU whose runqueue holds `cat`.
    let stat = text
        .lines()
        .find(|l| l.starts_with(&format!("{pid} (cat)")));
    let stat = stat.unwrap_or_else(|| panic!("no stat line:\n{text}"));
    let after_comm = stat.rsplit_once(") ").unwrap().1;
    // Fields from the third (state) on: the 39th is at index 36.
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    assert_eq!(fields.len(), 50, "{stat}");
    assert_eq!(fields[36], "1", "{stat}");
}
