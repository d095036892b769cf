//! The boot tool's exit statuses (DESIGN.md's contract) and how QEMU's exit status maps to
//! them.
//!
//! The kernel ends a run by writing a value `v` to QEMU's isa-debug-exit device, and QEMU
//! exits with `(v << 1) | 1`. The kernel's values (kernel/src/lib.rs, `ExitCode`) are 0x10
//! success, 0x11 failure and 0x12 bad options, hence QEMU statuses 33, 35 and 37. Any other
//! QEMU status means the kernel never reported: QEMU's own error (1), or a triple fault,
//! which `-no-reboot` turns into a clean QEMU exit (0).

use std::fmt;

/// How a run ended, as the boot tool's exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// 0: the kernel reported success.
    Success = 0,
    /// 1: the kernel reported failure (a failed test, a panic, a fatal exception).
    Failure = 1,
    /// 1 too: the program after ` -- ` ended with a status other than 0, or by a signal;
    /// the kernel itself is fine (the boot tool says which program and how it ended).
    ProgramFailed = 65,
    /// 2: the kernel rejected its boot options.
    BadOptions = 2,
    /// 3: the run did not end within the timeout and QEMU was killed.
    Timeout = 3,
    /// 4: QEMU ended without a report from the kernel (triple fault, QEMU error).
    NoReport = 4,
    /// 5: the host side failed before booting (kernel build, disk image, QEMU not found).
    HostError = 5,
    /// 6: `run --repeat K`: the runs' outputs differ (the boot tool prints the first line
    /// that does).
    NotRepeated = 6,
    /// 64: the boot tool was called wrongly (EX_USAGE).
    Usage = 64,
}

/// QEMU's exit statuses for the kernel's three isa-debug-exit values.
pub const QEMU_SUCCESS: i32 = (0x10 << 1) | 1;
pub const QEMU_FAILURE: i32 = (0x11 << 1) | 1;
pub const QEMU_BAD_OPTIONS: i32 = (0x12 << 1) | 1;

impl Status {
    /// Maps QEMU's exit status (`None` if it was killed by a signal).
    pub fn from_qemu(code: Option<i32>) -> Status {
        match code {
            Some(QEMU_SUCCESS) => Status::Success,
            Some(QEMU_FAILURE) => Status::Failure,
            Some(QEMU_BAD_OPTIONS) => Status::BadOptions,
            _ => Status::NoReport,
        }
    }

    pub fn code(self) -> i32 {
        match self {
            Status::ProgramFailed => Status::Failure as i32,
            other => other as i32,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Success => "success",
            Status::Failure => "the kernel reported a failure",
            Status::ProgramFailed => "the program failed",
            Status::BadOptions => "the kernel rejected its boot options",
            Status::Timeout => "timed out",
            Status::NoReport => "QEMU ended without a report from the kernel",
            Status::HostError => "host-side error",
            Status::NotRepeated => "the runs differ",
            Status::Usage => "usage error",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qemu_statuses_map_to_the_contract() {
        assert_eq!(Status::from_qemu(Some(33)), Status::Success);
        assert_eq!(Status::from_qemu(Some(35)), Status::Failure);
        assert_eq!(Status::from_qemu(Some(37)), Status::BadOptions);
        // QEMU's own errors, and a triple fault under -no-reboot, are not success.
        assert_eq!(Status::from_qemu(Some(0)), Status::NoReport);
        assert_eq!(Status::from_qemu(Some(1)), Status::NoReport);
        assert_eq!(Status::from_qemu(None), Status::NoReport);
    }
}
