//! The fair class in `/proc/sched_debug` (Linux's kernel/sched/debug.c): one `cfs_rq` section
//! per runqueue (`print_cfs_rq`, with a group's own entity as `print_cfs_group_stats` shows
//! it), and each task's columns of the table (`print_task`).
//!
//! The CFS eras print in 6.1's layout, the last CFS; EEVDF in 6.12's, which shows each task's
//! eligibility, deadline and slice and each queue's average virtual runtime (6.6's first
//! EEVDF printed the same values in a layout that did not line up; 6.12 tidied it). Weights
//! print on 64-bit Linux's scale. Fields for mechanisms cfslab does not have (load tracking,
//! bandwidth control, NUMA) are left out rather than shown as zeros, except the two NUMA
//! columns of the table, which keep the group path in its place for tools that split rows.

use super::Fair;
use super::entity::EntityId;
use super::runqueue::RqId;
use crate::debug_layout::{SplitNs, TaskRow, field, write_rule};
use crate::policy::TaskId;
use crate::weights::scale_load;
use core::fmt;

/// 6.1's header of the table (its rows have a fourth time, sum-block, that it forgot).
const CFS_HEADER: &str = " S            task   PID         tree-key  switches  prio     wait-time             sum-exec        sum-sleep";

/// 6.12's header.
const EEVDF_HEADER: &str = " S            task   PID       vruntime   eligible    deadline             slice          sum-exec      switches  prio         wait-time        sum-sleep       sum-block  node   group-id  group-path";

/// Linux's value for "no such entity" in `MIN_vruntime` and the like: −1, which its split
/// prints as 0.000001.
const NONE: u64 = u64::MAX;

impl Fair {
    pub(super) fn write_runqueues(&self, cpu: usize, out: &mut dyn fmt::Write) -> fmt::Result {
        // Linux walks its leaf list, where a group's queue comes before its parent's: the
        // groups first, the root last.
        let order = (1..self.runqueues.len()).chain(core::iter::once(0));
        for rq in order {
            let q = &self.runqueues[rq];
            writeln!(out, "\ncfs_rq[{cpu}]:{}", q.name)?;
            let first = q.leftmost().map_or(NONE, |id| self.se(id).vruntime);
            let last = q.rightmost().map_or(NONE, |id| self.se(id).vruntime);
            let spread = SplitNs::of(last.wrapping_sub(first));
            if self.eevdf() {
                field(out, "left_vruntime", SplitNs::of(first))?;
                field(out, "min_vruntime", SplitNs::of(q.min_vruntime))?;
                field(out, "avg_vruntime", SplitNs::of(self.avg_vruntime(rq)))?;
                field(out, "right_vruntime", SplitNs::of(last))?;
                field(out, "spread", spread)?;
            } else {
                let root_min = self.runqueues[0].min_vruntime;
                field(out, "MIN_vruntime", SplitNs::of(first))?;
                field(out, "min_vruntime", SplitNs::of(q.min_vruntime))?;
                field(out, "max_vruntime", SplitNs::of(last))?;
                field(out, "spread", spread)?;
                field(
                    out,
                    "spread0",
                    SplitNs::of(q.min_vruntime.wrapping_sub(root_min)),
                )?;
            }
            field(out, "nr_running", q.nr_running)?;
            field(out, "h_nr_running", self.h_nr_running(rq))?;
            field(out, "load", scale_load(q.load))?;
            if let Some(owner) = q.owner {
                let g = self.se(owner);
                field(out, "se->exec_start", SplitNs::of(g.exec_start))?;
                field(out, "se->vruntime", SplitNs::of(g.vruntime))?;
                field(out, "se->sum_exec_runtime", SplitNs::of(g.sum_exec_runtime))?;
                field(out, "se->load.weight", scale_load(g.weight))?;
            }
        }
        Ok(())
    }

    pub(super) fn write_task_header(&self, out: &mut dyn fmt::Write) -> fmt::Result {
        let header = if self.eevdf() {
            EEVDF_HEADER
        } else {
            CFS_HEADER
        };
        writeln!(out, "{header}")?;
        write_rule(out, header)
    }

    pub(super) fn write_task(
        &self,
        task: TaskId,
        row: &TaskRow<'_>,
        out: &mut dyn fmt::Write,
    ) -> fmt::Result {
        let Some(id) = self.tasks.get(task.index()).copied().flatten() else {
            return Ok(());
        };
        let se = self.se(id);
        let group = &self.rq(se.rq).name;
        row.write_start(out)?;
        let (wait, sleep) = (SplitNs::of(row.wait_ns), SplitNs::of(row.sleep_ns));
        // cfslab does not tell uninterruptible sleep apart: its sum-block stays 0.
        let block = SplitNs(0);
        let sum_exec = SplitNs::of(se.sum_exec_runtime);
        if self.eevdf() {
            let eligible = if self.entity_eligible(se.rq, id) {
                'E'
            } else {
                'N'
            };
            writeln!(
                out,
                " {:>16}   {eligible}   {:>16}   {:>16} {sum_exec:>16} {:>9}   {:>5} \
                 {wait:>16} {sleep:>16} {block:>16}   0      0        {group}",
                SplitNs::of(se.vruntime),
                SplitNs::of(se.deadline),
                SplitNs::of(se.slice),
                row.switches,
                row.prio,
            )
        } else {
            writeln!(
                out,
                " {:>16} {:>9} {:>5} {wait:>16} {sum_exec:>16} {sleep:>16} {block:>16} 0 0 {group}",
                SplitNs::of(se.vruntime),
                row.switches,
                row.prio,
            )
        }
    }

    /// Tasks queued on `rq` or on a group queue below it (`h_nr_running`).
    fn h_nr_running(&self, rq: RqId) -> usize {
        let below = |mut at: EntityId| loop {
            let se = self.se(at);
            if se.rq == rq {
                return true;
            }
            match se.parent {
                Some(parent) => at = parent,
                None => return false,
            }
        };
        self.tasks
            .iter()
            .flatten()
            .filter(|&&id| self.se(id).on_rq && below(id))
            .count()
    }
}
