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

/// Which cargo profile the kernel is built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// `run`, the lab and the tests: our code unoptimised, the policy optimised.
    Dev,
    /// `--release`: everything optimised.
    Release,
    /// `gdb`: the policy unoptimised too, to step through it (see Cargo.toml).
    Gdb,
}

impl Profile {
    /// Cargo's name for it, which is also its output directory's.
    fn name(self) -> &'static str {
        match self {
            Profile::Dev => "dev",
            Profile::Release => "release",
            Profile::Gdb => "gdb",
        }
    }

    fn dir(self) -> &'static str {
        match self {
            Profile::Dev => "debug",
            other => other.name(),
        }
    }
}

/// Builds the kernel and returns the path of its ELF.
pub fn build_kernel(profile: Profile) -> Result<PathBuf, String> {
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
        "--profile",
        profile.name(),
    ]);
    let status = command
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("building the kernel failed (cargo's messages are above)".into());
    }
    Ok(target_dir()
        .join("x86_64-unknown-none")
        .join(profile.dir())
        .join("kernel"))
}

/// The pinned toolchain's sysroot (`rustc --print sysroot` in the workspace, where
/// rust-toolchain.toml applies): Rust's gdb pretty-printers live under it.
pub fn sysroot() -> Result<PathBuf, String> {
    let output = Command::new("rustc")
        .current_dir(workspace_root())
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    if !output.status.success() {
        return Err("rustc --print sysroot failed".into());
    }
    Ok(PathBuf::from(
        String::from_utf8_lossy(&output.stdout).trim(),
    ))
}
