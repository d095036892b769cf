//! Building the kernel for `run` and `gdb`: a nested `cargo build` of the `kernel` package
//! for x86_64-unknown-none. Cargo makes it a no-op when nothing changed, so `make run
//! OPTS=...` with new options boots at once.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root (the boot crate sits one level below it).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("boot/ has a parent")
        .to_path_buf()
}

/// Where cargo puts build outputs: `CARGO_TARGET_DIR` if set, else `<root>/target`.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace_root().join("target"), PathBuf::from)
}

/// Builds the kernel and returns the path of its ELF.
pub fn build_kernel(release: bool) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.current_dir(workspace_root()).args([
        "build",
        "--quiet",
        "-p",
        "kernel",
        "--bin",
        "kernel",
        "--target",
        "x86_64-unknown-none",
    ]);
    if release {
        command.arg("--release");
    }
    let status = command
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("building the kernel failed (cargo's messages are above)".into());
    }
    let profile = if release { "release" } else { "debug" };
    Ok(target_dir()
        .join("x86_64-unknown-none")
        .join(profile)
        .join("kernel"))
}
