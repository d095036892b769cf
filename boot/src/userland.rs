//! Building the user programs that go into the initramfs under `/bin`: the Rust programs of
//! `userland/` (its own cargo workspace, see userland/Cargo.toml) and the C programs of
//! `userland/c/`, each compiled with `musl-gcc -static` into a static, non-PIE executable —
//! the same files run natively on the host's Linux.

use crate::build::workspace_root;
use std::path::PathBuf;
use std::process::Command;

/// The Rust programs userland/ builds.
pub const RUST_PROGRAMS: [&str; 24] = [
    "hello",
    "ustest",
    "crash",
    "perms",
    "forkbomb",
    "fuzz",
    "poweroff",
    "microbench",
    "churn",
    "linuxinit",
    "together",
    // The shell and its utilities (userland/shell).
    "sh",
    "cat",
    "ls",
    "ps",
    "top",
    // The seed experiments' workloads (userland/workloads): the lab's scenarios run them.
    "sched_py",
    "sleeper",
    "lat3",
    "wakeup_latency",
    "makej",
    "job",
    "hog",
    "pipe_pingpong",
];

/// The C programs, `userland/c/NAME.c` each.
pub const C_PROGRAMS: [&str; 14] = [
    "ctest",
    "cthreads",
    "hostile",
    "ccalls",
    "csignals",
    "cjobs",
    "cfaults",
    "cqueue",
    "csmp",
    "craces",
    "smpbench",
    "wasted",
    "chotplug",
    "messaging",
];

/// C programs built from one source with other flags: the binary's name, the source's
/// (`userland/c/SOURCE.c`) and the compiler's extra options. microbench execs these to
/// measure what an `execve` of a static musl C program costs, and how that grows with a
/// megabyte more of initialised data, of read-only data, or of zeroed data.
pub const C_VARIANTS: [(&str, &str, &[&str]); 4] = [
    ("cexit", "cexit", &[]),
    ("cexit-data", "cexit", &["-DPAD_DATA", "-DPAD_KIB=1024"]),
    ("cexit-rodata", "cexit", &["-DPAD_RODATA", "-DPAD_KIB=1024"]),
    ("cexit-bss", "cexit", &["-DPAD_BSS", "-DPAD_KIB=1024"]),
];

/// Every program packed under `/bin`.
pub fn programs() -> impl Iterator<Item = &'static str> {
    RUST_PROGRAMS
        .into_iter()
        .chain(C_PROGRAMS)
        .chain(C_VARIANTS.iter().map(|(name, _, _)| *name))
}

/// Builds the user programs and returns the directory that holds them all. Cargo reads
/// userland/.cargo/config.toml (target, code model, image base) from the working directory,
/// so its build runs there.
pub fn build() -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let userland = workspace_root().join("userland");
    let status = Command::new(cargo)
        .current_dir(&userland)
        .args(["build", "--quiet"])
        // The userland workspace has its own target directory (in its config); an outer
        // CARGO_TARGET_DIR must not redirect it.
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("building the user programs failed (cargo's messages are above)".into());
    }
    let dir = dir();
    for name in C_PROGRAMS {
        compile_c(name, name, &[], &dir)?;
    }
    for (name, source, flags) in C_VARIANTS {
        compile_c(name, source, flags, &dir)?;
    }
    Ok(dir)
}

/// The checkout's own directory, as the C programs' debug information names it instead
/// (`-ffile-prefix-map`): a stable name, so that they are the same bytes in every checkout,
/// as the Rust programs are by their profiles' `trim-paths` (userland/Cargo.toml). The
/// initramfs carries them whole; a longer path meant longer sections, other addresses in
/// the archive the kernel unpacks, and figures under `-icount` that differed from one clone
/// of a commit to another (seen: a CI clone's seed 003 against the same commit's elsewhere).
const CHECKOUT_AS: &str = "/cfslab";

/// Where the user programs are built (userland/.cargo/config.toml's target directory).
pub fn dir() -> PathBuf {
    workspace_root().join("target/userland/x86_64-unknown-none/debug")
}

/// Compiles `userland/c/SOURCE.c` with `flags` into `dir/NAME`, unless the binary is newer
/// than the source, the header they share (`check.h`) and this tool (which holds the
/// compiler's options: a binary built with others is built again).
fn compile_c(
    name: &str,
    source: &str,
    flags: &[&str],
    dir: &std::path::Path,
) -> Result<(), String> {
    let source = workspace_root()
        .join("userland/c")
        .join(format!("{source}.c"));
    let binary = dir.join(name);
    let header = workspace_root().join("userland/c/check.h");
    let modified = |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let tool = std::env::current_exe().ok();
    if let (Some(src), Some(h), Some(tool), Some(bin)) = (
        modified(&source),
        modified(&header),
        tool.as_deref().and_then(modified),
        modified(&binary),
    ) && bin > src
        && bin > h
        && bin > tool
    {
        return Ok(());
    }
    // Linked beside its name and renamed whole (`atomic_file`): another run may be reading
    // the old binary. The compiler's own complaint is what the caller sees.
    let mut failure = None;
    let written = crate::atomic_file::replace(&binary, |partial| {
        let linked = link_c(&source, flags, partial);
        linked.map_err(|message| {
            failure = Some(message);
            std::io::Error::other("musl-gcc failed")
        })
    });
    failure.map_or(written, Err)
}

/// Compiles and links `source` with `flags` into `output`: what the first message of an
/// error says is musl-gcc's own.
fn link_c(
    source: &std::path::Path,
    flags: &[&str],
    output: &std::path::Path,
) -> Result<(), String> {
    let compiled = Command::new("musl-gcc")
        // From the checkout, whatever the caller's directory: the compiler's own directory
        // goes into the debug information too.
        .current_dir(workspace_root())
        .args(["-static", "-O2", "-g", "-Wall", "-Werror"])
        // Its debug information names the source's directory (see `CHECKOUT_AS`).
        .arg(format!(
            "-ffile-prefix-map={}={CHECKOUT_AS}",
            workspace_root().display()
        ))
        .args(flags)
        .arg("-o")
        .arg(output)
        .arg(source)
        .output()
        .map_err(|e| {
            format!(
                "cannot run musl-gcc for {} ({e}): install Debian's musl-tools \
                 (`make deps` does, as root)",
                source.display()
            )
        })?;
    if !compiled.status.success() {
        return Err(format!(
            "musl-gcc failed on {}:\n{}",
            source.display(),
            String::from_utf8_lossy(&compiled.stderr)
        ));
    }
    Ok(())
}
