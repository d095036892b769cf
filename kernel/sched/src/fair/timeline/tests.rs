//! The timeline against a plain map: the same answers after any inserts and removes,
//! and every structural invariant kept (node capacity is 4 under test, so that a few dozen
//! entities already make trees several levels deep).

use super::node::CAPACITY;
use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

impl Timeline {
    /// Checks every invariant: keys in order, each slot's lowest key and earliest deadline
    /// exact, node sizes within bounds, links (parents, the entity index) right, all leaves
    /// at the same depth.
    fn check(&self) {
        if self.root == NONE || self.len == 0 {
            assert_eq!(self.len, 0);
            assert!(
                self.root == NONE || self.node(self.root).leaf,
                "an empty tree's root"
            );
            return;
        }
        assert_eq!(self.node(self.root).parent, NONE);
        let (count, _) = self.check_node(self.root, true);
        assert_eq!(count, self.len);
        let keys = self.keys();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "keys out of order");
        let indexed = self.leaf_of.iter().filter(|&&n| n != NONE).count();
        assert_eq!(indexed, self.len, "the entity index");
    }

    /// (entities below, depth of the leaves below)
    fn check_node(&self, n: u32, is_root: bool) -> (usize, usize) {
        let node = self.node(n);
        assert!(node.len <= CAPACITY && node.len > 0);
        assert!(is_root || node.len >= MIN_LEN, "underfull node");
        if node.leaf {
            for i in 0..node.len {
                let key = node.key(i);
                let id = key.1;
                if self.tracks_deadlines {
                    assert_eq!(node.earliest_at(i).key, key, "a leaf slot is its entity");
                }
                assert_eq!(self.leaf_of[id as usize], n, "entity {id}'s leaf");
            }
            return (node.len, 0);
        }
        let (mut count, mut depth) = (0, None);
        for i in 0..node.len {
            let c = node.child(i);
            let child = self.node(c);
            assert_eq!(child.parent, n, "child {c}'s parent");
            assert_eq!(node.key(i), child.key(0), "slot {i}'s lowest key");
            if self.tracks_deadlines {
                assert_eq!(
                    Some(node.earliest_at(i)),
                    child.earliest(),
                    "slot {i}'s earliest"
                );
            }
            let (below, d) = self.check_node(c, false);
            assert!(depth.is_none_or(|depth| depth == d), "leaves at one depth");
            (count, depth) = (count + below, Some(d));
        }
        (count, depth.unwrap() + 1)
    }
}

proptest! {
    /// After any inserts and removes, the pick is the earliest deadline among keys up to a
    /// threshold (of equal deadlines, the lowest key), and the order and both ends are the
    /// map's — with deadlines tracked (EEVDF) or not (CFS, which asks only for the order).
    #[test]
    fn picks_the_earliest_eligible_deadline(
        // Half the deadlines from four values, so that ties are common (their rule, and the
        // climb that a tie cuts short, are tested as much as distinct deadlines).
        ops in prop::collection::vec(
            (0i64..200, 0usize..60, prop_oneof![-500i64..500, 0i64..4], any::<bool>()),
            1..400,
        ),
        threshold in -10i64..210,
        tracks_deadlines in any::<bool>(),
    ) {
        let mut tree = Timeline::new(tracks_deadlines);
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
            tree.check();
            let expected = model
                .iter()
                .filter(|(k, _)| k.0 <= threshold)
                .min_by_key(|&(k, d)| (*d, *k))
                .map(|(k, _)| k.1);
            if tracks_deadlines {
                prop_assert_eq!(tree.pick(threshold), expected);
            }
            prop_assert_eq!(tree.first(), model.keys().next().copied());
            prop_assert_eq!(tree.last(), model.keys().next_back().copied());
            prop_assert_eq!(tree.len(), model.len());
        }
        prop_assert_eq!(tree.keys(), model.keys().copied().collect::<Vec<_>>());
    }
}

/// A scheduler's pattern at scale: 2 000 entities, the earliest eligible one taken out and
/// put back further right, again and again, as picks and `put_prev` do; the tree stays
/// valid and agrees with the map throughout.
#[test]
fn a_long_run_of_picks_and_put_backs_keeps_the_tree_valid() {
    let mut tree = Timeline::new(true);
    let mut model: BTreeMap<Key, i64> = BTreeMap::new();
    let mut at: BTreeMap<EntityId, Key> = BTreeMap::new();
    for id in 0..2_000usize {
        let v = (id as i64 * 7919) % 1000;
        tree.insert((v, id), v + 500);
        model.insert((v, id), v + 500);
        at.insert(id, (v, id));
    }
    tree.check();
    for round in 0..20_000i64 {
        let limit = 300 + round / 4;
        let picked = tree.pick(limit);
        let expected = model
            .iter()
            .filter(|(k, _)| k.0 <= limit)
            .min_by_key(|&(k, d)| (*d, *k))
            .map(|(k, _)| k.1);
        assert_eq!(picked, expected, "round {round}");
        let id = picked.unwrap_or(round as usize % 2_000);
        let key = at[&id];
        assert!(tree.remove(key));
        model.remove(&key);
        let v = key.0 + 1 + (round % 13);
        tree.insert((v, id), v + 500);
        model.insert((v, id), v + 500);
        at.insert(id, (v, id));
        if round % 997 == 0 {
            tree.check();
        }
    }
    tree.check();
    assert_eq!(tree.keys(), model.keys().copied().collect::<Vec<_>>());
    // Emptied in key order, the tree shrinks back to nothing.
    for key in model.keys() {
        assert!(tree.remove(*key));
    }
    tree.check();
    assert!(tree.is_empty() && tree.first().is_none() && tree.pick(i64::MAX).is_none());
    // And gives its nodes back: what it holds does not depend on how full it once was.
    assert_eq!((tree.nodes.capacity(), tree.free.capacity()), (0, 0));
    tree.insert((1, 7), 2);
    tree.check();
    assert_eq!((tree.first(), tree.nodes.len()), (Some((1, 7)), 1));
}

#[test]
fn a_queue_of_one_task_keeps_its_root_leaf() {
    // A task picked and put back empties a one-leaf tree each time; that leaf stays.
    let mut tree = Timeline::new(false);
    tree.insert((5, 0), 0);
    assert!(tree.remove((5, 0)));
    assert_eq!(tree.nodes.len(), 1);
}

#[test]
fn removing_what_is_not_there_changes_nothing() {
    let mut tree = Timeline::new(true);
    tree.insert((5, 1), 10);
    assert!(!tree.remove((5, 2)));
    assert!(!tree.remove((6, 1)));
    assert_eq!(tree.pick(i64::MAX), Some(1));
    assert!(tree.remove((5, 1)));
    assert_eq!(tree.pick(i64::MAX), None);
    assert!(tree.is_empty());
}

/// Equal deadlines go to the entity further left in the timeline, whatever the ids, and
/// wherever the entities sit in the tree: here 40 entities with one deadline, inserted
/// right to left, then the leftmost ones removed one by one.
#[test]
fn equal_deadlines_go_to_the_leftmost_entity() {
    let mut tree = Timeline::new(true);
    for id in 0..40usize {
        let v = 100 - id as i64;
        tree.insert((v, id), 7);
        assert_eq!(tree.pick(i64::MAX), Some(id), "after inserting {id}");
    }
    tree.check();
    for id in (0..40usize).rev() {
        assert_eq!(tree.pick(i64::MAX), Some(id));
        assert_eq!(tree.pick(100 - id as i64 - 1), None, "nothing left of it");
        assert!(tree.remove((100 - id as i64, id)));
    }
    assert!(tree.is_empty());
}
