//! The bootable disk image: the kernel ELF wrapped by the `bootloader` crate into a BIOS
//! (MBR) disk image, written next to the ELF as `<elf>.img` and kept there, so it can be
//! booted again with plain `qemu-system-x86_64 -drive format=raw,file=...`.
//!
//! BIOS rather than UEFI: no firmware download, half the build, and the legacy PIC works.
//!
//! The image holds a copy of the kernel *without debug info* (`llvm-objcopy --strip-debug`):
//! the BIOS stage reads the kernel through real-mode disk calls, and a debug kernel's 4 MB of
//! DWARF would more than double the time to the boot banner. Code and addresses are
//! unchanged, so gdb still uses the full ELF for symbols.

use bootloader::{BiosBoot, BootConfig};
use std::path::{Path, PathBuf};

/// The image path for a kernel ELF.
pub fn image_path(kernel: &Path) -> PathBuf {
    with_suffix(kernel, ".img")
}

/// The bootloader's runtime configuration: silent. Its log would otherwise interleave with
/// the kernel's output on the serial line that tests and users read.
fn quiet_boot_config() -> BootConfig {
    let mut config = BootConfig::default();
    config.serial_logging = false;
    config.frame_buffer_logging = false;
    config.log_level = bootloader_boot_config::LevelFilter::Off;
    config
}

/// `path` with `suffix` appended to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// A copy of `kernel` without debug info, next to it; the original if that fails.
fn stripped_copy(kernel: &Path) -> PathBuf {
    let stripped = with_suffix(kernel, ".stripped");
    match crate::strip::without_debug_info(kernel, &stripped) {
        Ok(()) => stripped,
        Err(e) => {
            eprintln!("boot: warning: {e}; the image carries debug info (slower boot)");
            kernel.to_path_buf()
        }
    }
}

/// Writes the image for `kernel` unless an up-to-date one exists; returns its path.
pub fn build_image(kernel: &Path) -> Result<PathBuf, String> {
    let image = image_path(kernel);
    let modified = |p: &Path| p.metadata().and_then(|m| m.modified()).ok();
    let kernel_time =
        modified(kernel).ok_or_else(|| format!("kernel not found: {}", kernel.display()))?;
    if modified(&image).is_some_and(|t| t >= kernel_time) {
        return Ok(image);
    }
    // Whole (`atomic_file`): several test processes may build the same image at once.
    let stripped = stripped_copy(kernel);
    crate::atomic_file::replace(&image, |partial| {
        BiosBoot::new(&stripped)
            .set_boot_config(&quiet_boot_config())
            .create_disk_image(partial)
            .map_err(|e| std::io::Error::other(format!("{e:#}")))
    })?;
    Ok(image)
}
