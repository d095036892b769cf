//! One node of the timeline: up to [`CAPACITY`] slots kept in key order, each holding
//! the lowest key below it and the earliest deadline below it — in a leaf, one entity's own;
//! in an inner node, those of a child's whole subtree.
//!
//! A node keeps each field of its slots in an array of its own (virtual runtimes, ids,
//! children, earliest deadlines and the keys of whose they are), so that each scan reads
//! only the field it compares: a search reads the virtual runtimes (two cache lines), the
//! pick and the recomputation of a subtree's earliest deadline read the deadlines.
//!
//! Equal deadlines go to the entity further left in the timeline (the lower virtual runtime,
//! then the lower id): a left-to-right scan that keeps the first of equals finds it, so a
//! scan compares one integer per slot — the scans are most of EEVDF's cost. Linux
//! leaves the tie to the tree's shape; this rule is one a reader can state.
//!
//! Making room for a slot, or closing the gap one leaves, moves the later slots of every
//! array in one loop: the moves are a few slots long, and a call to `memmove` per array
//! (which `copy_within` makes) costs more than the moves themselves. The scans select
//! rather than branch: which slot holds the earliest is what a processor cannot predict.
//! (cachegrind's branch simulation of `make bench`'s cycle counted 38 mispredicted branches
//! per EEVDF cycle against CFS's 15 before these choices.)

use core::hint::select_unpredictable;

/// The most slots a node holds. Sixteen keeps a node's key scan within two cache lines while
/// a tree of 100 000 entities stays five levels deep. The unit tests use four, so that a few
/// dozen entities already build trees several levels deep and exercise every split, borrow
/// and merge.
pub const CAPACITY: usize = if cfg!(test) { 4 } else { 16 };

/// A node other than the root with fewer slots than this is merged with a sibling or takes
/// a slot from it. A quarter of the capacity (not the textbook half) lets a node drain
/// further before it is reshaped: a scheduler takes entities from the left and puts them
/// back on the right all the time, and a half-full rule would merge and split over and over.
pub const MIN_LEN: usize = if CAPACITY >= 8 { CAPACITY / 4 } else { 2 };

/// One slot more than the capacity: an insert may overfill a node until it is split.
const ROOM: usize = CAPACITY + 1;

/// "No node": an absent child, or the root of an empty tree.
pub const NONE: u32 = u32::MAX;

/// A position in vruntime order: (vruntime key, entity id).
pub type SlotKey = (i64, u32);

/// The earliest virtual deadline below a slot, and whose it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Earliest {
    pub deadline: i64,
    /// Whose it is: that entity's key.
    pub key: SlotKey,
}

impl Earliest {
    /// Does this record, found to the right of `best` (the earliest so far in a
    /// left-to-right scan), replace it? Only with a strictly earlier deadline: the one
    /// further left keeps a tie.
    pub fn replaces(self, best: Option<Earliest>) -> bool {
        best.is_none_or(|best| self.deadline < best.deadline)
    }
}

/// What a slot holds, taken out of or put into a node as one value.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    /// The lowest key below the slot (a leaf's: its entity's own key).
    pub key: SlotKey,
    /// The earliest deadline below the slot.
    pub earliest: Earliest,
    /// The child node (`NONE` in a leaf).
    pub child: u32,
}

/// A node of the tree.
#[derive(Debug, Clone)]
pub struct Node {
    pub len: usize,
    /// The node above (`NONE` for the root).
    pub parent: u32,
    /// Whether the slots are entities (a leaf) or children (an inner node).
    pub leaf: bool,
    /// Each slot's lowest key: its virtual runtime and its id.
    vruntime: [i64; ROOM],
    id: [u32; ROOM],
    /// Each slot's child (`NONE` in a leaf).
    child: [u32; ROOM],
    /// Each slot's earliest deadline, and the key of whose it is (kept, so that an insert
    /// settles a tie of deadlines without looking that entity up).
    deadline: [i64; ROOM],
    earliest_vruntime: [i64; ROOM],
    earliest_id: [u32; ROOM],
}

impl Node {
    /// A node with no slots.
    const EMPTY: Node = Node {
        len: 0,
        parent: NONE,
        leaf: true,
        vruntime: [0; ROOM],
        id: [0; ROOM],
        child: [NONE; ROOM],
        deadline: [0; ROOM],
        earliest_vruntime: [0; ROOM],
        earliest_id: [0; ROOM],
    };

    /// An empty leaf or inner node.
    pub fn new(leaf: bool) -> Node {
        Node {
            leaf,
            ..Node::EMPTY
        }
    }

    /// Slot `i`'s lowest key.
    pub fn key(&self, i: usize) -> SlotKey {
        (self.vruntime[i], self.id[i])
    }

    /// Slot `i`'s lowest virtual runtime.
    pub fn vruntime(&self, i: usize) -> i64 {
        self.vruntime[i]
    }

    /// Slot `i`'s child.
    pub fn child(&self, i: usize) -> u32 {
        self.child[i]
    }

    /// Slot `i`'s earliest deadline.
    pub fn earliest_at(&self, i: usize) -> Earliest {
        Earliest {
            deadline: self.deadline[i],
            key: (self.earliest_vruntime[i], self.earliest_id[i]),
        }
    }

    pub fn set_key(&mut self, i: usize, key: SlotKey) {
        (self.vruntime[i], self.id[i]) = key;
    }

    pub fn set_earliest(&mut self, i: usize, e: Earliest) {
        self.deadline[i] = e.deadline;
        (self.earliest_vruntime[i], self.earliest_id[i]) = e.key;
    }

    /// The slot holding child `child` (children are distinct, so one slot matches).
    pub fn slot_of(&self, child: u32) -> usize {
        self.child[..self.len]
            .iter()
            .position(|&c| c == child)
            .expect("a node's parent holds it")
    }

    /// The earliest deadline among the first `end` slots (`None` if `end` is 0), the
    /// leftmost of equals.
    pub fn earliest_before(&self, end: usize) -> Option<Earliest> {
        if end == 0 {
            return None;
        }
        let (mut best, mut at) = (self.deadline[0], 0);
        for (i, &deadline) in self.deadline[..end].iter().enumerate().skip(1) {
            let earlier = deadline < best;
            best = select_unpredictable(earlier, deadline, best);
            at = select_unpredictable(earlier, i, at);
        }
        Some(self.earliest_at(at))
    }

    /// The earliest deadline of the whole node (`None` if it is empty).
    pub fn earliest(&self) -> Option<Earliest> {
        self.earliest_before(self.len)
    }

    /// What a parent's slot for this (non-empty) node holds.
    pub fn summary(&self, child: u32) -> Slot {
        Slot {
            key: self.key(0),
            earliest: self.earliest().expect("a summarised node has slots"),
            child,
        }
    }

    /// The first slot whose key is above `key` (`len` if none).
    pub fn upper_bound(&self, key: SlotKey) -> usize {
        // The slots are in key order: count those at or below `key`, stopping at the first
        // above it (virtual runtimes decide; ids break ties).
        let (v, id) = key;
        self.vruntime[..self.len]
            .iter()
            .zip(&self.id[..self.len])
            .take_while(|&(&kv, &kid)| kv < v || (kv == v && kid <= id))
            .count()
    }

    /// The slot whose subtree holds `key`, or would: the last one whose lowest key is at or
    /// below it (the first slot for a key below them all).
    pub fn route(&self, key: SlotKey) -> usize {
        self.upper_bound(key).saturating_sub(1)
    }

    /// The slot holding exactly `key`, in a leaf (found by id: a leaf's ids are distinct).
    pub fn find(&self, key: SlotKey) -> Option<usize> {
        let at = self.find_id(key.1)?;
        (self.vruntime[at] == key.0).then_some(at)
    }

    /// The slot holding entity `id`, in a leaf.
    pub fn find_id(&self, id: u32) -> Option<usize> {
        self.id[..self.len].iter().position(|&i| i == id)
    }

    /// How many slots lie wholly at or below virtual runtime `limit`: they are a prefix. A
    /// leaf's slot does if its own key does; an inner node's, if the next slot's lowest key
    /// does (its keys all lie below that one), so an inner node's last slot never does.
    pub fn wholly_at_or_below(&self, limit: i64) -> usize {
        // The keys are in order, so counting all that pass (no early exit, no branch)
        // counts the prefix.
        let deciders = usize::from(!self.leaf).min(self.len);
        self.vruntime[deciders..self.len]
            .iter()
            .filter(|&&v| v <= limit)
            .count()
    }

    /// The slot at `i`, as a value.
    pub fn slot(&self, i: usize) -> Slot {
        Slot {
            key: self.key(i),
            earliest: self.earliest_at(i),
            child: self.child(i),
        }
    }

    /// Puts `slot` at position `at`, moving the later slots one place on.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn insert_slot(&mut self, at: usize, slot: Slot) {
        debug_assert!(self.len < ROOM, "a node overfilled past one slot");
        for i in (at..self.len).rev() {
            self.move_slot(i, i + 1);
        }
        self.set_key(at, slot.key);
        self.child[at] = slot.child;
        self.set_earliest(at, slot.earliest);
        self.len += 1;
    }

    /// Takes out the slot at `at`, moving the later slots one place back.
    pub fn remove_slot(&mut self, at: usize) -> Slot {
        let slot = self.slot(at);
        for i in at + 1..self.len {
            self.move_slot(i, i - 1);
        }
        self.len -= 1;
        slot
    }

    fn move_slot(&mut self, from: usize, to: usize) {
        self.vruntime[to] = self.vruntime[from];
        self.id[to] = self.id[from];
        self.child[to] = self.child[from];
        self.deadline[to] = self.deadline[from];
        self.earliest_vruntime[to] = self.earliest_vruntime[from];
        self.earliest_id[to] = self.earliest_id[from];
    }

    /// Is the node past its capacity (to be split)?
    pub fn overfull(&self) -> bool {
        self.len > CAPACITY
    }
}
