//! The scheduler tick (Linux's `scheduler_tick`), the one scheduler entry of the timer
//! interrupt's tick: the running task's runqueue and policy, the balancer's periodic
//! pass, and — on the boot CPU — the load average and the invariant's checker.

use super::loadavg;
use super::state::with_sched;
use crate::percpu::this_cpu;

/// The scheduler tick (from the timer interrupt), which found the CPU in ring 3 if
/// `user_mode`: the policy may ask for a preemption.
pub fn tick(now: u64, user_mode: bool) {
    with_sched(|s| {
        s.this_rq_mut().tick(now, user_mode);
        s.balance_tick(now);
        // The load average is the machine's: sampled once, by the boot CPU's tick.
        if this_cpu().index() == 0 {
            loadavg::tick(now, || s.runnable_tasks());
            s.check_invariant(now);
        }
    });
    if user_mode {
        this_cpu().count_user_tick();
    }
}
