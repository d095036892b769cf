//! Which tasks a 6.6 pass pulls (`detach_tasks`, `can_migrate_task`, kernel/sched/fair.c).
//!
//! One list of the busiest CPU's fair tasks whatever their group (`rq->cfs_tasks`), walked
//! from its tail — the least recently run first — at most as many as it has tasks (and 32).
//! A task that may move (its affinity allows the balancing CPU, it is not running, it is
//! not cache-hot or the domain has failed more than `cache_nice_tries` times) is taken if
//! it fits what is to move, which the pass counts in its migration type's units:
//! - **load**: its `task_h_load`, at least 1, halved once per failed pass
//!   (`shr_bound(load, nr_balance_failed)`), must not exceed what is left — each failure
//!   lets a heavier task go;
//! - **utilisation**: its utilisation must not exceed the spare capacity left;
//! - **tasks**: one each.
//!
//! The walk stops once nothing is left to move, and — unless the balancing CPU is busy —
//! before it would leave the busiest CPU empty. A CPU about to go idle takes one task at
//! most (a preemptible kernel's rule: a long walk there would delay what it is to run).
//!
//! A task kept away by its affinity is noted (`LBF_SOME_PINNED`), with the first CPU of the
//! balancing CPU's group it could go to instead (`LBF_DST_PINNED`): the pass may look again
//! for that CPU ([`balancer`](crate::smp::balancer)), and a level above may hear that this
//! one could not balance (`smp::group_imbalance`).

use super::{Candidate, Env, Look, NR_MIGRATE, Pulled, can_migrate};
use crate::smp::busiest::{IdleType, Migration};

/// `detach_tasks` over `tasks` (the tail of the list first) for `imbalance` in
/// `migration`'s units; `nr_running` is how many tasks the busiest CPU runs.
pub fn detach_tasks(
    tasks: &[Candidate],
    migration: Migration,
    imbalance: u64,
    nr_running: usize,
    why: IdleType,
    env: &Env,
) -> Pulled {
    let mut pulled = Pulled {
        all_pinned: true,
        ..Pulled::default()
    };
    if nr_running <= 1 {
        pulled.all_pinned = false;
        pulled.left = imbalance;
        return pulled;
    }
    let loop_max = nr_running.min(NR_MIGRATE);
    let (mut left, mut rem) = (nr_running, imbalance as i64);
    let mut look = Look::default();
    for (looked, c) in tasks.iter().enumerate() {
        if why != IdleType::NotIdle && left <= 1 {
            break;
        }
        if looked + 1 > loop_max {
            break;
        }
        if !can_migrate(c, env, &mut look) {
            continue;
        }
        let amount = match migration {
            Migration::Load => {
                let load = c.weight.max(1);
                if (load >> env.nr_balance_failed.min(63)) as i64 > rem {
                    continue;
                }
                load
            }
            Migration::Util if c.util as i64 > rem => continue,
            Migration::Util => c.util,
            Migration::Task => 1,
        };
        rem -= amount as i64;
        pulled.tasks.push(c.task);
        // Counted as moved even when it carried no utilisation (Linux counts tasks).
        pulled.load += amount.max(1);
        left -= 1;
        if why == IdleType::NewlyIdle || rem <= 0 {
            break;
        }
    }
    pulled.all_pinned = !look.one_allowed;
    pulled.some_pinned = look.some_pinned;
    pulled.new_dst = look.new_dst;
    pulled.left = rem.max(0) as u64;
    pulled
}

#[cfg(test)]
mod tests;
