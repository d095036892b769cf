//! Debian's busybox (`busybox-static`, glibc, fetched once by the boot tool) on cfslab: the
//! same binary runs a script natively on the host and as cfslab's `/bin/sh`, and both must
//! print the same. `boot run --busybox` puts it and its applets (hard links) under `/bin`.

use std::process::Command;
use systests::{assert_nothing_leaked, boot_command, boot_with, program_output};

/// A script whose output does not depend on the machine: exit statuses through `$?`
/// (glibc passes `int`s zero-extended: read as 64 bits, every status was 255), command
/// substitution, a pipeline, a subshell, the applets as links.
const SCRIPT: &str = "echo hello; false; echo \"false: $?\"; sh -c 'exit 3'; echo \"exit 3: $?\"; \
                      (exit 7); echo \"subshell: $?\"; seq 1 100 | wc -l; \
                      echo \"$(echo nested $(echo deep))\"; x=$(printf '%s-' a b c); echo $x; \
                      sleep 1; basename /bin/ls; echo done";

#[test]
fn busybox_sh_runs_a_script_as_on_linux() {
    // The script as one word after the boot tool's `--`, quotes and all.
    let flags = [
        "--icount-shift",
        "2",
        "--busybox",
        "--",
        "/bin/sh",
        "-c",
        SCRIPT,
    ];
    let run = boot_with("", &flags);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_nothing_leaked(&run);
    // The same binary on the host (the boot tool caches it and says where).
    let out = boot_command(&["busybox"])
        .output()
        .expect("runs the boot tool");
    let busybox = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let native = Command::new(&busybox)
        .args(["sh", "-c", SCRIPT])
        .output()
        .expect("busybox runs natively");
    let expected = String::from_utf8_lossy(&native.stdout);
    assert!(expected.ends_with("done\n"), "{expected}");
    let on_cfslab: String = program_output(&run)
        .lines()
        .filter(|l| !l.starts_with("cfslab: system call"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(on_cfslab, expected);
}
