//! The "step through the kernel with gdb" use, end to end: `boot gdb --no-launch` starts QEMU
//! paused and prints the gdb command; gdb attaches, stops at the kernel's entry through the
//! hardware breakpoint, shows the entry function in its backtrace and steps one line.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use systests::boot_command;

/// A TCP port that was free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn gdb_stops_at_the_kernel_entry_and_steps() {
    let port = free_port().to_string();
    // The boot tool's timeout ends QEMU if gdb never does (a failing test must not leave a
    // paused QEMU behind).
    let mut boot = boot_command(&["gdb", "--no-launch", "--timeout", "600", "--port", &port])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cannot start the boot tool");

    // The first line on stdout is the exact command to attach; wait for it (the kernel may
    // need building first).
    let stdout = boot.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let attach = rx
        .recv_timeout(Duration::from_secs(600))
        .expect("no gdb command printed");
    let script = attach
        .strip_prefix("gdb -q -x ")
        .unwrap_or_else(|| panic!("unexpected line: {attach}"));

    // No terminal for gdb (stdin is /dev/null): a gdb that finds one takes it over as its
    // foreground process group, which would stop whatever else is using the terminal.
    let output = Command::new("timeout")
        .args([
            "120", "gdb", "-batch", "-x", script, "-ex", "bt", "-ex", "next", "-ex", "kill",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("cannot run gdb");
    // gdb's `kill` ended QEMU, and with it the boot tool — a session's ordinary end, not a
    // failure: status 0 (it was 4, "no report", once).
    let ended = boot.wait().expect("the boot tool ran");
    assert_eq!(
        ended.code(),
        Some(0),
        "ending a gdb session is not a failure"
    );
    let text = String::from_utf8_lossy(&output.stdout);
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
}
