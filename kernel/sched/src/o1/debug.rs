//! The O(1) scheduler in `/proc/sched_debug`. 2.6.11 had no such file (it came with CFS in
//! 2.6.23), so cfslab gives O(1) the file's frame and its own section: the two priority
//! arrays, and for each task the values that decide its fate — its array (`A` active, `E`
//! expired, `-` neither: asleep or running), its dynamic and static priorities, the ticks
//! left of its slice, its `sleep_avg` and the bonus that comes from it, and whether that
//! makes it interactive.

use super::{NS_PER_MS, O1};
use crate::debug_layout::{SplitNs, TaskRow, field, write_rule};
use crate::policy::TaskId;
use core::fmt;

const HEADER: &str = " S            task   PID  array  prio  static_prio  timeslice  sleep_avg  bonus  interactive  switches        wait-time         sum-exec        sum-sleep";

impl O1 {
    pub(super) fn write_runqueue(&self, cpu: usize, out: &mut dyn fmt::Write) -> fmt::Result {
        let (active, expired) = (&self.arrays[self.active], &self.arrays[1 - self.active]);
        writeln!(out, "\no1_rq[{cpu}]:")?;
        field(out, "nr_running", active.len() + expired.len())?;
        field(out, "active.nr_active", active.len())?;
        field(out, "expired.nr_active", expired.len())?;
        field(out, "best_expired_prio", self.best_expired_prio)?;
        match self.expired_timestamp {
            Some(at) => field(out, "expired_timestamp", SplitNs::of(at)),
            None => field(out, "expired_timestamp", "-"),
        }?;
        field(out, "tick", SplitNs::of(self.tick_ns))
    }

    pub(super) fn write_task_header(&self, out: &mut dyn fmt::Write) -> fmt::Result {
        writeln!(out, "{HEADER}")?;
        write_rule(out, HEADER)
    }

    pub(super) fn write_task(
        &self,
        task: TaskId,
        row: &TaskRow<'_>,
        out: &mut dyn fmt::Write,
    ) -> fmt::Result {
        let Some(t) = self.tasks.get(task.index()).and_then(Option::as_ref) else {
            return Ok(());
        };
        let array = match t.in_active {
            Some(true) => 'A',
            Some(false) => 'E',
            None => '-',
        };
        row.write_start(out)?;
        writeln!(
            out,
            "  {array:>5} {:>5} {:>12} {:>10} {:>10} {:>6} {:>12} {:>9} {:>16} {:>16} {:>16}",
            t.prio,
            t.static_prio,
            t.time_slice,
            t.sleep_avg / NS_PER_MS,
            Self::bonus(t),
            if Self::interactive(t) { "yes" } else { "no" },
            row.switches,
            SplitNs::of(row.wait_ns),
            SplitNs::of(t.sum_exec_runtime),
            SplitNs::of(row.sleep_ns),
        )
    }
}
