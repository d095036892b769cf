//! What a 4.1 or 6.6 pass does about tasks whose affinity keeps them from the balancing CPU
//! (`load_balance`'s `LBF_DST_PINNED` and `LBF_SOME_PINNED` paths, kernel/sched/fair.c).
//!
//! - **Another CPU of the group.** A task the balancing CPU may not take may be allowed on another
//!   CPU that balances for the balancing CPU's group at this level (its balance mask: the whole
//!   group, but in 6.6's NUMA levels). If what is to move is not all moved, the pass looks at the
//!   same busiest CPU again on that CPU's behalf and moves tasks there (Srivatsa Vaddagiri's
//!   "sched: Improve balance_cpu() to consider other cpus in its group as target of (pinned) task",
//!   2012). Not for a CPU about to go idle, which takes only what it can run itself.
//! - **The mark one level up.** A pass that still leaves part of its imbalance, some task
//!   having been pinned, marks its CPU's group at the level above as imbalanced; a pass
//!   that ends balanced clears it (6.6: unless every task it looked at was pinned)
//!   ([`group_imbalance`](crate::smp::group_imbalance)).

use super::Machine;
use crate::smp::busiest::{IdleType, Migration};
use crate::smp::cpuset::CpuSet;
use crate::smp::domains::{Domain, Rules};
use crate::smp::move_tasks::v6_6::detach_tasks;
use crate::smp::move_tasks::{Env, Pulled};

/// The group a pass of `domain` marks or clears: its CPU's group one level up (the
/// parent's first group), in the eras that keep the mark.
pub(super) fn parents_group(domain: &Domain, parent: Option<&Domain>) -> Option<(usize, CpuSet)> {
    let parent = parent.filter(|_| domain.rules == Rules::V6_6)?;
    Some((parent.topology_level, parent.groups.first()?.cpus))
}

/// Which of `domain`'s groups are marked imbalanced, in its groups' order.
pub(super) fn marks(domain: &Domain, m: &mut impl Machine) -> alloc::vec::Vec<bool> {
    let level = domain.topology_level;
    domain
        .groups
        .iter()
        .map(|g| m.group_imbalanced(level, g.cpus))
        .collect()
}

/// What a pass is to move from the busiest CPU, which runs `nr_running` tasks.
pub(super) struct ToMove {
    pub migration: Migration,
    pub imbalance: u64,
    pub why: IdleType,
    pub nr_running: usize,
}

/// 6.6's `detach_tasks` from `busiest` for `env.this_cpu`, then — while some of `what` is
/// left and a task refused for its affinity could run on another CPU of `local_group` (the
/// CPUs that balance for this CPU's group) among
/// `cpus` — again for that CPU, which leaves `cpus`. Pulls what it takes, and returns it all:
/// every task moved, the load, "all pinned" if no look found a task allowed where it
/// looked, "some pinned" if any did not, what is left, and how many went to another CPU.
pub(super) fn detach_here_or_beside(
    m: &mut impl Machine,
    busiest: usize,
    what: &ToMove,
    mut env: Env,
    local_group: CpuSet,
    cpus: &mut CpuSet,
) -> Pulled {
    let others = |cpus: CpuSet| {
        if what.why == IdleType::NewlyIdle {
            CpuSet::EMPTY
        } else {
            local_group & cpus
        }
    };
    env.dst_group = others(*cpus);
    let this_cpu = env.this_cpu;
    let mut all = Pulled {
        all_pinned: true,
        left: what.imbalance,
        ..Pulled::default()
    };
    loop {
        // The busiest CPU's tasks now: those the looks so far did not take — no more than
        // are there, under its lock (`detach_tasks` reads `src_rq->nr_running` so: a pass
        // that let go of the runqueues may find the busiest CPU drained since it read it).
        let tasks = m.queues(busiest, env.this_cpu).candidates();
        let there = m.nr_running(busiest).unwrap_or(usize::MAX);
        let nr_running = (what.nr_running - all.tasks.len()).min(there);
        let look = detach_tasks(&tasks, what.migration, all.left, nr_running, what.why, &env);
        m.pull(busiest, env.this_cpu, &look.tasks);
        all.tasks.extend_from_slice(&look.tasks);
        all.load += look.load;
        all.all_pinned &= look.all_pinned;
        all.some_pinned |= look.some_pinned;
        all.left = look.left;
        if env.this_cpu != this_cpu {
            all.elsewhere += look.tasks.len();
        }
        match look.new_dst {
            Some(dst) if look.left > 0 => {
                *cpus = cpus.without(env.this_cpu);
                env.this_cpu = dst;
                env.dst_group = others(*cpus);
            }
            _ => return all,
        }
    }
}
