//! The user programs are real Linux binaries: built as static, non-PIE ELF executables with
//! no interpreter, they run natively on the host's Linux with the output cfslab will be held
//! to. (Their runs on cfslab come with the kernel's ring 3, issue [3/5].)

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use systests::boot_command;

/// Builds the user programs once (through the boot tool, as `make run` will) and returns
/// their directory.
fn programs() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = boot_command(&["userland"])
            .output()
            .expect("cannot run the boot tool");
        assert!(
            out.status.success(),
            "boot userland failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
}

#[test]
fn each_program_is_a_static_non_pie_executable_without_an_interpreter() {
    for name in ["hello", "ustest"] {
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

#[test]
fn hello_reads_argv_and_envp_from_the_initial_stack_on_linux() {
    use std::os::unix::process::CommandExt;
    let out = Command::new(programs().join("hello"))
        .arg0("/bin/hello")
        .args(["a", "b c"])
        .env_clear()
        .env("HOME", "/")
        .env("TERM", "dumb")
        .output()
        .expect("runs natively");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "hello from cfslab's userland: 3 arguments\n  argv[0] = /bin/hello\n  argv[1] = a\n  \
         argv[2] = b c\n  2 environment strings\n"
    );
}

#[test]
fn ustest_passes_every_check_on_linux() {
    let out = Command::new(programs().join("ustest"))
        .output()
        .expect("runs natively");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let checks = text.lines().filter(|l| l.starts_with("ok ")).count();
    assert_eq!(checks, 12, "{text}");
    assert!(text.ends_with("ustest: all 12 checks passed\n"), "{text}");
}
