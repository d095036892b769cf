//! The multiprocessor half of the policy: the machine's shape and what Linux's load
//! balancer computes from it, era by era (docs/scheduler.md §15).
//!
//! - [`cpuset`]: a set of CPUs (Linux's `cpumask_t`), up to 64;
//! - [`topology`]: which CPUs are hyperthreads of one core, cores of one package, CPUs of
//!   one NUMA node, and how far apart the nodes are;
//! - [`domains`]: the scheduling domains and groups each CPU balances over, built from a
//!   topology as 2.6.24 built them (`build_sched_domains`), with each level's parameters;
//! - [`cpu_load`]: 2.6.24's per-CPU load history (`cpu_load[]`) and the low and high
//!   guesses the balancer takes of a CPU's load;
//! - [`busiest`]: `find_busiest_group` and `find_busiest_queue` of 2.6.24, 2.6.36 and 6.6:
//!   which CPU, if any, a balancing CPU should pull from, and how much (6.6: of what);
//! - [`move_tasks`]: which of that CPU's tasks it pulls (`balance_tasks`,
//!   `can_migrate_task`, `load_balance_fair` with groups; 6.6's `detach_tasks`);
//! - [`avg_idle`]: how long a CPU's idle spells last, and the newly-idle pass 2.6.36 and
//!   4.1 skip when they are short;
//! - [`group_imbalance`]: 4.1's and 6.6's mark on a group whose CPUs could not balance for
//!   their tasks' affinity, which the level above acts on;
//! - [`balancer`]: the passes themselves — when a domain is balanced, the interval that
//!   grows and shrinks, failures and active balancing (`load_balance`);
//! - [`shares`]: a group's shares split between CPUs by its tasks' weight on each (2.6.27–
//!   2.6.37's `update_shares`), and the load the balancer sees of a group through it;
//! - [`placement`]: where a task that forks, execs or wakes is put (`sched_balance_self`,
//!   the affine wake-up, `wake_idle`);
//! - [`runqueues`]: the glue the kernel and the simulator share — each CPU's balancing
//!   state, and a tick, an idle CPU or a wake-up turned into the era's decisions over the
//!   runqueues their holder lends;
//! - [`schedstat`]: what each domain's passes count, for `/proc/schedstat`;
//! - [`invariant`]: the Wasted Cores paper's check that no CPU idles while a task waits
//!   too long elsewhere, with the time cores were wasted.
//!
//! What it does not do: move tasks itself (the runqueues do, `rq::migration`, when their
//! holder is asked to), read a clock, or
//! know the kernel. Its inputs are snapshots of the CPUs' loads; its outputs are decisions
//! the kernel and the simulator carry out.

pub mod avg_idle;
pub mod balancer;
pub mod busiest;
pub mod cpu_load;
pub mod cpuset;
pub mod domains;
pub mod group_imbalance;
pub mod invariant;
pub mod move_tasks;
pub mod placement;
pub mod runqueues;
pub mod schedstat;
pub mod shares;
pub mod topology;

pub use cpuset::CpuSet;
