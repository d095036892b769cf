//! QEMU's firmware configuration device (fw_cfg), the way boot options reach the kernel.
//!
//! The host passes `-fw_cfg name=opt/cfslab/cmdline,string=...`; the guest finds that file in
//! fw_cfg's directory and reads it byte by byte through two I/O ports (QEMU's
//! docs/specs/fw_cfg.rst). Changing options therefore never needs a rebuilt image.
//!
//! The protocol: write a 16-bit *selector* to port 0x510, then read the selected item from
//! port 0x511 one byte at a time. Item 0x0000 is the signature "QEMU"; item 0x0019 is the file
//! directory: a big-endian u32 count, then 64-byte entries (big-endian u32 size, big-endian
//! u16 selector, u16 reserved, 56-byte NUL-terminated name).

use x86_64::instructions::port::Port;

const SELECTOR_PORT: u16 = 0x510;
const DATA_PORT: u16 = 0x511;
const SIGNATURE_KEY: u16 = 0x0000;
const FILE_DIR_KEY: u16 = 0x0019;
const NAME_LEN: usize = 56;

/// Why a fw_cfg file could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FwCfgError {
    /// The file is larger than the caller's buffer.
    TooLarge { size: usize, capacity: usize },
}

fn select(key: u16) {
    // SAFETY: 0x510 is fw_cfg's selector port on QEMU's PC machine; selecting an item only
    // changes which item the data port returns.
    unsafe { Port::new(SELECTOR_PORT).write(key) };
}

/// Reads `buf.len()` bytes of the selected item with one string instruction (`rep insb`): a
/// loop of `inb` costs tens of instructions a byte in an unoptimised kernel, and the
/// initramfs of every run is megabytes long (seconds of virtual time at `-icount shift=2`).
fn read_bytes(buf: &mut [u8]) {
    // SAFETY: `rep insb` writes exactly rcx = buf.len() bytes from the data port to rdi =
    // the start of `buf`, which is ours to write; the direction flag is clear (the ABI
    // guarantees it), so it writes upwards. Reading the data port only advances fw_cfg's
    // offset in the selected item.
    unsafe {
        core::arch::asm!(
            "rep insb",
            in("dx") DATA_PORT,
            inout("rdi") buf.as_mut_ptr() => _,
            inout("rcx") buf.len() => _,
            options(nostack, preserves_flags)
        );
    }
}

fn read_be_u32() -> u32 {
    let mut bytes = [0; 4];
    read_bytes(&mut bytes);
    u32::from_be_bytes(bytes)
}

fn read_be_u16() -> u16 {
    let mut bytes = [0; 2];
    read_bytes(&mut bytes);
    u16::from_be_bytes(bytes)
}

/// Is a fw_cfg device present? (Its signature item reads "QEMU".)
pub fn is_present() -> bool {
    select(SIGNATURE_KEY);
    let mut signature = [0; 4];
    read_bytes(&mut signature);
    &signature == b"QEMU"
}

/// Looks up `name` in the fw_cfg directory: `Some((selector, size))` if present.
fn find(name: &str) -> Option<(u16, usize)> {
    if !is_present() {
        return None;
    }
    select(FILE_DIR_KEY);
    let count = read_be_u32();
    for _ in 0..count {
        let size = read_be_u32() as usize;
        let selector = read_be_u16();
        let _reserved = read_be_u16();
        let mut raw_name = [0u8; NAME_LEN];
        read_bytes(&mut raw_name);
        let len = raw_name.iter().position(|&b| b == 0).unwrap_or(NAME_LEN);
        if &raw_name[..len] == name.as_bytes() {
            return Some((selector, size));
        }
    }
    None
}

/// Reads the fw_cfg file `name` into `buf`: `Ok(Some(len))` with its length, `Ok(None)` if
/// there is no such file (or no fw_cfg device), an error if it does not fit.
pub fn read_file(name: &str, buf: &mut [u8]) -> Result<Option<usize>, FwCfgError> {
    let Some((selector, size)) = find(name) else {
        return Ok(None);
    };
    if size > buf.len() {
        return Err(FwCfgError::TooLarge {
            size,
            capacity: buf.len(),
        });
    }
    select(selector);
    read_bytes(&mut buf[..size]);
    Ok(Some(size))
}

/// Reads the whole fw_cfg file `name` into a new buffer (`None` if there is none).
pub fn read_whole(name: &str) -> Option<alloc::vec::Vec<u8>> {
    let (selector, size) = find(name)?;
    let mut buf = alloc::vec![0; size];
    select(selector);
    read_bytes(&mut buf);
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test_case]
    fn qemu_signature_is_present() {
        assert!(is_present());
    }

    #[test_case]
    fn a_missing_file_reads_as_none() {
        let mut buf = [0u8; 8];
        assert_eq!(read_file("opt/cfslab/no-such-file", &mut buf), Ok(None));
    }

    #[test_case]
    fn a_standard_file_is_listed_and_read() {
        // QEMU's PC machine always exports "etc/e820" (its memory map, 20-byte entries).
        let mut buf = [0u8; 512];
        let len = read_file("etc/e820", &mut buf)
            .unwrap()
            .expect("etc/e820 listed");
        assert!(len > 0 && len.is_multiple_of(20), "etc/e820 length {len}");
    }

    #[test_case]
    fn a_file_larger_than_the_buffer_is_an_error() {
        let mut buf = [0u8; 4];
        assert!(matches!(
            read_file("etc/e820", &mut buf),
            Err(FwCfgError::TooLarge { .. })
        ));
    }
}
