//! The page cache, in miniature: the frames holding pages of the initramfs's files that
//! programs map read-only (their code and constants), kept after the programs go so the
//! next `execve` of the same file maps them again instead of zeroing and copying a fresh
//! frame per page — Linux's page cache, which makes its `execve` map a binary's text rather
//! than read it. A cached frame is one of its owners in [`super::shares::Shares`]; each
//! process mapping it is another, so a frame outlives every mapping until the cache lets go
//! ([`super::Memory::drop_page_cache`], Linux's `drop_caches`).
//!
//! What it does not do: write back (the files are read-only), evict under memory pressure
//! (it holds at most the read-only pages of the files exec'd, bounded by the initramfs's
//! size), or cache writable pages (each process gets its own copy of those).

use crate::arch::paging::PhysFrame;
use alloc::collections::BTreeMap;

/// A file's page: where the file's bytes start in memory (the initramfs is loaded once for
/// the whole boot, so this names the file) and the page's index in the file.
type Key = (usize, u64);

#[derive(Default)]
pub struct PageCache {
    pages: BTreeMap<Key, PhysFrame>,
}

impl PageCache {
    pub const fn new() -> Self {
        PageCache {
            pages: BTreeMap::new(),
        }
    }

    /// The cached frame of page `index` of `file`, if it is cached.
    pub fn get(&self, file: &'static [u8], index: u64) -> Option<PhysFrame> {
        self.pages.get(&(file.as_ptr() as usize, index)).copied()
    }

    /// Keeps `frame` as page `index` of `file`.
    pub fn insert(&mut self, file: &'static [u8], index: u64, frame: PhysFrame) {
        self.pages.insert((file.as_ptr() as usize, index), frame);
    }

    /// Forgets every page, handing their frames to `release` (the cache's share of each).
    pub fn clear(&mut self, mut release: impl FnMut(PhysFrame)) {
        for frame in core::mem::take(&mut self.pages).into_values() {
            release(frame);
        }
    }

    /// How many pages are cached.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Whether no page is cached.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }
}

/// The bytes of page `index` of `file` as a frame holds them: the file's bytes from
/// `index * 4096`, zero past its end.
pub fn fill(frame: &mut [u8; 4096], file: &[u8], index: u64) {
    let start = usize::try_from(index * 4096)
        .unwrap_or(usize::MAX)
        .min(file.len());
    let bytes = &file[start..file.len().min(start + 4096)];
    frame[..bytes.len()].copy_from_slice(bytes);
    frame[bytes.len()..].fill(0);
}
