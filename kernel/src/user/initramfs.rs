//! The initramfs: a cpio "newc" archive (Linux's initramfs format, see
//! Documentation/driver-api/early-userspace/buffer-format.rst) that the boot tool packs with
//! the user programs and hands over through fw_cfg (`opt/cfslab/initramfs`). `execve` finds
//! `/bin/NAME` in it.
//!
//! Each entry: the magic "070701", thirteen 8-digit hex fields (the 7th is the file size,
//! the 12th the name size), the name with its NUL, padding to 4 bytes, the data, padding
//! to 4 bytes. The entry named "TRAILER!!!" ends the archive.
//!
//! Hard links (busybox's applets, one program under many names) are entries of one inode
//! number (the 1st field) with a link count (the 5th) above one; one of them holds the data
//! and the others are empty, as GNU cpio writes them. Each name gets the data.

use alloc::vec::Vec;
use spin::Once;

static ARCHIVE: Once<Vec<u8>> = Once::new();
/// The archive's entries, (name, data), read once: `execve` looks names up here rather
/// than parsing the headers again.
static INDEX: Once<Vec<(&'static [u8], &'static [u8])>> = Once::new();

/// Reads the archive from fw_cfg, if the boot tool passed one (once, at boot).
pub fn init() {
    let archive = ARCHIVE
        .call_once(|| crate::arch::fw_cfg::read_whole("opt/cfslab/initramfs").unwrap_or_default());
    INDEX.call_once(|| index(archive));
}

/// The archive's (name, data), each hard link given its inode's data.
fn index(archive: &[u8]) -> Vec<(&[u8], &[u8])> {
    let all: Vec<Entry> = entries(archive).collect();
    let data_of = |inode: usize| {
        all.iter()
            .find(|e| e.inode == inode && !e.data.is_empty())
            .map_or(&[][..], |e| e.data)
    };
    all.iter()
        .map(|e| {
            let linked = e.links > 1 && e.data.is_empty();
            (e.name, if linked { data_of(e.inode) } else { e.data })
        })
        .collect()
}

/// One entry of the archive.
pub struct Entry<'a> {
    pub name: &'a [u8],
    pub data: &'a [u8],
    inode: usize,
    links: usize,
}

fn hex(field: &[u8]) -> Option<usize> {
    let text = core::str::from_utf8(field).ok()?;
    usize::from_str_radix(text, 16).ok()
}

/// The entries of `archive`, in order.
pub fn entries(archive: &[u8]) -> impl Iterator<Item = Entry<'_>> {
    let mut at = 0;
    core::iter::from_fn(move || {
        let header = archive.get(at..at + 110)?;
        if &header[..6] != b"070701" {
            return None;
        }
        let inode = hex(&header[6..14])?;
        let links = hex(&header[38..46])?;
        let file_size = hex(&header[54..62])?;
        let name_size = hex(&header[94..102])?;
        let name_at = at + 110;
        let name = archive.get(name_at..name_at + name_size.checked_sub(1)?)?;
        let data_at = (name_at + name_size).next_multiple_of(4);
        let data = archive.get(data_at..data_at + file_size)?;
        at = (data_at + file_size).next_multiple_of(4);
        (name != b"TRAILER!!!").then_some(Entry {
            name,
            data,
            inode,
            links,
        })
    })
}

/// The contents of the file at `path` (absolute, e.g. `/bin/hello`).
pub fn find(path: &[u8]) -> Option<&'static [u8]> {
    let name = path.strip_prefix(b"/")?;
    INDEX
        .get()?
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, data)| data)
}

/// Every entry of the archive, (name without the leading `/`, data), in the archive's
/// order: the file tree at `/` (`user::fs`).
pub fn files() -> &'static [(&'static [u8], &'static [u8])] {
    INDEX.get().map_or(&[], Vec::as_slice)
}

/// Whether the boot tool passed an archive.
pub fn present() -> bool {
    ARCHIVE.get().is_some_and(|a| !a.is_empty())
}
