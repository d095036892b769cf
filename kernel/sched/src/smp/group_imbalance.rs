//! A group whose CPUs could not balance among themselves for their tasks' affinity
//! (`sched_group_capacity::imbalance`, `sg_imbalanced`, kernel/sched/fair.c; Peter
//! Zijlstra's "sched: Rewrite group_imb trigger", 2013 — in 4.1 and in 6.6).
//!
//! Affinity can keep a level from balancing. Two CPUs of a node, one idle and one running
//! two tasks that may not run on the idle one: the idle CPU's pass at the node's level finds
//! the imbalance and can move nothing. One level up, the node looks *fully busy* — two tasks
//! on two CPUs — and no CPU of another node pulls from a group that is not overloaded, so
//! one of the two tasks waits for good while a CPU elsewhere could run it.
//!
//! So a pass left with part of its imbalance because some task was pinned marks its CPU's
//! group one level up (`sd_parent->groups->sgc->imbalance`): that group is *imbalanced*, a
//! type above every other but *overloaded* (`group_imbalanced`), and a CPU balancing the
//! level above takes one task from it, whatever the averages say — one its affinity lets it
//! take. The mark goes when a pass at the lower level ends balanced — in 6.6, unless every
//! task it looked at was pinned: the tasks that could move have had their chance.
//!
//! The mark belongs to the group, shared by its CPUs (Linux keeps it in the group's
//! `sched_group_capacity`, one for each group at each level): here the group's lowest CPU keeps it,
//! for the topology level (`Domain::topology_level`) and the group's CPUs ([`ImbalancedGroups`], in
//! that CPU's [`CpuBalance`](super::runqueues::CpuBalance)). A rebuild of the domains starts with
//! none marked, as Linux's new groups do.
//!
//! (What 2.6.24 to 3.11 called `group_imb` is another test: a group whose CPUs' loads
//! differ by more than a task's, computed afresh at each pass — `busiest`'s 2.6.24 and
//! 2.6.36 rules.)

use super::cpuset::CpuSet;
use super::runqueues::Runqueues;
use alloc::vec::Vec;

/// The groups a CPU keeps the mark of: each by its topology level and its CPUs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImbalancedGroups(Vec<(usize, CpuSet)>);

impl ImbalancedGroups {
    /// Whether the group of `cpus` at topology level `level` is marked.
    pub fn contains(&self, level: usize, cpus: CpuSet) -> bool {
        self.0.contains(&(level, cpus))
    }

    /// Marks the group of `cpus` at `level` (`on`), or clears its mark.
    pub fn set(&mut self, level: usize, cpus: CpuSet, on: bool) {
        let at = self.0.iter().position(|&g| g == (level, cpus));
        match (at, on) {
            (None, true) => self.0.push((level, cpus)),
            (Some(i), false) => {
                self.0.swap_remove(i);
            }
            _ => {}
        }
    }
}

/// Whether the group of `cpus` at topology level `level` is marked, as its lowest CPU keeps it.
pub fn marked<R: Runqueues + ?Sized>(r: &R, level: usize, cpus: CpuSet) -> bool {
    let keeper = cpus.lowest();
    keeper.is_some_and(|k| r.balance(k).imbalanced_groups.contains(level, cpus))
}

/// Marks the group of `cpus` at `level` (`on`), or clears its mark.
pub fn mark<R: Runqueues + ?Sized>(r: &mut R, level: usize, cpus: CpuSet, on: bool) {
    if let Some(keeper) = cpus.lowest() {
        r.reach(keeper);
        r.balance_mut(keeper).imbalanced_groups.set(level, cpus, on);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_is_set_once_and_cleared_per_level_and_group() {
        let mut marks = ImbalancedGroups::default();
        let node = CpuSet::first(2);
        marks.set(2, node, true);
        marks.set(2, node, true);
        assert!(marks.contains(2, node));
        assert!(!marks.contains(3, node), "another level's group");
        assert!(!marks.contains(2, CpuSet::one(0)), "another group");
        marks.set(2, node, false);
        assert_eq!(marks, ImbalancedGroups::default(), "one entry, gone");
    }
}
