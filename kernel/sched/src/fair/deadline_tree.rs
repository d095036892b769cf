//! EEVDF's timeline: the queue's entities in one tree ordered by virtual runtime, each node
//! also knowing the earliest deadline in its subtree — the augmented tree Linux 6.6 uses
//! (`tasks_timeline` with `min_deadline`). One tree serves both orders: the leftmost entity
//! (for `min_vruntime`) and the earliest eligible deadline (for the pick).
//!
//! Eligible entities (v ≤ V) are a prefix of the vruntime order, so the earliest eligible
//! deadline is found on one path down: at an eligible node, the node and its whole left
//! subtree are eligible (their earliest deadline is known at once) and only the right subtree
//! needs a look; at an ineligible node, only the left one. Before that walk the pick tries
//! the earliest deadline of all (the root's): if its entity is eligible, that is the answer —
//! the common case, since with equal weights deadline order follows vruntime order.
//!
//! The standard library's B-tree cannot carry such an augmentation, so this is a treap (a
//! binary search tree kept balanced by random priorities, here from a fixed-seed generator so
//! that runs stay deterministic) with parent links, changed by rotations as Linux's rbtree is:
//! an insert walks down once and rotates up; a removal finds its node through the entity id
//! (as Linux's `rb_node` is found inside its `sched_entity`), rotates it down to a leaf and
//! unlinks it; each then repairs `min_deadline` on the way up, stopping as soon as nothing
//! changes. Nodes are 48 bytes (ids and links as u32), so that a walk touches one cache line
//! per level. (An augmented B-tree was tried as well: its in-node searches cost more than
//! the treap's extra levels at every size `make bench` measures.)

use super::entity::EntityId;
use alloc::vec::Vec;

/// A position in vruntime order: (vruntime key, entity id).
pub type Key = (i64, EntityId);
/// A deadline with its entity's id, so that ties break by id.
type Deadline = (i64, u32);

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone)]
struct Node {
    vruntime: i64,
    deadline: i64,
    /// The earliest deadline in this node's subtree, and whose it is.
    min_deadline: Deadline,
    id: u32,
    priority: u32,
    left: u32,
    right: u32,
    parent: u32,
}

impl Node {
    fn key(&self) -> Key {
        (self.vruntime, self.id as EntityId)
    }

    fn own_deadline(&self) -> Deadline {
        (self.deadline, self.id)
    }
}

/// The augmented tree (Linux's `tasks_timeline` with `min_deadline`).
#[derive(Debug, Clone, Default)]
pub struct DeadlineTree {
    nodes: Vec<Node>,
    free: Vec<u32>,
    root: u32,
    /// Entity id → its node (`NONE` if not in the tree).
    node_of: Vec<u32>,
    len: usize,
    seed: u64,
}

fn link(n: u32) -> Option<usize> {
    (n != NONE).then_some(n as usize)
}

impl DeadlineTree {
    /// An empty tree.
    pub fn new() -> Self {
        DeadlineTree {
            root: NONE,
            seed: 0x9e37_79b9_7f4a_7c15,
            ..Default::default()
        }
    }

    /// Number of entities in the tree.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Is the tree empty?
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn next_priority(&mut self) -> u32 {
        // splitmix64: a fixed sequence, so the tree's shape is the same on every run.
        self.seed = self.seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 32) as u32
    }

    /// Recomputes `n`'s `min_deadline` from its own deadline and its children's.
    fn recompute(&mut self, n: usize) {
        let node = &self.nodes[n];
        let mut min = node.own_deadline();
        for child in [node.left, node.right] {
            if let Some(c) = link(child) {
                min = min.min(self.nodes[c].min_deadline);
            }
        }
        self.nodes[n].min_deadline = min;
    }

    /// Repairs `min_deadline` from `n` up to the root, stopping where nothing changes.
    fn repair_up(&mut self, mut n: u32) {
        while let Some(i) = link(n) {
            let before = self.nodes[i].min_deadline;
            self.recompute(i);
            if self.nodes[i].min_deadline == before {
                break;
            }
            n = self.nodes[i].parent;
        }
    }

    /// Points `parent`'s link that held `old` (or the root) at `new`.
    fn replace_child(&mut self, parent: u32, old: u32, new: u32) {
        match link(parent) {
            None => self.root = new,
            Some(p) if self.nodes[p].left == old => self.nodes[p].left = new,
            Some(p) => self.nodes[p].right = new,
        }
        if let Some(n) = link(new) {
            self.nodes[n].parent = parent;
        }
    }

    /// Rotates `n` above its parent, keeping the order and both nodes' `min_deadline`.
    fn rotate_up(&mut self, n: u32) {
        let p = self.nodes[n as usize].parent;
        let grandparent = self.nodes[p as usize].parent;
        if self.nodes[p as usize].left == n {
            let moved = self.nodes[n as usize].right;
            self.nodes[p as usize].left = moved;
            if let Some(m) = link(moved) {
                self.nodes[m].parent = p;
            }
            self.nodes[n as usize].right = p;
        } else {
            let moved = self.nodes[n as usize].left;
            self.nodes[p as usize].right = moved;
            if let Some(m) = link(moved) {
                self.nodes[m].parent = p;
            }
            self.nodes[n as usize].left = p;
        }
        self.nodes[p as usize].parent = n;
        self.replace_child(grandparent, p, n);
        self.recompute(p as usize);
        self.recompute(n as usize);
    }

    /// Adds an entity at vruntime key `key` with deadline key `deadline`.
    pub fn insert(&mut self, key: Key, deadline: i64) {
        let id = u32::try_from(key.1).expect("entity ids fit in 32 bits");
        let node = Node {
            vruntime: key.0,
            deadline,
            min_deadline: (deadline, id),
            id,
            priority: self.next_priority(),
            left: NONE,
            right: NONE,
            parent: NONE,
        };
        let n = match self.free.pop() {
            Some(n) => {
                self.nodes[n as usize] = node;
                n
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        if self.node_of.len() <= key.1 {
            self.node_of.resize(key.1 + 1, NONE);
        }
        debug_assert_eq!(self.node_of[key.1], NONE, "entity {} inserted twice", key.1);
        self.node_of[key.1] = n;
        self.len += 1;
        // Walk down to the leaf position, lowering min_deadline on the way.
        let (mut parent, mut at) = (NONE, self.root);
        let mut went_left = false;
        while let Some(i) = link(at) {
            let node = &mut self.nodes[i];
            node.min_deadline = node.min_deadline.min((deadline, id));
            parent = at;
            went_left = key < node.key();
            at = if went_left { node.left } else { node.right };
        }
        self.nodes[n as usize].parent = parent;
        match link(parent) {
            None => self.root = n,
            Some(p) if went_left => self.nodes[p].left = n,
            Some(p) => self.nodes[p].right = n,
        }
        // Rotate up while the new node's priority beats its parent's (a heap on priorities).
        while let Some(p) = link(self.nodes[n as usize].parent) {
            if self.nodes[p].priority >= self.nodes[n as usize].priority {
                break;
            }
            self.rotate_up(n);
        }
    }

    /// Removes the entity at `key`; false if it was not there.
    pub fn remove(&mut self, key: Key) -> bool {
        let Some(&n) = self.node_of.get(key.1).filter(|&&n| n != NONE) else {
            return false;
        };
        if self.nodes[n as usize].key() != key {
            return false;
        }
        // Rotate the node down (its higher-priority child up) until it is a leaf.
        loop {
            let node = &self.nodes[n as usize];
            let child = match (link(node.left), link(node.right)) {
                (None, None) => break,
                (Some(l), None) => l,
                (None, Some(r)) => r,
                (Some(l), Some(r)) => {
                    if self.nodes[l].priority > self.nodes[r].priority {
                        l
                    } else {
                        r
                    }
                }
            };
            self.rotate_up(child as u32);
        }
        let parent = self.nodes[n as usize].parent;
        self.replace_child(parent, n, NONE);
        self.repair_up(parent);
        self.node_of[key.1] = NONE;
        self.free.push(n);
        self.len -= 1;
        true
    }

    /// The entity with the smallest key. (the tests' check; the runqueue caches its leftmost)
    #[cfg(test)]
    pub fn first(&self) -> Option<Key> {
        let mut n = link(self.root)?;
        while let Some(l) = link(self.nodes[n].left) {
            n = l;
        }
        Some(self.nodes[n].key())
    }

    /// The entity with the largest key.
    pub fn last(&self) -> Option<Key> {
        let mut n = link(self.root)?;
        while let Some(r) = link(self.nodes[n].right) {
            n = r;
        }
        Some(self.nodes[n].key())
    }

    /// The entity after `key` in vruntime order (`key` must be in the tree): from the node,
    /// as Linux's `rb_next`, without a walk from the root.
    pub fn next(&self, key: Key) -> Option<Key> {
        let mut n = *self.node_of.get(key.1)?;
        if let Some(mut r) = link(self.nodes[n as usize].right) {
            while let Some(l) = link(self.nodes[r].left) {
                r = l;
            }
            return Some(self.nodes[r].key());
        }
        while let Some(p) = link(self.nodes[n as usize].parent) {
            if self.nodes[p].left == n {
                return Some(self.nodes[p].key());
            }
            n = p as u32;
        }
        None
    }

    /// Every key in order.
    pub fn keys(&self) -> Vec<Key> {
        let mut out = Vec::with_capacity(self.len);
        let mut stack = Vec::new();
        let mut at = self.root;
        while link(at).is_some() || !stack.is_empty() {
            while let Some(i) = link(at) {
                stack.push(i);
                at = self.nodes[i].left;
            }
            let i = stack.pop().unwrap();
            out.push(self.nodes[i].key());
            at = self.nodes[i].right;
        }
        out
    }

    /// The entity with the earliest deadline among those with a vruntime key of at most
    /// `limit` (the eligible prefix).
    pub fn pick(&self, limit: i64) -> Option<EntityId> {
        let root = &self.nodes[link(self.root)?];
        let (_, earliest) = root.min_deadline;
        if self.nodes[self.node_of[earliest as usize] as usize].vruntime <= limit {
            return Some(earliest as EntityId);
        }
        let mut best: Option<Deadline> = None;
        let mut at = self.root;
        while let Some(n) = link(at) {
            let node = &self.nodes[n];
            if node.vruntime <= limit {
                let mut here = node.own_deadline();
                if let Some(l) = link(node.left) {
                    here = here.min(self.nodes[l].min_deadline);
                }
                best = Some(best.map_or(here, |b| b.min(here)));
                at = node.right;
            } else {
                at = node.left;
            }
        }
        // `best` names the deadline; its owner is the entity id carried in it.
        best.map(|(_, id)| id as EntityId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// Against a plain map: after any inserts and removes, the pick is the earliest
        /// deadline among keys up to a threshold, and the order, ends and successors are the
        /// map's.
        #[test]
        fn picks_the_earliest_eligible_deadline(
            ops in prop::collection::vec((0i64..200, 0usize..60, -500i64..500, any::<bool>()), 1..400),
            threshold in -10i64..210,
        ) {
            let mut tree = DeadlineTree::new();
            let mut model: BTreeMap<Key, i64> = BTreeMap::new();
            let mut keys_of: BTreeMap<EntityId, Key> = BTreeMap::new();
            for (v, id, deadline, insert) in ops {
                if let Some(key) = keys_of.remove(&id) {
                    prop_assert!(tree.remove(key));
                    model.remove(&key);
                }
                if insert {
                    tree.insert((v, id), deadline);
                    model.insert((v, id), deadline);
                    keys_of.insert(id, (v, id));
                }
                let expected = model
                    .iter()
                    .filter(|(k, _)| k.0 <= threshold)
                    .min_by_key(|(k, d)| (**d, k.1))
                    .map(|(k, _)| k.1);
                prop_assert_eq!(tree.pick(threshold), expected);
                prop_assert_eq!(tree.first(), model.keys().next().copied());
                prop_assert_eq!(tree.last(), model.keys().next_back().copied());
                prop_assert_eq!(tree.len(), model.len());
                if let Some(&first) = model.keys().next() {
                    prop_assert_eq!(tree.next(first), model.keys().nth(1).copied());
                }
            }
            prop_assert_eq!(tree.keys(), model.keys().copied().collect::<Vec<_>>());
        }
    }

    #[test]
    fn removing_what_is_not_there_changes_nothing() {
        let mut tree = DeadlineTree::new();
        tree.insert((5, 1), 10);
        assert!(!tree.remove((5, 2)));
        assert!(!tree.remove((6, 1)));
        assert_eq!(tree.pick(i64::MAX), Some(1));
        assert!(tree.remove((5, 1)));
        assert_eq!(tree.pick(i64::MAX), None);
        assert!(tree.is_empty());
    }
}
