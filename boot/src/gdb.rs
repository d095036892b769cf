//! Debugging the kernel with gdb: QEMU starts paused with a gdb stub, and gdb gets a script
//! that connects, loads the kernel's symbols at the address the bootloader will load it, and
//! sets a *hardware* breakpoint at the kernel's entry.
//!
//! Two facts shape the script. The kernel ELF is position-independent and the bootloader
//! loads it at `KERNEL_BASE` (pinned in kernel/src/lib.rs), so the symbols need that offset.
//! And the bootloader copies the kernel into memory after gdb has attached, overwriting any
//! software breakpoint (an `int3` byte) planted earlier; a hardware breakpoint (a debug
//! register) survives the copy.

use std::path::{Path, PathBuf};

/// Mirrors `kernel::KERNEL_BASE`; the gdb system test fails if the two disagree.
pub const KERNEL_BASE: u64 = 0x100_0000_0000;
/// The kernel's entry function (kernel/src/main.rs).
pub const ENTRY_SYMBOL: &str = "kernel::kernel_main";
/// gdb's customary port for QEMU's stub (`-s`); override with `--port`.
pub const DEFAULT_PORT: u16 = 1234;

/// The gdb commands that attach to QEMU on `port` and stop at the kernel's entry.
pub fn script(kernel: &Path, port: u16) -> String {
    format!(
        "set pagination off\n\
         set confirm off\n\
         symbol-file {kernel} -o {KERNEL_BASE:#x}\n\
         target remote 127.0.0.1:{port}\n\
         hbreak {ENTRY_SYMBOL}\n\
         continue\n",
        kernel = kernel.display()
    )
}

/// Writes the script under `target/cfslab/` and returns its path.
pub fn write_script(target_dir: &Path, kernel: &Path, port: u16) -> Result<PathBuf, String> {
    let dir = target_dir.join("cfslab");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join("kernel.gdb");
    std::fs::write(&path, script(kernel, port))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
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
        let s = script(Path::new("/k/kernel"), 4242);
        assert!(s.contains("target remote 127.0.0.1:4242\n"));
        assert!(s.contains("symbol-file /k/kernel -o 0x10000000000\n"));
        assert!(s.contains("hbreak kernel::kernel_main\n"));
        // The breakpoint must be set before execution continues.
        assert!(s.find("hbreak").unwrap() < s.find("continue").unwrap());
    }
}
