//! A `/proc/sched_debug`-like dump of the O(1) runqueue: each task with its array (active
//! `A`, expired `E`, sleeping `S`, running `>R`), priorities, slice and sleep_avg bonus.

use super::{NS_PER_MS, O1};
use core::fmt;

impl O1 {
    pub(super) fn dump(&self, out: &mut dyn fmt::Write) -> fmt::Result {
        writeln!(out, "sched_debug: o1 (2.6.11), tick {} ns", self.tick_ns)?;
        for (id, t) in self.tasks.iter().enumerate() {
            let Some(t) = t else { continue };
            let state = match (self.current == Some(id), t.in_active) {
                (true, _) => ">R",
                (false, Some(true)) => " A",
                (false, Some(false)) => " E",
                (false, None) => " S",
            };
            writeln!(
                out,
                " {state} task {id:>5} static_prio {} prio {} slice {} ticks sleep_avg {} ms bonus {} {}",
                t.static_prio,
                t.prio,
                t.time_slice,
                t.sleep_avg / NS_PER_MS,
                Self::bonus(t),
                if Self::interactive(t) {
                    "interactive"
                } else {
                    ""
                }
            )?;
        }
        Ok(())
    }
}
