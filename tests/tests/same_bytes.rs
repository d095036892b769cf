//! A build's output is the same bytes on every machine: what the guest loads names no
//! directory of the machine that built it. Under `-icount` a run's figures follow every
//! byte the kernel loads, so a build that carried its machine's paths gave another
//! machine other figures (docs/kernel.md, "Several CPUs").

use std::process::Command;
use systests::user_programs as programs;

/// What the guest loads is the same bytes on every machine: no user program and not the
/// kernel names a directory of the machine it was built on — the checkout's, cargo's home
/// (the registry's crates) or the toolchain's (Rust's library). Panic messages and debug
/// information name source files; with a machine's directories in them, a longer home or a
/// deeper checkout made the files longer, moved what the kernel loads and unpacks, and a
/// multi-CPU run under `-icount` interleaved otherwise on another machine than here (seen:
/// CI's runs of a Wasted Cores scenario against this machine's, same commit). The builds
/// trim those paths (`trim-paths` in both workspaces' profiles; `-ffile-prefix-map` for C).
#[test]
fn nothing_the_guest_loads_names_the_machine_it_was_built_on() {
    let root = systests::workspace_root();
    let directories = [
        root.display().to_string(),
        cargo_home(),
        toolchain_sysroot(&root),
    ];
    let mut binaries: Vec<std::path::PathBuf> = std::fs::read_dir(programs())
        .expect("the programs' directory")
        .map(|entry| entry.expect("an entry").path())
        // Executables only: cargo's own files have extensions (dependency lists, libraries)
        // or are hidden (its lock).
        .filter(|path| path.is_file() && path.extension().is_none())
        .filter(|path| {
            !path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    // Every program: the Rust ones and the C ones (and their variants).
    assert!(binaries.len() >= 40, "only {} programs", binaries.len());
    binaries.push(release_kernel(&root));
    for path in &binaries {
        let bytes = std::fs::read(path).expect("readable");
        assert!(bytes.starts_with(b"\x7fELF"), "{}", path.display());
        for directory in &directories {
            let named = bytes
                .windows(directory.len())
                .any(|w| w == directory.as_bytes());
            assert!(!named, "{} holds {directory}", path.display());
        }
    }
}

/// Cargo's home: `CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> String {
    std::env::var("CARGO_HOME")
        .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").expect("HOME is set")))
}

/// The pinned toolchain's directory (rust-toolchain.toml applies in the checkout).
fn toolchain_sysroot(root: &std::path::Path) -> String {
    let out = Command::new("rustc")
        .current_dir(root)
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc runs");
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .trim()
        .to_string()
}

/// The optimised kernel's ELF, built as `make run` builds it.
fn release_kernel(root: &std::path::Path) -> std::path::PathBuf {
    let status = Command::new(env!("CARGO"))
        .current_dir(root)
        .args(["build", "--quiet", "-p", "kernel", "--bin", "kernel"])
        .args(["--target", "x86_64-unknown-none", "--release"])
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the kernel builds");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), Into::into);
    target.join("x86_64-unknown-none/release/kernel")
}
