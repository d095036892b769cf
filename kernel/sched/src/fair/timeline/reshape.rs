//! Keeping the timeline a B-tree: a node that overflows is split in two, one that
//! underflows is merged with a sibling or takes a slot from it, and the root grows or shrinks
//! a level. Whatever moves keeps its links right: a moved entity's leaf in the index, a moved
//! child's parent, and the parent's record (lowest key, earliest deadline) of each node
//! whose slots changed.

use super::Timeline;
use super::node::{CAPACITY, NONE, Node, Slot};

impl Timeline {
    pub(super) fn allocate(&mut self, leaf: bool) -> u32 {
        match self.free.pop() {
            Some(n) => {
                *self.node_mut(n) = Node::new(leaf);
                n
            }
            None => {
                self.nodes.push(Node::new(leaf));
                (self.nodes.len() - 1) as u32
            }
        }
    }

    fn release(&mut self, n: u32) {
        self.node_mut(n).len = 0;
        self.free.push(n);
    }

    /// Puts `slot` at position `at` of `n`, and points what it holds back at `n`.
    fn adopt(&mut self, n: u32, at: usize, slot: Slot) {
        if self.node(n).leaf {
            self.leaf_of[slot.key.1 as usize] = n;
        } else {
            self.node_mut(slot.child).parent = n;
        }
        self.node_mut(n).insert_slot(at, slot);
    }

    /// Sets slot `at` of `n` from its child: the child's lowest key and earliest deadline.
    fn refresh(&mut self, n: u32, at: usize) {
        let child = self.node(n).child(at);
        let summary = self.node(child).summary(child);
        let node = self.node_mut(n);
        node.set_key(at, summary.key);
        node.set_earliest(at, summary.earliest);
    }

    /// Splits `n`, which overflowed, and each ancestor that overflows in turn; the root's
    /// split adds a level.
    pub(super) fn split_upwards(&mut self, mut n: u32) {
        while self.node(n).overfull() {
            let right = self.allocate(self.node(n).leaf);
            let keep = self.node(n).len.div_ceil(2);
            while self.node(n).len > keep {
                let slot = self.node_mut(n).remove_slot(keep);
                let at = self.node(right).len;
                self.adopt(right, at, slot);
            }
            let mut parent = self.node(n).parent;
            if parent == NONE {
                parent = self.allocate(false);
                let left_slot = self.node(n).summary(n);
                self.adopt(parent, 0, left_slot);
                self.root = parent;
            }
            let at = self.node(parent).slot_of(n);
            self.refresh(parent, at);
            let right_slot = self.node(right).summary(right);
            self.adopt(parent, at + 1, right_slot);
            n = parent;
        }
    }

    /// Child `at` of `n` has underflowed: merge it with a sibling if the two fit in one node,
    /// or else move one slot across from the sibling.
    pub(super) fn rebalance(&mut self, n: u32, at: usize) {
        let (left_at, right_at) = if at > 0 { (at - 1, at) } else { (0, 1) };
        let (left, right) = (self.node(n).child(left_at), self.node(n).child(right_at));
        let (left_len, right_len) = (self.node(left).len, self.node(right).len);
        if left_len + right_len <= CAPACITY {
            for i in 0..right_len {
                let slot = self.node(right).slot(i);
                self.adopt(left, left_len + i, slot);
            }
            self.release(right);
            self.node_mut(n).remove_slot(right_at);
        } else {
            let (from, to, take, put) = if left_len < right_len {
                (right, left, 0, left_len)
            } else {
                (left, right, left_len - 1, 0)
            };
            let slot = self.node_mut(from).remove_slot(take);
            self.adopt(to, put, slot);
            self.refresh(n, right_at);
        }
        self.refresh(n, left_at);
    }

    /// After a removal: a root left with one child gives way to it. (An empty root leaf
    /// stays: a queue whose one task is picked and put back empties its tree each time.)
    pub(super) fn shrink_root(&mut self) {
        let root = self.node(self.root);
        if !root.leaf && root.len == 1 {
            let child = root.child(0);
            self.release(self.root);
            self.root = child;
            self.node_mut(child).parent = NONE;
        }
    }
}
