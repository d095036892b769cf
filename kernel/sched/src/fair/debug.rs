//! A `/proc/sched_debug`-like dump of the fair class: each runqueue with its sums, then the
//! tasks on it, the running one marked `>R`.

use super::Fair;
use crate::weights::vdiff;
use core::fmt;

impl Fair {
    pub(super) fn dump(&self, out: &mut dyn fmt::Write) -> fmt::Result {
        let p = &self.params;
        writeln!(
            out,
            "sched_debug: {} era {} grouping {:?}",
            if self.eevdf() { "eevdf" } else { "cfs" },
            p.era,
            p.grouping
        )?;
        writeln!(
            out,
            "  latency {} ns, min_granularity {} ns, wakeup_granularity {} ns, nr_latency {}, base_slice {} ns",
            p.tunables.latency_ns,
            p.tunables.min_granularity_ns,
            p.tunables.wakeup_granularity_ns,
            p.tunables.nr_latency,
            p.tunables.base_slice_ns
        )?;
        writeln!(out, "  features {:?}", p.features)?;
        for (rq_id, q) in self.runqueues.iter().enumerate() {
            writeln!(out, "cfs_rq[{rq_id}]:{}", q.name)?;
            writeln!(out, "  .min_vruntime {}", q.min_vruntime as i64)?;
            writeln!(out, "  .load {}  .nr_running {}", q.load, q.nr_running)?;
            if let Some(owner) = q.owner {
                let g = self.se(owner);
                writeln!(
                    out,
                    "  group entity: weight {} vruntime {} on_rq {}",
                    g.weight, g.vruntime as i64, g.on_rq
                )?;
            }
            for (id, se) in self.entities.iter().enumerate() {
                let Some(se) = se else { continue };
                let Some(task) = se.task else { continue };
                if se.rq != rq_id {
                    continue;
                }
                let running = if q.curr == Some(id) {
                    ">R"
                } else if se.on_rq {
                    " Q"
                } else {
                    " S"
                };
                write!(
                    out,
                    " {running} task {task:>5} uid {:>5} nice {:>3} weight {:>6} vruntime {:>+12} sum_exec {:>12}",
                    se.uid,
                    se.nice,
                    se.weight,
                    vdiff(se.vruntime, q.min_vruntime),
                    se.sum_exec_runtime
                )?;
                if self.eevdf() {
                    write!(out, " deadline {:>+12}", vdiff(se.deadline, q.min_vruntime))?;
                }
                writeln!(out)?;
            }
        }
        Ok(())
    }
}
