//! The "step through the kernel with gdb" use, end to end: `boot gdb --no-launch` starts QEMU
//! paused and prints the gdb command; gdb attaches, stops at the kernel's entry through the
//! hardware breakpoint, shows the entry function in its backtrace and steps one line. Then
//! the sessions of a running machine: the policy's tick, a user program, two CPUs (a stop
//! while every CPU idles is `tests/gdb_idle.rs`'s).

use systests::gdb_session::{between, gdb_batch, session_ended, start_session};

#[test]
fn gdb_stops_at_the_kernel_entry_and_steps() {
    let (mut boot, _, script) = start_session("", &[]);
    let text = gdb_batch(&script, &["bt", "next", "kill"]);
    // gdb's `kill` ended QEMU, and with it the boot tool — a session's ordinary end, not a
    // failure: status 0 (it was 4, "no report", once).
    let ended = boot.wait().expect("the boot tool ran");
    assert_eq!(
        ended.code(),
        Some(0),
        "ending a gdb session is not a failure"
    );
    assert!(
        text.contains("Breakpoint 1, kernel::kernel_main ("),
        "no stop at the entry:\n{text}"
    );
    assert!(
        text.contains("#0  kernel::kernel_main ("),
        "entry not in the backtrace:\n{text}"
    );
    assert!(
        text.contains("at kernel/src/main.rs:"),
        "no source line:\n{text}"
    );
    // `next` stepped over kernel::init to the self-check: the line gdb printed is the call.
    assert!(
        text.contains("selfcheck::run(&boot);"),
        "`next` did not step to the next line:\n{text}"
    );
    // The script names the program: no "No executable has been specified" warning.
    assert!(!text.contains("No executable"), "{text}");
}

/// The scheduler session of docs/debugging.md: stops in the policy's tick while the workload
/// runs, the helpers, then the breakpoint deleted and the run left to finish. Under
/// `-icount ...,sleep=off` this session once hung: the stops read `now` leaping by hours and
/// the kernel never printed again (boot/src/gdb.rs explains the cause and the fix).
#[test]
fn breakpoints_in_the_policy_tick_continue_cleanly_and_the_helpers_show_the_scheduler() {
    let (boot, console, script) =
        start_session("run=custom tasks=sleeper:10ms,hog duration=500ms", &[]);
    let text = gdb_batch(
        &script,
        &[
            // The policy's tick, once the workload has run for a while (it starts after the
            // boot and the initramfs's few megabytes, well within 200 ms).
            "hbreak 'sched::fair::class::{impl#2}::tick' if now > 300000000",
            "continue",
            "continue",
            "continue",
            // An unoptimised policy: its variables are there, not `<optimized out>`.
            "info args",
            // Rust's pretty-printers: a Vec's elements, not RawVec internals.
            "print self.runqueues",
            "cfslab-ps",
            "cfslab-rq",
            "cfslab-trace 5",
            "delete",
            "continue",
        ],
    );
    let console = session_ended(boot, &console, &text);
    stops_are_a_tick_apart(&text);
    assert!(text.contains("now = "), "info args:\n{text}");
    assert!(!text.contains("<optimized out>"), "{text}");
    assert!(text.contains("Vec(size="), "no pretty-printer:\n{text}");
    helpers_show_the_scheduler(&text);
    the_run_ended_with_sane_wake_ups(&console);
}

/// Three stops in the tick, one tick (4 ms at HZ=250) apart, as the kernel's clock reads
/// them. The ticks expire on an exact 4 ms grid, but with icount `sleep=on` a tick's handler
/// on a loaded host can read the clock a millisecond late (seen: 301.03, 304.00, 308.00 ms),
/// so a gap may be 4 ms ± 1.5; the bookkeeping this guards against read 11 ms, 38 ms, 762 ms,
/// then 13 hours (boot/src/gdb.rs).
fn stops_are_a_tick_apart(text: &str) {
    let stops: Vec<u64> = text
        .lines()
        .filter(|l| l.starts_with("Breakpoint 2, "))
        .map(|l| {
            let now = l
                .split("now=")
                .nth(1)
                .expect("now=")
                .split(')')
                .next()
                .unwrap();
            now.parse().expect("a number")
        })
        .collect();
    assert_eq!(stops.len(), 3, "{text}");
    for pair in stops.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            (2_500_000..=5_500_000).contains(&gap),
            "stops {stops:?}:\n{text}"
        );
    }
}

/// What the helpers printed: `cfslab-ps` both workload tasks, `cfslab-rq` the CPU's part of
/// /proc/sched_debug with the root runqueue and the running task marked, `cfslab-trace 5`
/// five events.
fn helpers_show_the_scheduler(text: &str) {
    assert!(text.contains("  PID NAME"), "{text}");
    for task in ["sleeper", "hog"] {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().nth(1) == Some(task)),
            "no {task} in cfslab-ps:\n{text}"
        );
    }
    assert!(text.contains("cfs_rq[0]:/\n  .MIN_vruntime "), "{text}");
    assert!(text.lines().any(|l| l.starts_with(">R ")), "{text}");
    let events = text
        .lines()
        .filter(|l| l.contains(" [000] d") && l.contains(": sched_"))
        .count();
    assert_eq!(events, 5, "{text}");
}

/// The run completed after the stops with sane figures: the sleeper's wake-ups at most a tick
/// late, plus the 50 µs of timer slack a user sleep gets and this unoptimised kernel's wake-up
/// path (about 65 µs): 4.5 ms — for nine in ten of them. A gdb session runs with icount
/// `sleep=on` (boot/src/gdb.rs), its guest clock tied to the host's, and on a loaded host a
/// rare sample comes a tick or a few late (5 to 18 ms seen with other QEMUs running beside
/// it); the maximum only guards against a lost timer, which would leave the sleeper waiting
/// for the rest of the 500 ms run.
fn the_run_ended_with_sane_wake_ups(console: &str) {
    let latency: serde_json::Value = console
        .lines()
        .filter_map(|l| l.strip_prefix("RESULT "))
        .find(|json| json.starts_with("{\"kind\":\"latency\""))
        .map(|json| serde_json::from_str(json).expect("a RESULT line"))
        .unwrap_or_else(|| panic!("no latency result:\n{console}"));
    assert!(latency["p90_us"].as_u64().unwrap() <= 4_500, "{latency}");
    assert!(latency["max_us"].as_u64().unwrap() <= 50_000, "{latency}");
    assert_eq!(latency["missed"].as_u64(), Some(0), "{latency}");
}

/// The user-program session of docs/userland.md: the program's symbols loaded with
/// `cfslab-program`, a stop in its code, then a stop in the kernel's system-call dispatcher
/// for its first `write`, and the run completing.
#[test]
fn a_user_program_stops_in_its_own_code_and_its_system_call_in_the_kernel() {
    let (boot, console, script) = start_session("-- /bin/hello a", &[]);
    let text = gdb_batch(
        &script,
        &[
            "cfslab-program hello",
            "hbreak hello::run",
            "continue",
            "bt 3",
            "hbreak kernel::user::syscall::dispatch",
            "continue",
            // write(2): number 1 in rax; fd 1 in rdi.
            "print/x frame.rax",
            "print frame.rdi",
            "delete",
            "continue",
        ],
    );
    let console = session_ended(boot, &console, &text);
    assert!(text.contains("Breakpoint 2, hello::run (args="), "{text}");
    assert!(text.contains("at programs/src/bin/hello.rs:"), "{text}");
    assert!(
        text.contains("in rt::start::start (sp="),
        "no backtrace into the runtime:\n{text}"
    );
    assert!(
        text.contains("Breakpoint 3, kernel::user::syscall::dispatch (frame="),
        "{text}"
    );
    assert!(text.contains("$1 = 0x1\n$2 = 1\n"), "{text}");
    assert!(console.contains("  argv[1] = a"), "{console}");
    assert!(console.contains(r#""status":0"#), "{console}");
}

/// With two CPUs, QEMU's gdb stub shows each vCPU as a thread, and `cfslab-rq` shows one
/// CPU's part of /proc/sched_debug: the selected thread's by default, or the CPU it is
/// given; a CPU that is not online is said to be so.
#[test]
fn with_two_cpus_gdb_lists_both_and_cfslab_rq_takes_a_cpu() {
    let (boot, console, script) =
        start_session("run=custom tasks=hog duration=300ms", &["--smp", "2"]);
    let text = gdb_batch(
        &script,
        &[
            // The tick runs on CPU 0 (the APs run no task yet): its thread is selected. At
            // 400 ms the hog's 300 ms window runs: on several CPUs the clock starts at the
            // anchor, before the APs start and the boot's checks (time::anchor), and the
            // debug kernel's window spans about 250-550 ms of it.
            "hbreak 'sched::fair::class::{impl#2}::tick' if now > 400000000",
            "continue",
            "info threads",
            "echo ---own---\\n",
            "cfslab-rq",
            "echo ---cpu1---\\n",
            "cfslab-rq 1",
            "echo ---cpu5---\\n",
            "cfslab-rq 5",
            // The AP's own thread: its runqueue by default, the call still run on CPU 0.
            "thread 2",
            "echo ---thread2---\\n",
            "cfslab-rq",
            "echo ---end---\\n",
            "delete",
            "continue",
        ],
    );
    let _ = session_ended(boot, &console, &text);
    // `info threads`' rows: "* 1    Thread 1.1 (CPU#0 [running]) ...", "  2    Thread 1.2 ...".
    let row = |l: &&str| {
        let l = l.trim_start_matches(['*', ' ']);
        l.starts_with(|c: char| c.is_ascii_digit()) && l.contains(" Thread 1.")
    };
    let threads: Vec<&str> = text.lines().filter(row).collect();
    assert_eq!(threads.len(), 2, "info threads:\n{text}");
    assert!(threads[0].starts_with("* 1 "), "{text}");
    let own = between(&text, "---own---\n", "---cpu1---");
    assert!(own.contains("\ncpu#0\n") && !own.contains("cpu#1"), "{own}");
    assert!(
        own.lines()
            .any(|l| l.starts_with(">R") && l.contains(" hog ")),
        "{own}"
    );
    let cpu1 = between(&text, "---cpu1---\n", "---cpu5---");
    assert!(
        cpu1.contains("\ncpu#1\n") && !cpu1.contains("cpu#0"),
        "{cpu1}"
    );
    assert!(cpu1.contains("\ncfs_rq[1]:/\n"), "{cpu1}");
    let cpu5 = between(&text, "---cpu5---\n", "---thread2---");
    assert_eq!(
        cpu5.lines().next(),
        Some("cfslab-rq: CPU 5 is not online (online: [0, 1])"),
        "{text}"
    );
    // On CPU 1's thread, `cfslab-rq` is CPU 1's, and comes back (the call ran on CPU 0).
    let thread2 = between(&text, "---thread2---\n", "---end---");
    assert!(
        thread2.contains("\ncpu#1\n") && !thread2.contains("cpu#0"),
        "{text}"
    );
}
