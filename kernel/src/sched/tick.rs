//! The scheduler tick (Linux's `scheduler_tick`), the one scheduler entry of the timer
//! interrupt's tick: under this CPU's runqueue lock alone, the running task's charge and the
//! policy's check, and the CPU's own share of balancing (its load history); then, under the
//! scheduler's lock and every runqueue's, only when there is something to do there — a
//! balancing pass due (Linux raises its balancing softirq only then too), or, on the boot
//! CPU, a load-average sample or the invariant's check.

use super::balance::state::{TickRest, checking_invariant};
use super::state::{ONLINE, with_sched};
use super::{loadavg, runqueue};
use crate::percpu::this_cpu;
use core::sync::atomic::Ordering;

/// The scheduler tick (from the timer interrupt), which found the CPU in ring 3 if
/// `user_mode`: the policy may ask for a preemption.
pub fn tick(now: u64, user_mode: bool) {
    let cpu = this_cpu().index();
    let jiffies = now / crate::time::tick_ns();
    let rest = {
        let mut rq = runqueue::lock(cpu);
        let rq = rq.as_mut().expect("a runqueue");
        rq.tick(now, user_mode);
        rq.balance_tick_here(jiffies, ONLINE.load(Ordering::Relaxed))
    };
    // The load average and the invariant are the machine's: looked at by the boot CPU's
    // tick (CPU 0 never stops its tick).
    let machine = cpu == 0 && (loadavg::due(now) || checking_invariant());
    if rest != TickRest::Nothing || machine {
        with_sched(|s| {
            s.balance_tick(now, rest);
            if cpu == 0 {
                loadavg::tick(now, || s.runnable_tasks());
                s.check_invariant(now);
            }
        });
    }
    if user_mode {
        this_cpu().count_user_tick();
    }
}
