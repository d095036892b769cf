//! Linux beside cfslab: Debian's cloud build of Linux 6.1, booted in the same QEMU with the
//! same `-icount` shift, memory and CPUs (one, or `--smp N`), running the same user programs
//! (`make compare`; also `boot linux -- PROGRAM ARGS` and `make bench`'s Linux column).
//!
//! The kernel comes from Debian's archive as the package `linux-image-cloud-amd64` depends
//! on (`apt-get download`, `dpkg -x`: nothing is installed), cached under
//! `target/linux/` with its exact version. The initramfs holds `/init` (userland's
//! `linuxinit`, which runs the program and powers off), `/dev/console` (Linux opens it for
//! init's standard streams) and the programs under `/bin`, as cfslab's does.

use crate::atomic_file;
use crate::debian::{self, run_in};
use crate::initramfs;
use crate::qemu::{self, Machine};
use crate::status::Status;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The Debian package whose dependency is the kernel: the cloud flavour (virtio and the PC's
/// basics, no modules needed for an initramfs-only boot), HZ 250.
pub const META_PACKAGE: &str = "linux-image-cloud-amd64";

/// A Linux kernel ready to boot: its bzImage and the package version it came from.
pub struct Kernel {
    pub vmlinuz: PathBuf,
    pub version: String,
}

/// The package [`META_PACKAGE`] depends on: the kernel of the archive's current 6.1 build.
fn kernel_package(dir: &Path) -> Result<String, String> {
    let depends = run_in(dir, "apt-cache", &["depends", META_PACKAGE])?;
    depends
        .lines()
        .find_map(|l| l.trim().strip_prefix("Depends: "))
        .map(str::to_string)
        .ok_or_else(|| format!("apt-cache knows no kernel package behind {META_PACKAGE}"))
}

/// The cached kernel, fetched from Debian's archive the first time.
pub fn kernel() -> Result<Kernel, String> {
    let dir = crate::build::target_dir().join("linux");
    let (vmlinuz, version_file) = (dir.join("vmlinuz"), dir.join("VERSION"));
    if let (true, Ok(version)) = (vmlinuz.is_file(), std::fs::read_to_string(&version_file)) {
        return Ok(Kernel {
            vmlinuz,
            version: version.trim().to_string(),
        });
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let package = match kernel_package(&dir) {
        Ok(package) => package,
        // A fresh machine may have no package lists yet.
        Err(_) => {
            run_in(&dir, "apt-get", &["update", "-qq"])?;
            kernel_package(&dir)?
        }
    };
    eprintln!("boot: fetching {package} from Debian's archive (once; about 27 MB)");
    let unpacked = debian::fetch(&dir, &package)?;
    let boot = unpacked.root.join("boot");
    let image = std::fs::read_dir(&boot)
        .map_err(|e| format!("{}: {e}", boot.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz-"))
        })
        .ok_or("the package holds no boot/vmlinuz-*")?;
    // The image first: a VERSION file says the image beside it is whole.
    atomic_file::copy(&image, &vmlinuz)?;
    atomic_file::write(&version_file, unpacked.version.as_bytes())?;
    Ok(Kernel {
        vmlinuz,
        version: unpacked.version.clone(),
    })
}

/// Linux's command line: the serial console, quiet, power off rather than hang on a panic,
/// and the program after ` -- ` (Linux passes those words to init; a word with whitespace
/// goes in double quotes, which Linux's `next_arg` takes off). Linux knows no escapes: a
/// backslash passes as it is, and a word holding a double quote cannot be passed whole.
pub fn command_line(program: &[String]) -> String {
    let mut line = String::from("console=ttyS0 quiet panic=-1 --");
    for word in program {
        line.push(' ');
        if word.is_empty() || word.contains(|c: char| c.is_ascii_whitespace()) {
            line.push_str(&format!("\"{word}\""));
        } else {
            line.push_str(word);
        }
    }
    line
}

/// The machine Linux boots on, set as cfslab's would be.
#[derive(Debug, Clone, Copy)]
pub struct Hardware {
    /// `Some(N)`: `-icount shift=N`; `None`: real time.
    pub icount_shift: Option<u32>,
    pub memory_mib: u32,
    /// `Some(N)`: `-smp N` (Linux finds the CPUs in the ACPI tables, as cfslab does).
    pub smp: Option<u32>,
    /// `Some`: sockets, cores, threads and NUMA nodes, as for cfslab.
    pub shape: Option<crate::shape::Shape>,
}

/// Boots Linux with `program` (argv) and returns its status (from linuxinit's RESULT line:
/// success if the program exited 0), the console's text and the kernel's version.
pub fn run(
    program: &[String],
    extra: &[PathBuf],
    hardware: Hardware,
    timeout: Duration,
    verbose: bool,
    echo: qemu::Echo,
) -> Result<(Status, String, String), String> {
    let kernel = kernel()?;
    eprintln!("boot: Linux: {}", kernel.version);
    let archive = initramfs::build_for_linux(extra)?;
    let mut machine = Machine::new(PathBuf::new());
    machine.icount_shift = hardware.icount_shift;
    machine.memory_mib = hardware.memory_mib;
    machine.smp = hardware.smp;
    machine.shape = hardware.shape;
    machine.linux = Some(qemu::LinuxBoot {
        kernel: kernel.vmlinuz,
        initrd: archive,
        append: command_line(program),
    });
    if verbose {
        eprintln!("boot: {}", machine.command_line());
    }
    let (status, _, output) = qemu::run(&machine, Some(timeout), echo)?;
    if status == Status::Timeout {
        return Ok((status, output, kernel.version));
    }
    Ok((exit_status(&output), output, kernel.version))
}

/// Success if linuxinit reported the program's exit status 0; no report if it said nothing.
pub fn exit_status(output: &str) -> Status {
    match output
        .lines()
        .find_map(|l| l.trim().strip_prefix("RESULT {\"kind\":\"exit\""))
    {
        Some(rest) if rest.contains("\"status\":0,") => Status::Success,
        Some(_) => Status::Failure,
        None => Status::NoReport,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_follows_the_double_dash() {
        let argv = ["/bin/microbench".to_string(), "x".to_string()];
        assert_eq!(
            command_line(&argv),
            "console=ttyS0 quiet panic=-1 -- /bin/microbench x"
        );
    }

    #[test]
    fn the_status_comes_from_the_exit_line() {
        let ok = "x\nRESULT {\"kind\":\"exit\",\"argv\":[\"/bin/a\"],\"pid\":2,\"status\":0,\"signal\":null}\n";
        assert_eq!(exit_status(ok), Status::Success);
        assert_eq!(
            exit_status(&ok.replace("\"status\":0", "\"status\":10")),
            Status::Failure
        );
        assert_eq!(exit_status("panic"), Status::NoReport);
    }
}
