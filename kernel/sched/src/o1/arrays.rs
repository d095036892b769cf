//! A priority array (2.6.11's `struct prio_array`): one FIFO list per priority level and a
//! bitmap of the non-empty levels, so the best task is found in constant time.

use crate::policy::TaskId;
use alloc::collections::VecDeque;
use alloc::vec::Vec;

const LEVELS: usize = 140;

#[derive(Debug, Clone)]
pub struct PrioArray {
    queues: Vec<VecDeque<TaskId>>,
    bitmap: [u64; 3],
    nr_active: usize,
}

impl PrioArray {
    pub fn new() -> Self {
        PrioArray {
            queues: alloc::vec![VecDeque::new(); LEVELS],
            bitmap: [0; 3],
            nr_active: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.nr_active
    }

    pub fn is_empty(&self) -> bool {
        self.nr_active == 0
    }

    fn mark(&mut self, prio: usize) {
        if self.queues[prio].is_empty() {
            self.bitmap[prio / 64] &= !(1 << (prio % 64));
        } else {
            self.bitmap[prio / 64] |= 1 << (prio % 64);
        }
    }

    pub fn push_back(&mut self, prio: u64, id: TaskId) {
        self.queues[prio as usize].push_back(id);
        self.nr_active += 1;
        self.mark(prio as usize);
    }

    /// Queues `id` just before `before` (the child-runs-first position of `wake_up_new_task`).
    pub fn insert_before(&mut self, prio: u64, id: TaskId, before: TaskId) {
        let queue = &mut self.queues[prio as usize];
        let at = queue
            .iter()
            .position(|&t| t == before)
            .unwrap_or(queue.len());
        queue.insert(at, id);
        self.nr_active += 1;
        self.mark(prio as usize);
    }

    pub fn remove(&mut self, prio: u64, id: TaskId) {
        let queue = &mut self.queues[prio as usize];
        if let Some(at) = queue.iter().position(|&t| t == id) {
            queue.remove(at);
            self.nr_active -= 1;
        }
        self.mark(prio as usize);
    }

    /// The first task of the best (lowest-numbered) non-empty level (`sched_find_first_bit`).
    pub fn first(&self) -> Option<TaskId> {
        let (word, bits) = self.bitmap.iter().enumerate().find(|(_, b)| **b != 0)?;
        let prio = word * 64 + bits.trailing_zeros() as usize;
        self.queues[prio].front().copied()
    }
}
