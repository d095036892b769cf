//! Frames with more than one owner: the user pages a `fork` shares copy-on-write between
//! parent and child (Linux counts them in `struct page`'s `_mapcount`/`_refcount`). A frame
//! not in the table has one owner; the table holds how many owners *beyond* the first a
//! shared frame has, so it stays empty while nothing is shared.

use crate::arch::paging::PhysFrame;
use alloc::collections::BTreeMap;

#[derive(Default)]
pub struct Shares {
    extra_owners: BTreeMap<PhysFrame, u32>,
}

impl Shares {
    pub const fn new() -> Self {
        Shares {
            extra_owners: BTreeMap::new(),
        }
    }

    /// One more owner for `frame`.
    pub fn share(&mut self, frame: PhysFrame) {
        *self.extra_owners.entry(frame).or_insert(0) += 1;
    }

    /// One owner gives `frame` up; true if it was the last, and the frame may be freed.
    pub fn release(&mut self, frame: PhysFrame) -> bool {
        match self.extra_owners.get_mut(&frame) {
            Some(1) => {
                self.extra_owners.remove(&frame);
                false
            }
            Some(n) => {
                *n -= 1;
                false
            }
            None => true,
        }
    }

    /// Whether `frame` has more than one owner.
    pub fn is_shared(&self, frame: PhysFrame) -> bool {
        self.extra_owners.contains_key(&frame)
    }

    /// How many frames have more than one owner.
    pub fn shared_frames(&self) -> usize {
        self.extra_owners.len()
    }
}
