//! One node of the timeline: up to [`CAPACITY`] slots kept in key order, each holding
//! the lowest key below it and the earliest deadline below it — in a leaf, one entity's own;
//! in an inner node, those of a child's whole subtree.
//!
//! A node keeps its slots' virtual runtimes in an array of their own, so that a search —
//! which compares virtual runtimes, looking at ids only on a tie — reads two cache lines; the
//! rest of each slot (id, child, earliest deadline) sits together in a second array.
//!
//! Making room for a slot, or closing the gap one leaves, moves the later slots of both
//! arrays in one loop: the moves are a few slots long, and a call to `memmove` per array
//! (which `copy_within` makes) costs more than the moves themselves. Deadlines are compared
//! with a select rather than a branch: which slot holds the earliest is what a processor
//! cannot predict. (cachegrind's branch simulation of `make bench`'s cycle counted 38
//! mispredicted branches per EEVDF cycle against CFS's 15 before these changes.)

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
    pub id: u32,
}

impl Earliest {
    /// Nothing below: later than every real deadline.
    pub const NONE: Earliest = Earliest {
        deadline: i64::MAX,
        id: u32::MAX,
    };

    /// Is this deadline earlier than `other`'s? Deadlines order the entities, equal
    /// deadlines break by id. (Without short-circuits, so that it compiles to a select
    /// rather than a branch.)
    pub fn before(self, other: Earliest) -> bool {
        (self.deadline < other.deadline)
            | ((self.deadline == other.deadline) & (self.id < other.id))
    }

    /// The earlier of two.
    pub fn min(self, other: Earliest) -> Earliest {
        if other.before(self) { other } else { self }
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

/// A slot apart from its virtual runtime.
#[derive(Debug, Clone, Copy)]
struct Rest {
    id: u32,
    child: u32,
    earliest: Earliest,
}

/// A node of the tree.
#[derive(Debug, Clone)]
pub struct Node {
    pub len: usize,
    /// The node above (`NONE` for the root).
    pub parent: u32,
    /// Whether the slots are entities (a leaf) or children (an inner node).
    pub leaf: bool,
    /// Each slot's lowest virtual runtime.
    vruntime: [i64; ROOM],
    /// The rest of each slot.
    rest: [Rest; ROOM],
}

impl Node {
    /// A node with no slots.
    pub const EMPTY: Node = Node {
        len: 0,
        parent: NONE,
        leaf: true,
        vruntime: [0; ROOM],
        rest: [Rest {
            id: 0,
            child: NONE,
            earliest: Earliest::NONE,
        }; ROOM],
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
        (self.vruntime[i], self.rest[i].id)
    }

    /// Slot `i`'s child.
    pub fn child(&self, i: usize) -> u32 {
        self.rest[i].child
    }

    /// Slot `i`'s earliest deadline.
    pub fn earliest_at(&self, i: usize) -> Earliest {
        self.rest[i].earliest
    }

    pub fn set_key(&mut self, i: usize, key: SlotKey) {
        (self.vruntime[i], self.rest[i].id) = key;
    }

    pub fn set_earliest(&mut self, i: usize, e: Earliest) {
        self.rest[i].earliest = e;
    }

    /// The slot holding child `child` (children are distinct, so one slot matches).
    pub fn slot_of(&self, child: u32) -> usize {
        self.rest[..self.len]
            .iter()
            .position(|rest| rest.child == child)
            .expect("a node's parent holds it")
    }

    /// The earliest deadline of the whole node ([`Earliest::NONE`] if it is empty).
    pub fn earliest(&self) -> Earliest {
        self.rest[..self.len]
            .iter()
            .fold(Earliest::NONE, |best, rest| best.min(rest.earliest))
    }

    /// What a parent's slot for this node holds.
    pub fn summary(&self, child: u32) -> Slot {
        Slot {
            key: self.key(0),
            earliest: self.earliest(),
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
            .zip(&self.rest[..self.len])
            .take_while(|&(&kv, rest)| kv < v || (kv == v && rest.id <= id))
            .count()
    }

    /// The slot whose subtree holds `key`, or would: the last one whose lowest key is at or
    /// below it (the first slot for a key below them all).
    pub fn route(&self, key: SlotKey) -> usize {
        self.upper_bound(key).saturating_sub(1)
    }

    /// The slot holding exactly `key`, in a leaf (found by id: a leaf's ids are distinct).
    pub fn find(&self, key: SlotKey) -> Option<usize> {
        let (v, id) = key;
        let at = self.rest[..self.len]
            .iter()
            .position(|rest| rest.id == id)?;
        (self.vruntime[at] == v).then_some(at)
    }

    /// The earliest deadline of the slots wholly at or below virtual runtime `limit`, and
    /// the first slot that is not (if any), in one pass. A leaf's slot is wholly below if
    /// its own key is; an inner node's, if the next slot's lowest key is (its keys all lie
    /// below that one).
    pub fn eligible_prefix(&self, limit: i64) -> (Earliest, Option<usize>) {
        // Where the key that decides slot i is: its own in a leaf, the next one inside.
        let decider = usize::from(!self.leaf);
        let mut best = Earliest::NONE;
        for i in 0..self.len {
            let wholly = i + decider < self.len && self.vruntime[i + decider] <= limit;
            if !wholly {
                return (best, Some(i));
            }
            best = best.min(self.rest[i].earliest);
        }
        (best, None)
    }

    /// Slot `i`'s lowest virtual runtime.
    pub fn vruntime(&self, i: usize) -> i64 {
        self.vruntime[i]
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
    pub fn insert_slot(&mut self, at: usize, slot: Slot) {
        debug_assert!(self.len < ROOM, "a node overfilled past one slot");
        for i in (at..self.len).rev() {
            self.vruntime[i + 1] = self.vruntime[i];
            self.rest[i + 1] = self.rest[i];
        }
        self.vruntime[at] = slot.key.0;
        self.rest[at] = Rest {
            id: slot.key.1,
            child: slot.child,
            earliest: slot.earliest,
        };
        self.len += 1;
    }

    /// Takes out the slot at `at`, moving the later slots one place back.
    pub fn remove_slot(&mut self, at: usize) -> Slot {
        let slot = self.slot(at);
        for i in at + 1..self.len {
            self.vruntime[i - 1] = self.vruntime[i];
            self.rest[i - 1] = self.rest[i];
        }
        self.len -= 1;
        slot
    }

    /// Is the node past its capacity (to be split)?
    pub fn overfull(&self) -> bool {
        self.len > CAPACITY
    }
}
