//! A gdb session stopped while the machine idles, end to end: the helpers still answer though
//! every CPU is halted in its idle task (`tests/gdb.rs` has the sessions of a running
//! machine; both start theirs through `systests::gdb_session`).

use systests::gdb_session::{between, gdb_batch, session_ended, start_session};

/// gdb's Ctrl-C, `seconds` from now: gdb stops the machine wherever it is (the command that
/// follows is the `continue` it interrupts).
fn interrupt_after(seconds: u32) -> String {
    format!(
        "python import threading; threading.Timer({seconds}, \
         lambda: gdb.post_event(lambda: gdb.execute('interrupt'))).start()"
    )
}

/// The helpers answer when the machine is stopped while it idles, the usual case of a
/// Ctrl-C at the shell's prompt: every CPU is then in its idle task's `hlt`, which QEMU
/// leaves only for an interrupt, and the helpers' call masks them. The helper wakes CPU 0
/// with an NMI the kernel takes as the debugger's (`arch::x86_64::debugger_nmi`); the other
/// CPU takes its own when it runs again, and returns from it too (the run goes on, and a
/// second stop answers as well).
#[test]
fn the_helpers_answer_while_every_cpu_halts_in_idle() {
    let (boot, console, script) = start_session("run=shell", &["--smp", "2"]);
    let text = gdb_batch(
        &script,
        &[
            "delete",
            &interrupt_after(10),
            "continue",
            "echo ---stop1---\\n",
            "x/i $pc-1",
            "cfslab-ps",
            "cfslab-rq 0",
            "echo ---run-on---\\n",
            &interrupt_after(5),
            "continue",
            "echo ---stop2---\\n",
            "x/i $pc-1",
            "cfslab-ps",
            "echo ---end---\\n",
            "kill",
        ],
    );
    let console = session_ended(boot, &console, &text);
    for stop in [
        between(&text, "---stop1---\n", "---run-on---"),
        between(&text, "---stop2---\n", "---end---"),
    ] {
        // Stopped just past the idle task's `hlt`, CPU 0 halted: the case being tested.
        let first = stop.lines().next().unwrap_or("");
        assert!(first.contains("hlt"), "not stopped in hlt:\n{text}");
        // `cfslab-ps` answered: the shell (pid 5, after the two CPUs' stoppers) sleeps,
        // waiting for a line.
        assert!(
            stop.lines()
                .any(|l| l.trim_start().starts_with("5 sh ") && l.contains("sleeping")),
            "no answer from cfslab-ps:\n{text}"
        );
    }
    let stop1 = between(&text, "---stop1---\n", "---run-on---");
    assert!(
        stop1.contains("\ncpu#0\n"),
        "no answer from cfslab-rq:\n{text}"
    );
    // Neither CPU took the NMI for a fault.
    assert!(!console.contains("NMI"), "{console}");
}
