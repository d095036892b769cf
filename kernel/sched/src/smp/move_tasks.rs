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
    pub task: usize,
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
}

/// What a pass pulled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pulled {
    /// The tasks to move, in the order chosen.
    pub tasks: Vec<usize>,
    /// The load they carry, in the imbalance's units: their weight, or with split shares
    /// the part of the busiest CPU's load it stands for.
    pub load: u64,
    /// Every task the last look examined was kept away by its affinity (or it had none to
    /// look at); a look for no load clears it, as does no look at all.
    pub all_pinned: bool,
}

/// `task_hot`: whether `c` ran too recently to leave its cache behind.
fn task_hot(c: &Candidate, now: u64) -> bool {
    (now.wrapping_sub(c.last_ran) as i64) < MIGRATION_COST_NS as i64
}

/// `can_migrate_task`: may `c` move to the balancing CPU? `pinned` is cleared once a task's
/// affinity allows it.
fn can_migrate(c: &Candidate, env: &Env, pinned: &mut bool) -> bool {
    if !c.allowed.contains(env.this_cpu) {
        return false;
    }
    *pinned = false;
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
    let mut pinned = true;
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
        if too_heavy || !can_migrate(c, env, &mut pinned) {
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
    pulled.all_pinned = pinned;
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

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn nice0(task: usize, last_ran: u64) -> Candidate {
        Candidate {
            task,
            weight: 1024,
            prio: 120,
            allowed: CpuSet::first(2),
            last_ran,
            running: false,
        }
    }

    fn env(failed: u64) -> Env {
        Env {
            this_cpu: 1,
            now: 100 * MS,
            nr_balance_failed: failed,
            cache_nice_tries: 1,
            favour_best_prio: true,
            repeat_look: false,
        }
    }

    fn fair(groups: &[GroupQueues], max_load: u64, env: &Env) -> Pulled {
        let mut pulled = Pulled::default();
        load_balance_fair(groups, max_load, env, &mut pulled);
        pulled
    }

    fn flat(tasks: &[Candidate], max_load: u64, env: &Env) -> Pulled {
        let load: u64 = tasks.iter().map(|c| c.weight).sum();
        let group = GroupQueues {
            busiest: tasks.to_vec(),
            busiest_load: load,
            this_load: 0,
            this_best_prio: MAX_PRIO,
        };
        fair(&[group], max_load, env)
    }

    #[test]
    fn the_most_owed_cold_tasks_are_pulled_up_to_the_imbalance() {
        // Three waiting tasks, cold, the most owed first. With one task's weight to move,
        // the first is pulled and the pass stops (nothing left to move).
        let tasks = [nice0(3, 10 * MS), nice0(4, 20 * MS), nice0(5, 30 * MS)];
        let p = flat(&tasks, 1024, &env(0));
        assert_eq!(p.tasks, [3]);
        assert_eq!(p.load, 1024);
        assert!(!p.all_pinned);
        let p = flat(&tasks, 1536, &env(0));
        assert_eq!(
            p.tasks,
            [3, 4],
            "1536 − 1024 = 512 left: a second task goes"
        );
    }

    #[test]
    fn a_hot_task_stays_until_the_domain_has_failed_enough() {
        // Task 3 ran 0.2 ms ago: hot. cache_nice_tries 1: from the second failure on it
        // may go.
        let tasks = [nice0(3, 100 * MS - 200_000), nice0(4, 10 * MS)];
        assert_eq!(flat(&tasks, 1024, &env(0)).tasks, [4]);
        assert_eq!(flat(&tasks, 1024, &env(1)).tasks, [4]);
        assert_eq!(flat(&tasks, 1024, &env(2)).tasks, [3]);
    }

    #[test]
    fn the_running_task_and_pinned_tasks_stay() {
        let mut running = nice0(3, 0);
        running.running = true;
        let mut pinned = nice0(4, 0);
        pinned.allowed = CpuSet::one(0);
        let p = flat(&[running, pinned], 1024, &env(0));
        assert!(p.tasks.is_empty());
        // The running task's affinity allowed CPU 1: not all pinned.
        assert!(!p.all_pinned);
        let p = flat(&[pinned], 1024, &env(0));
        assert!(
            p.tasks.is_empty() && p.all_pinned,
            "every task looked at is pinned"
        );
    }

    #[test]
    fn no_load_to_move_is_not_all_pinned() {
        // An imbalance of 0 (find_busiest_group's "moving a task would not help"), or no
        // group heavier on the busiest CPU: nothing looked at, nothing pinned — the caller
        // counts a failure, not a pinned CPU.
        let mut pinned = nice0(3, 0);
        pinned.allowed = CpuSet::one(0);
        let p = flat(&[pinned], 0, &env(0));
        assert!(p.tasks.is_empty() && !p.all_pinned);
        let even = GroupQueues {
            busiest: alloc::vec![pinned],
            busiest_load: 1024,
            this_load: 1024,
            this_best_prio: 120,
        };
        assert!(!fair(&[even], 1024, &env(0)).all_pinned);
    }

    #[test]
    fn a_heavy_task_goes_only_if_it_would_lead_here() {
        // Nice −10 (9548) when 1024 is to move: too heavy by the half-weight rule, but on
        // an idle CPU it would be the best priority there, so it goes.
        let heavy = Candidate {
            weight: 9548,
            prio: 110,
            ..nice0(3, 0)
        };
        let group = |best| GroupQueues {
            busiest: alloc::vec![heavy],
            busiest_load: 9548 + 1024,
            this_load: 0,
            this_best_prio: best,
        };
        assert_eq!(fair(&[group(MAX_PRIO)], 1024, &env(0)).tasks, [3]);
        // Beside a task of priority 100 here it would not lead: it stays.
        assert!(fair(&[group(100)], 1024, &env(0)).tasks.is_empty());
    }

    #[test]
    fn without_groups_the_whole_imbalance_is_looked_for_at_once() {
        // The same tasks as one group's: that group weighs as much here as there, and
        // gives nothing; without group scheduling the pass looks for the imbalance in the
        // one runqueue and pulls a task.
        let q = GroupQueues {
            busiest: alloc::vec![nice0(3, 0), nice0(4, 0)],
            busiest_load: 2048,
            this_load: 2048,
            this_best_prio: 120,
        };
        assert!(
            move_tasks(&Queues::Groups(alloc::vec![q.clone()]), 1024, &env(0))
                .tasks
                .is_empty()
        );
        assert_eq!(move_tasks(&Queues::Flat(q), 1024, &env(0)).tasks, [3]);
    }

    #[test]
    fn each_group_gives_half_its_difference() {
        // 2.6.24's per-uid balancing: uid 1 has 3 tasks on the busiest CPU and 1 here —
        // half the difference (1024) moves; uid 2 has 1 task there and 1 here: none.
        let uid1 = GroupQueues {
            busiest: alloc::vec![nice0(3, 0), nice0(4, 0)],
            busiest_load: 3072,
            this_load: 1024,
            this_best_prio: 120,
        };
        let uid2 = GroupQueues {
            busiest: alloc::vec![nice0(5, 0)],
            busiest_load: 1024,
            this_load: 1024,
            this_best_prio: 120,
        };
        let p = fair(&[uid2, uid1], 4096, &env(0));
        assert_eq!(p.tasks, [3]);
    }

    #[test]
    fn with_split_shares_a_pull_is_scaled_by_the_groups_part_of_the_cpu() {
        // The busiest CPU weighs 1280: uid 1's running hog (its group's share 1024) and
        // one waiting hog of uid 2, whose group holds 256 here. uid 2 stands for
        // 1280 × 256 / 1281 = 255 of the CPU, so an imbalance of 256 is
        // 256 × 1024 / 256 = 1024 in its units: its hog goes, which is
        // 1024 × 255 / 1025 = 254 of the root's load.
        let mut running = nice0(3, 0);
        running.running = true;
        let group = |tasks: &[Candidate]| GroupQueues {
            busiest: tasks.to_vec(),
            busiest_load: 1024,
            this_load: 0,
            this_best_prio: MAX_PRIO,
        };
        let queues = Queues::Split {
            groups: alloc::vec![group(&[nice0(4, 0)]), group(&[running])],
            shares: alloc::vec![256, 1024],
            root_load: 1280,
        };
        let env = Env {
            favour_best_prio: false,
            repeat_look: true,
            ..env(0)
        };
        let p = move_tasks(&queues, 256, &env);
        assert_eq!((p.tasks.as_slice(), p.load), ([4].as_slice(), 254));
        // An imbalance of 100 is 400 in uid 2's units: a 1024 task is more than twice
        // that, and from 2.6.27 no slack or priority lets it go.
        assert!(move_tasks(&queues, 100, &env).tasks.is_empty());
    }
}
