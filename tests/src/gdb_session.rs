//! The gdb sessions of the system tests (`tests/gdb.rs`, `tests/gdb_idle.rs`): start
//! `boot gdb --no-launch`, run gdb in batch mode on the script it printed, check that the
//! session ended with status 0, and cut gdb's output at the marker lines a session echoes.

use crate::boot_command;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A TCP port that was free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `boot gdb --no-launch` with `opts` (and the tool's `flags`): the running boot tool, its
/// later stdout lines, and the gdb script it printed.
pub fn start_session(opts: &str, flags: &[&str]) -> (Child, mpsc::Receiver<String>, String) {
    let port = free_port().to_string();
    // The boot tool's timeout ends QEMU if gdb never does (a failing test must not leave a
    // paused QEMU behind).
    let mut args = vec![
        "gdb",
        "--no-launch",
        "--timeout",
        "600",
        "--port",
        &port,
        "--opts",
        opts,
    ];
    args.extend_from_slice(flags);
    let mut boot = boot_command(&args)
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
        .unwrap_or_else(|| panic!("unexpected line: {attach}"))
        .to_string();
    (boot, rx, script)
}

/// Waits for the boot tool to end, checks that the session ended as a success (status 0),
/// and returns what the kernel printed.
pub fn session_ended(mut boot: Child, console: &mpsc::Receiver<String>, gdb: &str) -> String {
    let ended = boot.wait().expect("the boot tool ran");
    let console = console.try_iter().collect::<Vec<_>>().join("\n");
    assert_eq!(ended.code(), Some(0), "gdb:\n{gdb}\nconsole:\n{console}");
    console
}

/// Runs gdb in batch mode on `script`, then `commands`; returns what it printed.
pub fn gdb_batch(script: &str, commands: &[&str]) -> String {
    let mut args = vec!["120", "gdb", "-batch", "-x", script];
    for command in commands {
        args.extend(["-ex", command]);
    }
    // No terminal for gdb (stdin is /dev/null): a gdb that finds one takes it over as its
    // foreground process group, which would stop whatever else is using the terminal.
    let output = Command::new("timeout")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("cannot run gdb");
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The part of gdb's `text` between the marker lines `from` and `to` (echoed by the session).
pub fn between<'a>(text: &'a str, from: &str, to: &str) -> &'a str {
    let rest = text.split(from).nth(1).unwrap_or_else(|| panic!("{text}"));
    rest.split(to).next().unwrap()
}
