//! What a fatal exception handler knows about the fault it caught, and the line that
//! describes it. A type of its own, apart from the entries that raise it
//! (`interrupts.rs`, which call up into `crate::trap`): the boundary reads it, and tests
//! check it, without depending on the entry code.

use core::fmt;
use x86_64::registers::control::Cr2;
use x86_64::structures::idt::PageFaultErrorCode;

/// What a fatal exception handler knows about the fault it caught.
#[derive(Debug, Clone)]
pub struct Fault {
    /// Human name, e.g. "page fault".
    pub name: &'static str,
    /// Intel's mnemonic, e.g. "#PF".
    pub mnemonic: &'static str,
    /// Interrupt vector (0–31 for exceptions).
    pub vector: u8,
    /// The error code the CPU pushed, for the exceptions that push one.
    pub error_code: Option<u64>,
    /// Where the faulting instruction is.
    pub instruction_pointer: u64,
    /// The interrupted code's stack pointer.
    pub stack_pointer: u64,
    /// A stack address inside the handler: shows which stack the handler ran on.
    pub handler_stack_pointer: u64,
    /// The linear address that caused a page fault (CR2); `None` for other exceptions.
    pub fault_address: Option<u64>,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "EXCEPTION: {} ({}, vector {})",
            self.name, self.mnemonic, self.vector
        )?;
        if let Some(code) = self.error_code {
            write!(f, " error_code={code:#x}")?;
            if self.vector == PAGE_FAULT_VECTOR {
                write!(f, " ({:?})", PageFaultErrorCode::from_bits_truncate(code))?;
            }
        }
        write!(
            f,
            " rip={:#x} rsp={:#x}",
            self.instruction_pointer, self.stack_pointer
        )?;
        if let Some(address) = self.fault_address {
            write!(f, " cr2={address:#x}")?;
        }
        Ok(())
    }
}

pub(super) const PAGE_FAULT_VECTOR: u8 = 14;

impl Fault {
    /// The address whose access caused the fault, for a page fault or the double fault a
    /// page fault can turn into (CR2 then still holds the page fault that could not be
    /// delivered, typically on a full stack).
    pub fn faulting_address(&self) -> Option<u64> {
        match self.vector {
            PAGE_FAULT_VECTOR => self.fault_address,
            8 => Some(Cr2::read_raw()),
            _ => None,
        }
    }
}
