//! The user programs are real Linux binaries: built as static, non-PIE ELF executables with
//! no interpreter, they run natively on the host's Linux, and the same files run on cfslab
//! (`-- /bin/NAME args` on the command line) with the same output, the same exit status and,
//! for a program that faults, the same signal.

use std::process::Command;
use systests::user_programs as programs;
use systests::{assert_nothing_leaked, checked_on_both, program_output};

#[test]
fn each_program_is_a_static_non_pie_executable_without_an_interpreter() {
    for name in [
        "hello", "ustest", "crash", "perms", "ctest", "cthreads", "hostile", "ccalls", "csignals",
        "cfaults", "cqueue", "sched_py", "job",
    ] {
        let elf = std::fs::read(programs().join(name)).expect("built");
        assert_eq!(&elf[..4], b"\x7fELF", "{name}");
        // e_type (offset 16) is ET_EXEC = 2, not ET_DYN (a PIE).
        assert_eq!(
            u16::from_le_bytes([elf[16], elf[17]]),
            2,
            "{name} is not ET_EXEC"
        );
        // No program header is PT_INTERP (3): nothing to load before it runs.
        let phoff = u64::from_le_bytes(elf[32..40].try_into().unwrap()) as usize;
        let phentsize = u16::from_le_bytes([elf[54], elf[55]]) as usize;
        let phnum = u16::from_le_bytes([elf[56], elf[57]]) as usize;
        for i in 0..phnum {
            let at = phoff + i * phentsize;
            let kind = u32::from_le_bytes(elf[at..at + 4].try_into().unwrap());
            assert_ne!(kind, 3, "{name} has an interpreter");
        }
    }
}

/// What `hello a "b c"`... prints with cfslab's environment (HOME=/ TERM=dumb).
const HELLO: &str = "hello from cfslab's userland: 3 arguments\n  argv[0] = /bin/hello\n  argv[1] = a\n  \
                     argv[2] = b\n  2 environment strings\n";

#[test]
fn hello_reads_argv_and_envp_from_the_initial_stack_on_linux() {
    use std::os::unix::process::CommandExt;
    let out = Command::new(programs().join("hello"))
        .arg0("/bin/hello")
        .args(["a", "b"])
        .env_clear()
        .env("HOME", "/")
        .env("TERM", "dumb")
        .output()
        .expect("runs natively");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), HELLO);
}

#[test]
fn ustest_passes_every_check_on_linux() {
    let out = Command::new(programs().join("ustest"))
        .output()
        .expect("runs natively");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let checks = text.lines().filter(|l| l.starts_with("ok ")).count();
    assert_eq!(checks, 20, "{text}");
    assert!(text.ends_with("ustest: all 20 checks passed\n"), "{text}");
}

/// Boots `-- argv` with the default options (at icount shift 2) and returns the run.
fn on_cfslab(argv: &str, flags: &[&str]) -> systests::Run {
    systests::on_cfslab("", argv, flags)
}

#[test]
fn hello_prints_the_same_on_cfslab_and_its_exit_is_reported() {
    let run = on_cfslab("/bin/hello a b", &[]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(program_output(&run), HELLO);
    let exit = run.result("exit");
    assert_eq!(exit["argv"], serde_json::json!(["/bin/hello", "a", "b"]));
    assert_eq!(
        (exit["status"].as_i64(), exit["signal"].is_null()),
        (Some(0), true)
    );
}

#[test]
fn a_faulting_program_dies_by_linux_s_signal_and_the_kernel_goes_on() {
    use std::os::unix::process::ExitStatusExt;
    for what in [
        "null", "kernel", "cli", "hlt", "ud2", "div0", "int3", "icebp",
    ] {
        let native = Command::new(programs().join("crash"))
            .arg(what)
            .output()
            .expect("runs natively");
        let linux_signal = native.status.signal().expect("killed by a signal on Linux");
        let run = on_cfslab(&format!("/bin/crash {what}"), &[]);
        // The run ends normally (status 1: the program failed), with the kernel's report.
        assert_eq!(run.status, 1, "{what}: {}{}", run.stdout, run.stderr);
        let exit = run.result("exit");
        assert_eq!(
            exit["signal"].as_i64(),
            Some(i64::from(linux_signal)),
            "{what}: {exit}"
        );
        assert!(exit["status"].is_null());
        // Linux's line: `crash[PID]: segfault at ...` or `traps: crash[PID] ...`.
        assert!(
            run.lines()
                .any(|l| l.starts_with("crash[") || l.starts_with("traps: crash[")),
            "{what}: {}",
            run.stdout
        );
    }
}

/// With UMIP, which cfslab sets where the CPU has it (QEMU's CPU here has it), `sgdt` in
/// ring 3 faults instead of showing where the kernel's GDT is, and the kernel answers it
/// with Linux's dummy address (its UMIP emulation, `user::umip`), as Linux 5.10+ does.
#[test]
fn sgdt_does_not_show_the_kernel_s_tables() {
    let run = on_cfslab("/bin/crash sgdt", &[]);
    assert!(
        run.stdout
            .contains("crash: the GDT is at 0xfffffffffffe0000"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_host_binary_added_with_add_runs_even_in_a_built_in_s_place_and_a_missing_one_is_reported() {
    let copy = std::env::temp_dir().join(format!("hi-{}", std::process::id()));
    std::fs::copy(programs().join("hello"), &copy).unwrap();
    let name = copy.file_name().unwrap().to_str().unwrap().to_string();
    let run = on_cfslab(&format!("/bin/{name}"), &["--add", copy.to_str().unwrap()]);
    let _ = std::fs::remove_file(&copy);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(&format!("argv[0] = /bin/{name}")),
        "{}",
        run.stdout
    );

    // A file named as a built-in program replaces it, and the tool says so.
    let dir = std::env::temp_dir().join(format!("cfslab-add-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mine = dir.join("hello");
    std::fs::copy(programs().join("crash"), &mine).unwrap();
    let run = on_cfslab("/bin/hello int3", &["--add", mine.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(run.stdout.contains("crash: int3"), "{}", run.stdout);
    assert!(
        run.stderr.contains("/bin/hello is ") && run.stderr.contains("not the built-in"),
        "{}",
        run.stderr
    );

    let run = on_cfslab("/bin/nope", &[]);
    assert_eq!(run.status, 1);
    assert!(
        run.lines()
            .any(|l| l == "/bin/nope: cannot run: no such file in the initramfs"),
        "{}",
        run.stdout
    );
    assert!(run.result("exit")["pid"].is_null());
}

/// `boot linux`: the same `hello` binary on Linux 6.1 (Debian's cloud kernel, fetched once)
/// in the same QEMU and icount — `make compare`'s machine. Its init (`linuxinit`) runs the
/// program, reports the exit with cfslab's RESULT line and powers off; the boot tool's status
/// follows the program's, as `run`'s does.
#[test]
fn hello_prints_the_same_on_linux_in_the_same_qemu() {
    let run = systests::on_linux(&["/bin/hello", "a", "b"]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("Linux: linux-image-6.1."),
        "{}",
        run.stderr
    );
    assert_eq!(systests::linux_program_output(&run), HELLO);
    let exit = run
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .expect("linuxinit's RESULT line");
    let exit: serde_json::Value = serde_json::from_str(exit).expect("JSON");
    assert_eq!(exit["argv"], serde_json::json!(["/bin/hello", "a", "b"]));
    assert_eq!(
        (exit["status"].as_i64(), exit["signal"].is_null()),
        (Some(0), true)
    );
}

#[test]
fn ustest_prints_the_same_on_cfslab_as_on_linux() {
    // fork and its exit status, SIGKILL, vfork + execve, a clone thread, pipes, the heap
    // over mmap and brk, dup2, pipe end-of-file, WNOHANG, ENOENT, nanosleep, the CPU clock,
    // copy-on-write privacy after fork, SIGPIPE: the same twenty lines from both kernels.
    let native = Command::new(programs().join("ustest"))
        .output()
        .expect("runs natively");
    let run = on_cfslab("/bin/ustest", &[]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_nothing_leaked(&run);
    assert_eq!(
        program_output(&run),
        String::from_utf8_lossy(&native.stdout)
    );
}

#[test]
fn a_c_program_built_with_musl_prints_the_same_on_cfslab_as_on_linux() {
    // musl's start-up (auxv, TLS through arch_prctl), stdio, fork, vfork + execve of itself,
    // wait4, pipe, nanosleep, clock_gettime, setuid, and SSE registers kept per process
    // across switches: see userland/c/ctest.c. The exec'd child finds itself by argv[0].
    use std::os::unix::process::CommandExt;
    let mut native = Command::new(programs().join("ctest"));
    native.arg0(programs().join("ctest"));
    let (expected, run) = checked_on_both(&mut native, "ctest");
    assert_eq!(program_output(&run), expected);
    // Nothing musl called was missing.
    assert!(!run.stdout.contains("is not implemented"), "{}", run.stdout);
}

#[test]
fn musl_threads_signals_and_rusage_behave_on_cfslab_as_on_linux() {
    // pthread_create (CLONE_THREAD, CLONE_SETTLS, the tid words, a PROT_NONE guard page),
    // mutexes, condition variables and pthread_join on futexes, __thread variables, exit()
    // and a segfault in a thread ending the whole process, blocked and ignored signals,
    // sigaction read back, getrusage and wait4's rusage: see userland/c/cthreads.c.
    let (expected, run) =
        checked_on_both(&mut Command::new(programs().join("cthreads")), "cthreads");
    // The kernel's line for the thread that segfaults (Linux writes it to its own log).
    let segfault = |l: &str| l.starts_with("cthreads[") && l.contains("]: segfault at ");
    let output: String = program_output(&run)
        .lines()
        .filter(|l| !segfault(l))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(output, expected);
    assert_eq!(run.stdout.lines().filter(|l| segfault(l)).count(), 1);
    assert!(!run.stdout.contains("is not implemented"), "{}", run.stdout);
}

#[test]
fn the_uid_rules_are_linux_s() {
    // setuid, kill and setpriority as root and as an unprivileged uid: see
    // userland/programs/src/bin/perms.rs. Linux's side needs root: without it the test
    // fails unless told to check cfslab's side alone (`linux_side_unavailable`).
    let expected = "ok setuid: root takes another uid, which can take itself but not root\n\
                    ok kill: a user may signal itself, not root's process (EPERM)\n\
                    ok setpriority: a user may raise its own nice, not lower it (EACCES)\n\
                    ok setpriority: a user may not renice root's process (EPERM)\n\
                    ok setpriority: root lowers a user's process's nice to -5\n\
                    ok setpriority PRIO_USER: root renices every process of a uid\n\
                    perms: all 6 checks passed\n";
    let native = Command::new(programs().join("perms"))
        .output()
        .expect("runs natively");
    match native.status.code() {
        Some(2) => systests::linux_side_unavailable("perms", "not root on the host"),
        _ => assert_eq!(String::from_utf8_lossy(&native.stdout), expected),
    }
    let run = on_cfslab("/bin/perms", &[]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(program_output(&run), expected);
}

#[test]
fn a_fork_bomb_meets_eagain_and_the_kernel_reaps_everything() {
    // See userland/programs/src/bin/forkbomb.rs: 2047 processes wanted, MAX_PROCESSES (256)
    // allowed. The kernel's tables grow once to their high-water mark (the page tables of
    // the kernel-stack slots, the scheduler's per-slot tables) and keep it; the limit is
    // taken before a fork's stack is, so the peak is the same in every run. What depends on
    // how many tasks were runnable at once (a runqueue's timeline) is given back when the
    // queue empties. So a leak is what two more rounds, 800-odd more processes, add: not one
    // frame, and less than 5 bytes of heap per process.
    // On one CPU even under `SYSTESTS_SMP`: with several, each CPU's tables reach their
    // high-water mark in a round of their own (tests/smp.rs runs it on four for frames).
    let memory = systests::fork_bomb_memory;
    let (before, after_one, heap_one) = memory(&on_cfslab("/bin/forkbomb", &["--smp", "1"]));
    let (_, after_three, heap_three) = memory(&on_cfslab("/bin/forkbomb 3", &["--smp", "1"]));
    assert!(after_one - before <= 32, "{before} -> {after_one} frames");
    assert_eq!(after_three, after_one, "frames leaked by rounds 2 and 3");
    assert!(
        (heap_three - heap_one).abs() < 4096,
        "heap {heap_one} after one round, {heap_three} after three"
    );
}

#[test]
fn the_fuzzer_s_random_system_calls_leave_the_kernel_standing_with_its_frames_back() {
    // userland/programs/src/bin/fuzz.rs, a short run (docs/userland.md gives the 10^6-call one):
    // 20 000 random calls, seeded, in unprivileged children replaced as they die. It found
    // an overflow panic in the sleep path, an unmap that walked 2^35 pages, and exit statuses
    // never reaped (about 15 bytes of heap per child); the run must end normally, every frame
    // must come back, and the heap may keep only the capacity the kernel's tables grew to.
    let run = on_cfslab("/bin/fuzz 20000 7", &[]);
    systests::fuzz_ran_to_its_end(&run);
    assert!(
        run.lines()
            .filter(|l| l.starts_with("fuzz: ") && l.contains(" of 20000 calls"))
            .count()
            >= 5
    );
}

#[test]
fn the_programs_that_would_harm_a_real_machine_refuse_to_run_natively() {
    // A fork bomb, the fuzzer and a power-off check `uname` first: on the host's Linux each
    // says why in one line and exits with status 2, doing nothing.
    for name in ["forkbomb", "fuzz", "poweroff"] {
        let out = Command::new(programs().join(name))
            .output()
            .expect("runs natively");
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{name}: refusing to run: this program is for cfslab only\n")
        );
    }
}

#[test]
fn reboot_powers_off_for_root_only_and_ends_the_run() {
    // userland/programs/src/bin/poweroff.rs (on cfslab only, see the test above): EPERM for an unprivileged uid, EINVAL for bad magic, then Linux's line and a
    // successful end of the run, with no RESULT exit (the program never returned).
    let run = on_cfslab("/bin/poweroff", &[]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.lines()
            .any(|l| l == "poweroff: EPERM for uid 54321: true; EINVAL for bad magic: true"),
        "{}",
        run.stdout
    );
    assert!(
        run.lines().any(|l| l == "reboot: Power down"),
        "{}",
        run.stdout
    );
    assert_eq!(run.result("reboot")["cmd"], "Power down");
}

#[test]
fn the_calls_glibc_programs_make_are_answered_as_on_linux() {
    // fcntl (F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD/F_SETFD, F_GETFL), dup3 and close-on-exec
    // across execve; getrandom, time, getgroups, the affinity calls, getrlimit and
    // prlimit64 (the last descriptor the limit allows is usable, the next is EINVAL),
    // tkill and tgkill: see userland/c/ccalls.c.
    let (expected, run) = checked_on_both(&mut Command::new(programs().join("ccalls")), "ccalls");
    assert_eq!(program_output(&run), expected);
    assert!(!run.stdout.contains("is not implemented"), "{}", run.stdout);
}
