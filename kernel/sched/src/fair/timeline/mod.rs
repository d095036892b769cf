//! A runqueue's timeline (Linux's `tasks_timeline`): its waiting entities in one tree ordered
//! by virtual runtime. CFS needs only that order — the leftmost entity is its pick and the
//! floor of `min_vruntime`. EEVDF's queues also keep, in each subtree, the earliest virtual
//! deadline below it (Linux 6.6's augmented tree, `min_deadline`), so that one tree serves
//! both orders: the leftmost entity and the earliest eligible deadline.
//!
//! Eligible entities (v ≤ V) are a prefix of the vruntime order, so the earliest eligible
//! deadline is found on one path down: in each node, the slots wholly inside the prefix give
//! their earliest deadline at once, and only the slot where the prefix ends needs a look
//! inside. Of equal deadlines the pick takes the entity further left (see `node.rs`).
//!
//! Linux uses a red-black tree; cfslab a B-tree (a B+-tree: entities live in the leaves,
//! inner nodes route), because a binary tree's walk costs a cache miss per level and a
//! branch the processor cannot predict, which made EEVDF two to three times as costly as
//! CFS (`make bench` prints the ratio). Each slot of a node records the *exact*
//! lowest key (and, for EEVDF, the earliest deadline) below it. An insert walks down once,
//! taking the entity into those records on its way. A removal starts at the entity's leaf
//! (each entity's leaf is indexed, as Linux finds the `rb_node` inside its `sched_entity`) and
//! climbs only as far as a record changed. Nodes that overflow are split and nodes that
//! underflow merged or refilled from a sibling, as in any B-tree (`reshape.rs`). The leftmost
//! entity is the root's first key, in O(1), as Linux's cached `rb_leftmost` is.
//!
//! CFS used the standard library's `BTreeSet` until the kernel's context switch was measured:
//! for the two or three entities of a kernel's queue its insert and remove cost
//! about twice this tree's, and one structure for both policies is also what Linux has.
//!
//! What this tree does not do: it never reads the clock or weights — the runqueue hands it
//! keys and deadlines already made relative to its epoch.

mod node;
mod reshape;
#[cfg(test)]
mod tests;

use super::entity::EntityId;
use alloc::vec::Vec;
use node::{Earliest, MIN_LEN, NONE, Node, Slot, SlotKey};

/// A position in vruntime order: (vruntime key, entity id).
pub type Key = (i64, EntityId);

/// The tree (Linux's `tasks_timeline`; with deadlines tracked, its `min_deadline` too).
#[derive(Debug, Clone)]
pub struct Timeline {
    nodes: Vec<Node>,
    /// Nodes released by merges, reused before the vector grows.
    free: Vec<u32>,
    root: u32,
    /// Entity id → the leaf holding it (`NONE` if it is not in the tree).
    leaf_of: Vec<u32>,
    len: usize,
    /// Whether the slots record earliest deadlines (EEVDF) or only keys (CFS, whose pick is
    /// the leftmost entity and never asks for a deadline).
    tracks_deadlines: bool,
}

fn slot_key(key: Key) -> SlotKey {
    (
        key.0,
        u32::try_from(key.1).expect("entity ids fit in 32 bits"),
    )
}

fn entity_key((v, id): SlotKey) -> Key {
    (v, id as EntityId)
}

impl Timeline {
    /// An empty tree; with `tracks_deadlines`, one that can answer [`Timeline::pick`].
    pub fn new(tracks_deadlines: bool) -> Self {
        Timeline {
            nodes: Vec::new(),
            free: Vec::new(),
            root: NONE,
            leaf_of: Vec::new(),
            len: 0,
            tracks_deadlines,
        }
    }

    /// Whether the slots record earliest deadlines (the tree was made for EEVDF).
    pub fn tracks_deadlines(&self) -> bool {
        self.tracks_deadlines
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

    fn node(&self, n: u32) -> &Node {
        &self.nodes[n as usize]
    }

    fn node_mut(&mut self, n: u32) -> &mut Node {
        &mut self.nodes[n as usize]
    }

    /// Adds an entity at vruntime key `key` with deadline key `deadline`: one walk down,
    /// taking the entity into each slot's lowest key and earliest deadline on the way.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn insert(&mut self, key: Key, deadline: i64) {
        let key = slot_key(key);
        let entry = Slot {
            key,
            earliest: Earliest { deadline, key },
            child: NONE,
        };
        if self.root == NONE {
            self.root = self.allocate(true);
        }
        let mut n = self.root;
        while !self.node(n).leaf {
            let node = self.node(n);
            let at = node.route(key);
            let lowers = key < node.key(at);
            let earlier = self.tracks_deadlines && Self::goes_before(entry, node.earliest_at(at));
            let node = self.node_mut(n);
            if lowers {
                node.set_key(at, key);
            }
            if earlier {
                node.set_earliest(at, entry.earliest);
            }
            n = node.child(at);
        }
        let leaf = self.node_mut(n);
        let at = leaf.upper_bound(key);
        leaf.insert_slot(at, entry);
        let id = key.1 as usize;
        if self.leaf_of.len() <= id {
            self.leaf_of.resize(id + 1, NONE);
        }
        debug_assert_eq!(self.leaf_of[id], NONE, "entity {id} inserted twice");
        self.leaf_of[id] = n;
        self.len += 1;
        if self.node(n).overfull() {
            self.split_upwards(n);
        }
    }

    /// Does the new entry's deadline come before `record`'s, the earliest below a slot? The
    /// earlier deadline does; of equal ones, the entity further left (`node.rs`).
    fn goes_before(entry: Slot, record: Earliest) -> bool {
        (entry.earliest.deadline, entry.key) < (record.deadline, record.key)
    }

    /// Removes the entity at `key`; false if it was not there.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn remove(&mut self, key: Key) -> bool {
        let key = slot_key(key);
        let Some(&leaf) = self.leaf_of.get(key.1 as usize).filter(|&&n| n != NONE) else {
            return false;
        };
        let node = self.node_mut(leaf);
        let Some(at) = node.find(key) else {
            return false;
        };
        let removed = node.remove_slot(at).earliest;
        let above = node.parent;
        self.leaf_of[key.1 as usize] = NONE;
        self.len -= 1;
        // A root leaf has no records above it (and may be left empty).
        if above != NONE {
            self.update_above(leaf, removed);
        }
        if self.len == 0 && self.nodes.len() > 1 {
            self.give_back_the_burst();
        }
        true
    }

    /// The tree is empty after having grown past one node: its nodes are given back to the
    /// heap. Linux's red-black tree owns no memory (its nodes live inside the entities), so a
    /// queue's footprint must not remember its busiest moment either: without this, how
    /// much heap a run leaves depends on how many tasks happened to be runnable at once, and
    /// a leak could hide in that spread. A queue that only ever holds a few entities keeps
    /// its one root leaf and never pays for this.
    #[cold]
    fn give_back_the_burst(&mut self) {
        self.nodes = Vec::new();
        self.free = Vec::new();
        self.root = NONE;
    }

    /// After a removal from `n` of an entity whose earliest deadline was `removed`: climbs
    /// while a parent's record of the node below changed — its lowest key (the entity was
    /// the lowest below it), its earliest deadline (the entity held it), or its size (the
    /// node underflowed and is merged or refilled).
    ///
    /// Where the entity held a node's earliest deadline, that node's new earliest is a scan of
    /// its slots — unless the slot it was in got a replacement with the same deadline: the
    /// slots to its left hold only later deadlines (else one of them would have held the
    /// node's earliest), those to its right lie further right, so the replacement is the
    /// node's earliest too. The leaf is always scanned; a tie found there, or at any level,
    /// saves the scans above it.
    fn update_above(&mut self, mut n: u32, removed: Earliest) {
        // The record just set in `n`'s slot that held the entity (None: not set, or the
        // node's slots were reshaped since).
        let mut replaced: Option<Earliest> = None;
        loop {
            let parent = self.node(n).parent;
            if parent == NONE {
                break;
            }
            let (child, node) = (self.node(n), self.node(parent));
            let at = node.slot_of(n);
            let lowest = (child.len > 0 && child.key(0) != node.key(at)).then(|| child.key(0));
            let earliest = if self.tracks_deadlines && node.earliest_at(at) == removed {
                match replaced {
                    Some(tie) if tie.deadline == removed.deadline => Some(tie),
                    _ => child.earliest(),
                }
            } else {
                None
            };
            let underflow = child.len < MIN_LEN;
            if lowest.is_none() && earliest.is_none() && !underflow {
                break;
            }
            let node = self.node_mut(parent);
            if let Some(key) = lowest {
                node.set_key(at, key);
            }
            if let Some(earliest) = earliest {
                node.set_earliest(at, earliest);
            }
            replaced = earliest;
            if underflow {
                self.rebalance(parent, at);
                replaced = None;
            }
            n = parent;
        }
        self.shrink_root();
    }

    /// The entity with the smallest key: the root's lowest, in O(1).
    pub fn first(&self) -> Option<Key> {
        let root = self.nodes.get(self.root as usize)?;
        (root.len > 0).then(|| entity_key(root.key(0)))
    }

    /// The entity with the largest key.
    pub fn last(&self) -> Option<Key> {
        self.first()?;
        let mut node = self.node(self.root);
        while !node.leaf {
            node = self.node(node.child(node.len - 1));
        }
        Some(entity_key(node.key(node.len - 1)))
    }

    /// Every key in order.
    pub fn keys(&self) -> Vec<Key> {
        let mut out = Vec::with_capacity(self.len);
        if self.root != NONE {
            self.collect(self.root, &mut out);
        }
        out
    }

    fn collect(&self, n: u32, out: &mut Vec<Key>) {
        let node = self.node(n);
        for i in 0..node.len {
            if node.leaf {
                out.push(entity_key(node.key(i)));
            } else {
                self.collect(node.child(i), out);
            }
        }
    }

    /// The entity with the earliest deadline among those with a vruntime key of at most
    /// `limit` (the eligible prefix); of equal deadlines, the one further left.
    pub fn pick(&self, limit: i64) -> Option<EntityId> {
        debug_assert!(
            self.tracks_deadlines,
            "a pick by deadline on a tree without them"
        );
        if self.root == NONE {
            return None;
        }
        let mut best = None;
        let mut node = self.node(self.root);
        loop {
            // In a leaf every slot with an eligible key is an eligible entity. In an inner
            // node a slot's keys all lie below the next slot's lowest, so a slot is wholly
            // eligible when the next one's lowest key is; the first slot that is not wholly
            // eligible may still begin eligible, and is where the walk goes on. The walk
            // goes left to right, so a later slot replaces the best only with a strictly
            // earlier deadline.
            let wholly = node.wholly_at_or_below(limit);
            if let Some(earliest) = node.earliest_before(wholly)
                && earliest.replaces(best)
            {
                best = Some(earliest);
            }
            // Below the slot where eligibility ends only a deadline earlier than the best so
            // far matters: if the slot's earliest (eligible or not) is no earlier, the walk
            // ends here — the common case, since the eligible entities furthest behind tend
            // to have the earliest deadlines.
            let at = wholly;
            if node.leaf || node.vruntime(at) > limit || !node.earliest_at(at).replaces(best) {
                break;
            }
            node = self.node(node.child(at));
        }
        best.map(|best| best.key.1 as EntityId)
    }
}
