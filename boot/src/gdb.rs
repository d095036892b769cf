//! Debugging the kernel with gdb: QEMU starts paused with a gdb stub, and gdb gets a script
//! that connects, loads the kernel's symbols at the address the bootloader will load it, loads
//! Rust's pretty-printers and cfslab's helper commands (`cfslab-ps`, `cfslab-rq`,
//! `cfslab-trace N`, in boot/gdb/cfslab.py), and sets a *hardware* breakpoint at the entry.
//!
//! Three facts shape the session. The kernel ELF is position-independent and the bootloader
//! loads it at `KERNEL_BASE` (pinned in kernel/src/lib.rs), so the symbols need that offset.
//! The bootloader copies the kernel into memory after gdb has attached, overwriting any
//! software breakpoint (an `int3` byte) planted earlier; a hardware breakpoint (a debug
//! register) survives the copy. And the clock: under `-icount shift=0,sleep=off` (the run's
//! default) virtual time advances only by instructions, or leaps to the next timer when the
//! CPU idles. Stopping at breakpoints upsets that bookkeeping — successive stops in the
//! policy's tick read `now` as 11 ms, 38 ms, 762 ms, then 13 hours — and after the breakpoint
//! is deleted the idle CPU finds no timer to leap to (QEMU: "icount sleep disabled and no
//! active timers") and the kernel never runs again. `make gdb` therefore runs with
//! `sleep=on`: idle time passes in host time, busy time stays instruction-counted, and stops
//! one tick apart read `now` one tick apart (kernels.md §9; tests/tests/gdb.rs).

use std::path::{Path, PathBuf};

/// Mirrors `kernel::KERNEL_BASE`; the gdb system test fails if the two disagree.
pub const KERNEL_BASE: u64 = 0xffff_ffff_8000_0000;
/// The kernel's entry function (kernel/src/main.rs).
pub const ENTRY_SYMBOL: &str = "kernel::kernel_main";
/// gdb's customary port for QEMU's stub (`-s`); override with `--port`.
pub const DEFAULT_PORT: u16 = 1234;
/// cfslab's gdb commands, written beside the script.
const HELPERS: &str = include_str!("../gdb/cfslab.py");

/// The gdb commands that attach to QEMU on `port` and stop at the kernel's entry. `sysroot`
/// is the toolchain's, whose pretty-printers show `Vec`s, `String`s and `Option`s as values.
pub fn script(kernel: &Path, port: u16, sysroot: &Path, helpers: &Path) -> String {
    let printers = sysroot.join("lib/rustlib/etc/gdb_load_rust_pretty_printers.py");
    let userland = crate::userland::dir();
    // The builds name their sources relative to their workspace (`trim-paths`, Cargo.toml):
    // the kernel's to the checkout, the user programs' to userland/.
    let root = crate::build::workspace_root();
    format!(
        "set pagination off\n\
         set confirm off\n\
         directory {root}\n\
         directory {root}/userland\n\
         set $cfslab_userland = \"{userland}\"\n\
         source {printers}\n\
         source {helpers}\n\
         exec-file {kernel}\n\
         symbol-file {kernel} -o {KERNEL_BASE:#x}\n\
         target remote 127.0.0.1:{port}\n\
         hbreak {ENTRY_SYMBOL}\n\
         continue\n",
        printers = printers.display(),
        helpers = helpers.display(),
        userland = userland.display(),
        kernel = kernel.display(),
        root = root.display()
    )
}

/// Writes the script (`kernel-PORT.gdb`) and the helpers under `target/cfslab/`; returns
/// the script's path.
pub fn write_script(
    target_dir: &Path,
    kernel: &Path,
    port: u16,
    sysroot: &Path,
) -> Result<PathBuf, String> {
    let dir = target_dir.join("cfslab");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        // Unchanged files are left alone: another session may be reading them.
        if std::fs::read_to_string(&path).is_ok_and(|old| old == text) {
            return Ok(path);
        }
        std::fs::write(&path, text)
            .map(|()| path.clone())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    let helpers = write("cfslab.py", HELPERS)?;
    // One script per port: two sessions at once (the system tests run two) must not
    // overwrite each other's.
    write(
        &format!("kernel-{port}.gdb"),
        &script(kernel, port, sysroot, &helpers),
    )
}

/// The command that attaches gdb using the script.
pub fn command_line(script: &Path) -> String {
    format!(
        "gdb -q -x {}",
        crate::qemu::shell_quote(&script.display().to_string())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_offsets_symbols_and_uses_a_hardware_breakpoint() {
        let s = script(
            Path::new("/k/kernel"),
            4242,
            Path::new("/sysroot"),
            Path::new("/t/cfslab.py"),
        );
        assert!(s.contains("target remote 127.0.0.1:4242\n"));
        assert!(s.contains("symbol-file /k/kernel -o 0xffffffff80000000\n"));
        assert!(s.contains("hbreak kernel::kernel_main\n"));
        assert!(s.contains("source /sysroot/lib/rustlib/etc/gdb_load_rust_pretty_printers.py\n"));
        assert!(s.contains("source /t/cfslab.py\n"));
        // The breakpoint must be set before execution continues.
        assert!(s.find("hbreak").unwrap() < s.find("continue").unwrap());
    }
}
