//! A priority array (2.6.11's `struct prio_array`): one FIFO list per priority level and a
//! bitmap of the non-empty levels, so the best task is found in constant time.
//!
//! The lists are doubly linked through a table indexed by task id (Linux links the tasks'
//! own `run_list`), so that removing a task from the middle of a list is O(1) too.

use crate::policy::TaskId;
use alloc::vec::Vec;

const LEVELS: usize = 140;

#[derive(Debug, Clone, Copy, Default)]
struct Links {
    prev: Option<TaskId>,
    next: Option<TaskId>,
}

/// The 140 lists of one array, with their bitmap.
#[derive(Debug, Clone)]
pub struct PrioArray {
    heads: [Option<TaskId>; LEVELS],
    tails: [Option<TaskId>; LEVELS],
    links: Vec<Links>,
    bitmap: [u64; 3],
    nr_active: usize,
}

impl PrioArray {
    /// An empty array.
    pub fn new() -> Self {
        PrioArray {
            heads: [None; LEVELS],
            tails: [None; LEVELS],
            links: Vec::new(),
            bitmap: [0; 3],
            nr_active: 0,
        }
    }

    /// Tasks queued in the array.
    pub fn len(&self) -> usize {
        self.nr_active
    }

    /// No task queued?
    pub fn is_empty(&self) -> bool {
        self.nr_active == 0
    }

    fn link(&mut self, id: TaskId) -> &mut Links {
        if self.links.len() <= id.index() {
            self.links.resize(id.index() + 1, Links::default());
        }
        &mut self.links[id]
    }

    fn mark(&mut self, prio: usize) {
        let bit = 1 << (prio % 64);
        if self.heads[prio].is_some() {
            self.bitmap[prio / 64] |= bit;
        } else {
            self.bitmap[prio / 64] &= !bit;
        }
    }

    /// Queues `id` at the end of level `prio` (`enqueue_task`).
    pub fn push_back(&mut self, prio: u64, id: TaskId) {
        let p = prio as usize;
        let tail = self.tails[p];
        *self.link(id) = Links {
            prev: tail,
            next: None,
        };
        match tail {
            Some(t) => self.link(t).next = Some(id),
            None => self.heads[p] = Some(id),
        }
        self.tails[p] = Some(id);
        self.nr_active += 1;
        self.mark(p);
    }

    /// Queues `id` just before `before`, which must be queued at level `prio` (the
    /// child-runs-first position of `wake_up_new_task`).
    pub fn insert_before(&mut self, prio: u64, id: TaskId, before: TaskId) {
        let p = prio as usize;
        let prev = self.link(before).prev;
        *self.link(id) = Links {
            prev,
            next: Some(before),
        };
        self.link(before).prev = Some(id);
        match prev {
            Some(q) => self.link(q).next = Some(id),
            None => self.heads[p] = Some(id),
        }
        self.nr_active += 1;
        self.mark(p);
    }

    /// Unlinks `id`, queued at level `prio` (`dequeue_task`).
    pub fn remove(&mut self, prio: u64, id: TaskId) {
        let p = prio as usize;
        let Links { prev, next } = *self.link(id);
        match prev {
            Some(q) => self.link(q).next = next,
            None => self.heads[p] = next,
        }
        match next {
            Some(n) => self.link(n).prev = prev,
            None => self.tails[p] = prev,
        }
        *self.link(id) = Links::default();
        self.nr_active -= 1;
        self.mark(p);
    }

    /// Every queued task, the best level first, each level in its order.
    pub fn tasks(&self) -> Vec<TaskId> {
        let mut out = Vec::with_capacity(self.nr_active);
        for head in self.heads.iter() {
            let mut at = *head;
            while let Some(id) = at {
                out.push(id);
                at = self.links.get(id.index()).and_then(|l| l.next);
            }
        }
        out
    }

    /// The first task of the best (lowest-numbered) non-empty level (`sched_find_first_bit`).
    pub fn first(&self) -> Option<TaskId> {
        let (word, bits) = self.bitmap.iter().enumerate().find(|(_, b)| **b != 0)?;
        self.heads[word * 64 + bits.trailing_zeros() as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task_id::t;

    #[test]
    fn fifo_per_level_best_level_first() {
        let mut a = PrioArray::new();
        a.push_back(120, t(1));
        a.push_back(120, t(2));
        a.push_back(125, t(3));
        assert_eq!(a.first(), Some(t(1)));
        a.insert_before(120, t(4), t(1));
        assert_eq!(a.first(), Some(t(4)));
        a.remove(120, t(4));
        a.remove(120, t(1));
        assert_eq!(a.first(), Some(t(2)));
        a.remove(120, t(2));
        assert_eq!((a.first(), a.len()), (Some(t(3)), 1));
        a.remove(125, t(3));
        assert!(a.is_empty() && a.first().is_none());
        a.push_back(100, t(5));
        assert_eq!(a.first(), Some(t(5)));
    }
}
