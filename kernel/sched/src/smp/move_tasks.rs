//! Which tasks a balancing CPU pulls from the busiest one, as 2.6.24 chose them
//! (`balance_tasks`, `can_migrate_task`, `task_hot`, and the fair class's
//! `load_balance_fair`, kernel/sched.c and kernel/sched_fair.c).
//!
//! The busiest CPU's fair tasks are looked at in its timeline's order — the waiting tasks
//! most owed CPU time first; the running one is not in the timeline — at most 33 of them
//! (`sysctl_sched_nr_migrate`, 32, checked after the count is taken). One is pulled if:
//! - its affinity allows the balancing CPU (if no task's does, every one is *pinned*, and
//!   the caller tries another CPU);
//! - it is not running;
//! - it is not cache-hot — it last ran more than `sysctl_sched_migration_cost` (0.5 ms)
//!   ago — unless the domain has failed to balance more than `cache_nice_tries` times;
//! - it is not heavier than twice what is left to move plus a task's slack — unless it
//!   would be the best-priority task on the balancing CPU.
//!
//! Pulling stops once the load moved reaches the imbalance (it may pass it by one task).
//!
//! Without groups (a kernel without FAIR_GROUP_SCHED) one look seeks the whole imbalance.
//! With groups (per-uid, 2.6.24's FAIR_USER_SCHED) the same is done group by group: each
//! group whose tasks weigh more on the busiest CPU than here gives up to half the
//! difference, so that each group's weight evens out between the two CPUs — weight of
//! tasks, not of the groups' shares: the era's known unfairness.

use super::cpuset::CpuSet;
use crate::policy::TaskId;
use alloc::vec::Vec;

/// `sysctl_sched_migration_cost`: a task that ran less than this long ago is cache-hot.
pub const MIGRATION_COST_NS: u64 = 500_000;
/// `sysctl_sched_nr_migrate`: how many tasks one pass looks at (one more, as 2.6.24 counts).
pub const NR_MIGRATE: usize = 32;
/// `MAX_PRIO`: the priority of no task at all (an idle CPU's "best").
pub const MAX_PRIO: u32 = 140;

/// A task on the busiest CPU, as the balancer sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// Its id.
    pub task: TaskId,
    /// Its load weight.
    pub weight: u64,
    /// Its priority (100–139 for nice −20 to 19; lower is better).
    pub prio: u32,
    /// The CPUs it may run on.
    pub allowed: CpuSet,
    /// When it last ran (`se.exec_start`).
    pub last_ran: u64,
    /// Whether it runs now on the busiest CPU.
    pub running: bool,
    /// 6.6: its utilisation (`task_util_est`, here its `util_avg`); 0 before.
    pub util: u64,
}

/// What the pass knows of the domain and the time.
#[derive(Debug, Clone, Copy)]
pub struct Env {
    /// The balancing CPU.
    pub this_cpu: usize,
    /// The busiest CPU's clock.
    pub now: u64,
    /// The domain's `nr_balance_failed` and `cache_nice_tries`.
    pub nr_balance_failed: u64,
    /// See `nr_balance_failed`.
    pub cache_nice_tries: u64,
    /// 2.6.24–2.6.26: a task heavier than twice what is left (plus a nice-0 task's slack)
    /// may still move if it would be the best-priority task here. 2.6.27 dropped both
    /// ("remove prio preference from balance decisions"): from then on such a task stays.
    pub favour_best_prio: bool,
    /// 2.6.34–: the look is taken again while it moves something and the imbalance is not
    /// met (`move_tasks` calling `load_balance_fair` in a loop, "Remove the sched_class
    /// load_balance methods"); before, once.
    pub repeat_look: bool,
    /// 6.6: the CPUs a task kept from the balancing CPU by its affinity may go to instead —
    /// the CPUs that balance for the balancing CPU's group at this level (its balance mask:
    /// the whole group but in NUMA levels), those the pass has not tried
    /// (`env->dst_grpmask` and `env->cpus`); empty in the other eras and for a CPU about to
    /// go idle, which takes what it can itself.
    pub dst_group: CpuSet,
}

/// What a pass pulled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pulled {
    /// The tasks to move, in the order chosen.
    pub tasks: Vec<TaskId>,
    /// The load they carry, in the imbalance's units: their weight, or with split shares
    /// the part of the busiest CPU's load it stands for.
    pub load: u64,
    /// Every task the last look examined was kept away by its affinity (or it had none to
    /// look at); a look for no load clears it, as does no look at all.
    pub all_pinned: bool,
    /// 6.6: some task was kept away by its affinity (`LBF_SOME_PINNED`).
    pub some_pinned: bool,
    /// 6.6: a CPU of [`Env::dst_group`] the first such task may run on, where the pass
    /// may try again (`LBF_DST_PINNED`, `new_dst_cpu`).
    pub new_dst: Option<usize>,
    /// 6.6: what is left of the imbalance, in its units.
    pub left: u64,
    /// 6.6: how many of the tasks went to another CPU of the balancing CPU's group.
    pub elsewhere: usize,
}

/// What one look learnt of the tasks' affinity (Linux's `LBF_ALL_PINNED`,
/// `LBF_SOME_PINNED` and `LBF_DST_PINNED` flags).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Look {
    /// Some task's affinity allows the balancing CPU (clears "all pinned").
    pub one_allowed: bool,
    /// Some task's does not.
    pub some_pinned: bool,
    /// The first CPU of the balancing CPU's group such a task allows.
    pub new_dst: Option<usize>,
}

/// `task_hot`: whether `c` ran too recently to leave its cache behind.
fn task_hot(c: &Candidate, now: u64) -> bool {
    (now.wrapping_sub(c.last_ran) as i64) < MIGRATION_COST_NS as i64
}

/// `can_migrate_task`: may `c` move to the balancing CPU? `look` notes what its affinity
/// allowed.
pub(super) fn can_migrate(c: &Candidate, env: &Env, look: &mut Look) -> bool {
    if !c.allowed.contains(env.this_cpu) {
        look.some_pinned = true;
        if look.new_dst.is_none() {
            look.new_dst = (env.dst_group & c.allowed).lowest();
        }
        return false;
    }
    look.one_allowed = true;
    if c.running {
        return false;
    }
    !task_hot(c, env.now) || env.nr_balance_failed > env.cache_nice_tries
}

/// `balance_tasks` over `candidates` (in the timeline's order) for up to `max_load` of
/// weight; `best_prio` is the best priority on the balancing CPU so far (`MAX_PRIO` if it
/// is idle), which a pulled task may improve. Adds to `pulled`.
pub fn balance_tasks(
    candidates: &[Candidate],
    max_load: u64,
    best_prio: &mut u32,
    env: &Env,
    pulled: &mut Pulled,
) -> u64 {
    if max_load == 0 {
        pulled.all_pinned = false;
        return 0;
    }
    let mut rem = max_load as i64;
    let mut look = Look::default();
    for (looked, c) in candidates.iter().enumerate() {
        if looked > NR_MIGRATE {
            break;
        }
        let too_heavy = if env.favour_best_prio {
            // SCHED_LOAD_SCALE_FUZZ: a nice-0 task's slack.
            (c.weight >> 1) as i64 > rem + 1024 && c.prio >= *best_prio
        } else {
            (c.weight >> 1) as i64 > rem
        };
        if too_heavy || !can_migrate(c, env, &mut look) {
            continue;
        }
        pulled.tasks.push(c.task);
        pulled.load += c.weight;
        rem -= c.weight as i64;
        if rem <= 0 {
            break;
        }
        *best_prio = (*best_prio).min(c.prio);
    }
    // Each look overwrites it (2.6.24's `*all_pinned = pinned`): the last one decides.
    pulled.all_pinned = !look.one_allowed;
    (max_load as i64 - rem) as u64
}

/// One group's tasks on the two CPUs (per-uid grouping; without groups, one of them holds
/// every task).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupQueues {
    /// Its tasks on the busiest CPU, in its timeline's order.
    pub busiest: Vec<Candidate>,
    /// The weight of its tasks on the busiest CPU, the running one included.
    pub busiest_load: u64,
    /// The weight of its tasks on the balancing CPU.
    pub this_load: u64,
    /// The best priority of its tasks on the balancing CPU (`MAX_PRIO` if none).
    pub this_best_prio: u32,
}

/// The busiest CPU's fair tasks as a pass walks them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Queues {
    /// Without group scheduling: its one runqueue, with the balancing CPU's best priority.
    Flat(GroupQueues),
    /// With per-uid groups: each group's runqueues, newest group first.
    Groups(Vec<GroupQueues>),
    /// With per-uid groups whose shares are split across CPUs (2.6.27–2.6.37): as
    /// `Groups`, each with the busiest CPU's load and the group's share there, through
    /// which a group's pull is scaled ([`load_balance_fair_split`]).
    Split {
        /// The groups.
        groups: Vec<GroupQueues>,
        /// For each group: its share of the busiest CPU (`cfs_rq->shares`).
        shares: Vec<u64>,
        /// The busiest CPU's load (its top-level entities' weight).
        root_load: u64,
    },
}

impl Queues {
    /// Every candidate, group after group in the order given.
    pub fn candidates(&self) -> Vec<Candidate> {
        match self {
            Queues::Flat(q) => q.busiest.clone(),
            Queues::Groups(groups) | Queues::Split { groups, .. } => groups
                .iter()
                .flat_map(|g| g.busiest.iter().copied())
                .collect(),
        }
    }
}

/// `move_tasks` of the fair class: without groups, one look over the runqueue for the
/// whole imbalance; with groups, [`load_balance_fair`] or, with split shares,
/// [`load_balance_fair_split`]. From 2.6.34 (`repeat_look`) the look is taken again, over
/// the tasks still there, while it moves something and the imbalance is not yet met.
pub fn move_tasks(queues: &Queues, max_load: u64, env: &Env) -> Pulled {
    let mut pulled = Pulled::default();
    loop {
        let before = pulled.load;
        let rem = max_load.saturating_sub(pulled.load);
        match queues {
            Queues::Flat(q) => {
                let left = still_there(&q.busiest, &pulled);
                let mut best = q.this_best_prio;
                balance_tasks(&left, rem, &mut best, env, &mut pulled);
            }
            Queues::Groups(groups) => load_balance_fair(groups, rem, env, &mut pulled),
            Queues::Split {
                groups,
                shares,
                root_load,
            } => {
                let (groups, root_load) = still_split(groups, shares, *root_load, &pulled);
                let moved =
                    load_balance_fair_split(&groups, shares, root_load, rem, env, &mut pulled);
                // Counted in the root's units, as Linux's `total_load_moved`.
                pulled.load = before + moved;
            }
        }
        let moved = pulled.load > before;
        if !env.repeat_look || !moved || pulled.load >= max_load {
            return pulled;
        }
    }
}

/// The groups as a repeated look finds them: each group's weight there less its tasks
/// already pulled, and the busiest CPU's load less the shares of groups left empty (their
/// entities leave its root runqueue).
fn still_split(
    groups: &[GroupQueues],
    shares: &[u64],
    root_load: u64,
    pulled: &Pulled,
) -> (Vec<GroupQueues>, u64) {
    let mut root_load = root_load;
    let groups = groups
        .iter()
        .zip(shares)
        .map(|(g, &share)| {
            let gone: u64 = g
                .busiest
                .iter()
                .filter(|c| pulled.tasks.contains(&c.task))
                .map(|c| c.weight)
                .sum();
            let mut g = g.clone();
            if gone > 0 {
                g.busiest_load = g.busiest_load.saturating_sub(gone);
                if g.busiest_load == 0 {
                    root_load = root_load.saturating_sub(share);
                }
            }
            g
        })
        .collect();
    (groups, root_load)
}

/// `candidates` less those already pulled (a pulled task has left the busiest CPU).
fn still_there(candidates: &[Candidate], pulled: &Pulled) -> Vec<Candidate> {
    candidates
        .iter()
        .filter(|c| !pulled.tasks.contains(&c.task))
        .copied()
        .collect()
}

/// `load_balance_fair` with split shares (2.6.27–2.6.37): the imbalance is in the root's
/// units, a group's tasks in the group's. Each group's part of the busiest CPU's load is
/// its `h_load` (`smp::shares::h_load`); the load left to move is converted into the
/// group's units (× its tasks' weight / its h_load), its tasks pulled for that, and what
/// moved converted back. Returns the load moved in the root's units.
pub fn load_balance_fair_split(
    groups: &[GroupQueues],
    shares: &[u64],
    root_load: u64,
    max_load: u64,
    env: &Env,
    pulled: &mut Pulled,
) -> u64 {
    let mut rem = max_load as i64;
    for (g, &share) in groups.iter().zip(shares) {
        if g.busiest_load == 0 {
            continue;
        }
        let h_load = super::shares::h_load(root_load, share);
        let rem_load = rem as u64 * g.busiest_load / (h_load + 1);
        let left = still_there(&g.busiest, pulled);
        let mut best = g.this_best_prio;
        let moved = balance_tasks(&left, rem_load, &mut best, env, pulled);
        if moved == 0 {
            continue;
        }
        rem -= (moved * h_load / (g.busiest_load + 1)) as i64;
        if rem < 0 {
            break;
        }
    }
    (max_load as i64 - rem) as u64
}

/// `load_balance_fair` with groups: each group more loaded on the busiest CPU gives up to
/// half the difference, until `max_load` has moved. Groups are taken in the order given
/// (2.6.24's list of a CPU's group queues, newest first).
pub fn load_balance_fair(groups: &[GroupQueues], max_load: u64, env: &Env, pulled: &mut Pulled) {
    let mut rem = max_load as i64;
    for g in groups {
        let imb = g.busiest_load as i64 - g.this_load as i64;
        if imb <= 0 {
            continue;
        }
        let max_for_group = rem.min(imb / 2) as u64;
        let mut best = g.this_best_prio;
        rem -= balance_tasks(&g.busiest, max_for_group, &mut best, env, pulled) as i64;
        if rem <= 0 {
            break;
        }
    }
}

pub mod v6_6;

#[cfg(test)]
mod tests;
