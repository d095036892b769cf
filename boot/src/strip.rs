//! Copies of ELF files without their debug information (`llvm-objcopy --strip-debug`, from
//! the pinned toolchain's `llvm-tools-preview` component): what the guest reads — the
//! kernel through the BIOS's disk calls, the user programs from the initramfs — need no
//! DWARF, and gdb reads the full files on the host. Code, data, addresses and symbols are
//! unchanged.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `llvm-objcopy` from the pinned toolchain.
fn llvm_objcopy() -> Option<PathBuf> {
    let sysroot = crate::build::sysroot().ok()?;
    std::fs::read_dir(sysroot.join("lib/rustlib"))
        .ok()?
        .filter_map(|entry| Some(entry.ok()?.path().join("bin/llvm-objcopy")))
        .find(|path| path.is_file())
}

/// Writes `elf` without its debug information to `to`, whole (`atomic_file`: several
/// runs may write the same copy at once, and others may be reading the old one).
pub fn without_debug_info(elf: &Path, to: &Path) -> Result<(), String> {
    let objcopy = llvm_objcopy().ok_or(
        "llvm-objcopy not found: the toolchain's llvm-tools-preview component is missing \
         (rustup component add llvm-tools-preview)",
    )?;
    crate::atomic_file::replace(to, |partial| {
        let status = Command::new(objcopy)
            .arg("--strip-debug")
            .arg(elf)
            .arg(partial)
            .status()?;
        match status.success() {
            true => Ok(()),
            false => Err(std::io::Error::other(format!(
                "llvm-objcopy --strip-debug {} failed",
                elf.display()
            ))),
        }
    })
}

/// `elf`'s copy without debug information in `dir`, made again if `elf` is newer.
pub fn cached_copy(elf: &Path, dir: &Path) -> Result<PathBuf, String> {
    let name = elf
        .file_name()
        .ok_or_else(|| format!("not a file: {}", elf.display()))?;
    let copy = dir.join(name);
    let modified = |p: &Path| p.metadata().and_then(|m| m.modified()).ok();
    let source = modified(elf).ok_or_else(|| format!("not found: {}", elf.display()))?;
    if modified(&copy).is_none_or(|t| t < source) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        without_debug_info(elf, &copy)?;
    }
    Ok(copy)
}
