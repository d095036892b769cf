//! EEVDF's pick in O(log n): the queue's entities in a tree ordered by virtual runtime, each
//! node also knowing the earliest deadline in its subtree — the augmented tree Linux 6.6 uses
//! (`min_deadline`). Eligible entities (v ≤ V) are a prefix of the vruntime order, so the
//! earliest eligible deadline is found on one path down: at an eligible node, the node and
//! its whole left subtree are eligible (their earliest deadline is known at once) and only
//! the right subtree needs a look; at an ineligible node, only the left one.
//!
//! The standard library's B-tree cannot carry such an augmentation, so this is a small treap
//! (a binary search tree balanced by random priorities, here drawn from a fixed-seed
//! generator so that runs stay deterministic), built on split and merge.

use super::entity::EntityId;
use alloc::vec::Vec;

/// A position in vruntime order: (vruntime key, entity id).
type Key = (i64, EntityId);
/// A deadline in the same form, so that ties break by id.
type Deadline = (i64, EntityId);

#[derive(Debug, Clone)]
struct Node {
    key: Key,
    deadline: Deadline,
    priority: u64,
    left: Option<usize>,
    right: Option<usize>,
    /// The earliest deadline in this node's subtree.
    min_deadline: Deadline,
}

/// The augmented tree (Linux's `tasks_timeline` with `min_deadline`).
#[derive(Debug, Clone, Default)]
pub struct DeadlineTree {
    nodes: Vec<Node>,
    free: Vec<usize>,
    root: Option<usize>,
    seed: u64,
}

impl DeadlineTree {
    /// An empty tree.
    pub fn new() -> Self {
        DeadlineTree {
            seed: 0x9e37_79b9_7f4a_7c15,
            ..Default::default()
        }
    }

    fn next_priority(&mut self) -> u64 {
        // splitmix64: a fixed sequence, so the tree's shape is the same on every run.
        self.seed = self.seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn update(&mut self, n: usize) {
        let mut min = self.nodes[n].deadline;
        for child in [self.nodes[n].left, self.nodes[n].right]
            .into_iter()
            .flatten()
        {
            min = min.min(self.nodes[child].min_deadline);
        }
        self.nodes[n].min_deadline = min;
    }

    /// Splits `t` into (keys < `key` or ≤ `key` if `inclusive`, the rest).
    fn split(
        &mut self,
        t: Option<usize>,
        key: Key,
        inclusive: bool,
    ) -> (Option<usize>, Option<usize>) {
        let Some(n) = t else { return (None, None) };
        let goes_left = if inclusive {
            self.nodes[n].key <= key
        } else {
            self.nodes[n].key < key
        };
        if goes_left {
            let (a, b) = self.split(self.nodes[n].right, key, inclusive);
            self.nodes[n].right = a;
            self.update(n);
            (Some(n), b)
        } else {
            let (a, b) = self.split(self.nodes[n].left, key, inclusive);
            self.nodes[n].left = b;
            self.update(n);
            (a, Some(n))
        }
    }

    /// Joins two trees, every key of `a` before every key of `b`.
    fn merge(&mut self, a: Option<usize>, b: Option<usize>) -> Option<usize> {
        match (a, b) {
            (None, t) | (t, None) => t,
            (Some(x), Some(y)) => {
                if self.nodes[x].priority > self.nodes[y].priority {
                    self.nodes[x].right = self.merge(self.nodes[x].right, Some(y));
                    self.update(x);
                    Some(x)
                } else {
                    self.nodes[y].left = self.merge(Some(x), self.nodes[y].left);
                    self.update(y);
                    Some(y)
                }
            }
        }
    }

    /// Adds an entity at vruntime key `key` with deadline key `deadline`.
    pub fn insert(&mut self, key: Key, deadline: i64) {
        let deadline = (deadline, key.1);
        let node = Node {
            key,
            deadline,
            priority: self.next_priority(),
            left: None,
            right: None,
            min_deadline: deadline,
        };
        let n = match self.free.pop() {
            Some(n) => {
                self.nodes[n] = node;
                n
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        };
        let (a, b) = self.split(self.root, key, false);
        let left = self.merge(a, Some(n));
        self.root = self.merge(left, b);
    }

    /// Removes the entity at `key`; false if it was not there.
    pub fn remove(&mut self, key: Key) -> bool {
        let (a, rest) = self.split(self.root, key, false);
        let (middle, b) = self.split(rest, key, true);
        if let Some(n) = middle {
            self.free.push(n);
        }
        self.root = self.merge(a, b);
        middle.is_some()
    }

    /// The entity with the earliest deadline among those whose key satisfies `eligible`,
    /// which must hold for a prefix of the keys (true up to some key, false after).
    pub fn pick(&self, eligible: impl Fn(Key) -> bool) -> Option<EntityId> {
        let mut best: Option<Deadline> = None;
        let mut t = self.root;
        while let Some(n) = t {
            let node = &self.nodes[n];
            if eligible(node.key) {
                let mut here = node.deadline;
                if let Some(left) = node.left {
                    here = here.min(self.nodes[left].min_deadline);
                }
                best = Some(best.map_or(here, |b| b.min(here)));
                t = node.right;
            } else {
                t = node.left;
            }
        }
        // `best` names the deadline; its owner is the entity id carried in it.
        best.map(|(_, id)| id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// Against a plain map: after any inserts and removes, the pick is the earliest
        /// deadline among keys up to a threshold.
        #[test]
        fn picks_the_earliest_eligible_deadline(
            ops in prop::collection::vec((0i64..200, 0usize..40, -500i64..500, any::<bool>()), 1..300),
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
                prop_assert_eq!(tree.pick(|k| k.0 <= threshold), expected);
            }
        }
    }

    #[test]
    fn removing_what_is_not_there_changes_nothing() {
        let mut tree = DeadlineTree::new();
        tree.insert((5, 1), 10);
        assert!(!tree.remove((5, 2)));
        assert_eq!(tree.pick(|_| true), Some(1));
        assert!(tree.remove((5, 1)));
        assert_eq!(tree.pick(|_| true), None);
    }
}
