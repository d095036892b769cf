//! The CPUs' runqueues under the balancer: what each CPU keeps for balancing
//! ([`CpuBalance`]), what the balancer asks of whoever holds the runqueues ([`Runqueues`]),
//! and the steps that glue a tick, an idle CPU, a wake-up and a fork to the era's
//! decisions (`scheduler_tick`'s `update_cpu_load` and `trigger_load_balance`,
//! `idle_balance`, `select_task_rq`; kernel/sched.c in 2.6.24 and 2.6.36).
//!
//! One implementation for the kernel and the simulator: each holds its runqueues its own
//! way — the kernel under their locks, the simulator in its machine — and answers
//! [`Runqueues`], told which runqueues a newly-idle pass works on as it goes
//! ([`Runqueues::focus`]); the steps here read the runqueues through it, ask the balancer
//! and the placement modules, and carry out their decisions through
//! [`Runqueues::migrate`]. A push (active balancing) is returned to the caller: only it can
//! make a running task leave its CPU.

use super::balancer::{self, DomainState};
use super::busiest::CpuStat;
use super::cpuset::CpuSet;
use super::domains::{Domain, Rules};
use super::invariant::{Snapshot, Waiting};
use super::shares::SharesSplit;
use crate::policy::{Nanos, Policy, TaskId, Uid};
use crate::rq::{Rq, State};
use alloc::sync::Arc;
use alloc::vec::Vec;

pub use cpu_balance::CpuBalance;
pub use view::Balancing;

/// The runqueues, as their holder lets the balancer read and change them.
pub trait Runqueues {
    /// The policy each runqueue drives.
    type Policy: Policy + ?Sized;
    /// How many CPUs (runqueues), online or not: a CPU is in a domain only once it is.
    fn len(&self) -> usize;
    /// Whether there is no runqueue.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// CPU `cpu`'s runqueue.
    fn rq(&self, cpu: usize) -> &Rq<Self::Policy>;
    /// CPU `cpu`'s runqueue, to change.
    fn rq_mut(&mut self, cpu: usize) -> &mut Rq<Self::Policy>;
    /// CPU `cpu`'s balancing state.
    fn balance(&self, cpu: usize) -> &CpuBalance;
    /// CPU `cpu`'s balancing state, to change.
    fn balance_mut(&mut self, cpu: usize) -> &mut CpuBalance;
    /// The CPUs task `task`, on `cpu`'s runqueue, may run on. (Each of these three is asked
    /// of a task where the caller found it, so that a holder that keeps a task's data with
    /// its runqueue, as the kernel does, reads it there.)
    fn allowed(&self, cpu: usize, task: TaskId) -> CpuSet;
    /// Task `task`'s user (its group, with per-uid groups); it is on `cpu`'s runqueue.
    fn uid(&self, cpu: usize, task: TaskId) -> Uid;
    /// Task `task`, on `cpu`'s runqueue, is still leaving the CPU it was preempted on (its
    /// registers not yet saved): Linux's `task_running`, which keeps a task where it is.
    fn leaving(&self, _cpu: usize, _task: TaskId) -> bool {
        false
    }
    /// The clock, in ns.
    fn now(&self) -> Nanos;
    /// How the era splits a group's shares across CPUs.
    fn split(&self) -> SharesSplit;
    /// Which era's balancer and wake-up placement run.
    fn rules(&self) -> Rules;
    /// Moves waiting task `task` from `from`'s runqueue to `to`'s (`pull_task`: detach,
    /// `set_task_cpu`, attach), telling `to` to reschedule if it should.
    fn migrate(&mut self, task: TaskId, from: usize, to: usize);
    /// From here the caller reads and changes `cpus`' runqueues together, and no other,
    /// until it says otherwise. A holder that locks only what a pass works on (the kernel's
    /// newly-idle pass: Linux's `double_lock_balance`, and from 3.18 its detach under the
    /// busiest runqueue's lock) takes their locks now and lets go of the rest; one that
    /// holds every runqueue anyway (the simulator, the kernel's tick) ignores it.
    fn focus(&mut self, _cpus: CpuSet) {}
    /// From here the caller reads or changes CPU `cpu`'s runqueue: one held already stays
    /// in focus; otherwise it alone is (see [`Runqueues::focus`]). So a pass reads the CPUs'
    /// figures one CPU at a time, each whole at its own moment, as Linux reads them
    /// without their locks.
    fn reach(&mut self, cpu: usize) {
        let _ = cpu;
    }
    /// CPU `cpu`'s load figures, for a pass that reads the CPUs one at a time
    /// ([`stats_one_by_one`]): read under its lock ([`Runqueues::reach`]), unless the holder
    /// knows better.
    fn stat(&mut self, cpu: usize) -> CpuStat {
        self.reach(cpu);
        cpu_stat(self.rq(cpu), self.balance(cpu), self.split())
    }
}

/// `weighted_cpuload`: 2.6.24–2.6.26 count the tasks' weight; later eras the top-level
/// entities', a group's with its share here.
pub fn weighted_cpuload<R: Runqueues + ?Sized>(r: &R, cpu: usize) -> u64 {
    load_of(r.rq(cpu).policy(), r.split())
}

/// [`weighted_cpuload`] of the CPU whose policy is `policy`, its shares split by `split`.
pub fn load_of<P: Policy + ?Sized>(policy: &P, split: SharesSplit) -> u64 {
    if let Some(avg) = policy.load_avg() {
        // 6.6's `cpu_load`: the root runqueue's load average.
        avg.load
    } else if split.load_is_tasks() {
        policy.queued_load()
    } else {
        policy.root_load()
    }
}

/// What `scheduler_tick` does for balancing on `cpu` at tick `jiffies` (`hz` a second):
/// `update_cpu_load`, then — if a domain is due — `rebalance_domains`. Returns the CPUs
/// asked to push their running task to `cpu` (active balancing: the caller's part).
pub fn tick<R: Runqueues + ?Sized>(r: &mut R, cpu: usize, jiffies: u64, hz: u64) -> Vec<usize> {
    sync_group_loads(r, cpu);
    update_cpu_load(r, cpu);
    tick_after_load_update(r, cpu, jiffies, hz)
}

/// Whether [`tick`]'s first part reads `cpu`'s runqueue alone, so that a caller may run it
/// under that runqueue's lock ([`update_cpu_load_of`]) and take every runqueue only for
/// [`tick_after_load_update`] when a pass is due: every split but 6.6's, whose tick first
/// reads every CPU's group loads.
pub fn tick_starts_on_its_cpu(split: SharesSplit) -> bool {
    split != SharesSplit::FromLoadAvg
}

/// [`tick`] once `cpu`'s load is updated: `rebalance_domains` if a domain is due.
pub fn tick_after_load_update<R: Runqueues + ?Sized>(
    r: &mut R,
    cpu: usize,
    jiffies: u64,
    hz: u64,
) -> Vec<usize> {
    if jiffies < r.balance(cpu).next_balance {
        return Vec::new();
    }
    rebalance(r, cpu, jiffies, hz)
}

/// 6.6: each group's load over every CPU (`tg->load_avg`, the sum of what each CPU's queue
/// of the group published) handed to `cpu`'s queues as the other CPUs' part, which
/// `calc_group_shares` splits the group's shares against. Linux adds each change to the
/// sum as it is published; here `cpu` reads the sum at its tick, a tick late at most.
fn sync_group_loads<R: Runqueues + ?Sized>(r: &mut R, cpu: usize) {
    if r.split() != SharesSplit::FromLoadAvg {
        return;
    }
    let mut totals: Vec<(Uid, u64, u64)> = Vec::new();
    for c in 0..r.len() {
        for (uid, load) in r.rq(c).policy().group_load_contribs() {
            let at = match totals.iter().position(|t| t.0 == uid) {
                Some(at) => at,
                None => {
                    totals.push((uid, 0, 0));
                    totals.len() - 1
                }
            };
            totals[at].1 += load;
            if c == cpu {
                totals[at].2 = load;
            }
        }
    }
    for (uid, total, here) in totals {
        r.rq_mut(cpu).set_group_load_elsewhere(uid, total - here);
    }
}

/// 6.6's `update_blocked_averages`, which a balancing pass starts with: `cpu`'s queues
/// decay to now, so that the load of its sleeping tasks fades.
fn update_blocked_averages<R: Runqueues + ?Sized>(r: &mut R, cpu: usize) {
    let now = r.now();
    r.reach(cpu);
    r.rq_mut(cpu).update_blocked_averages(now);
}

/// `update_cpu_load`: `cpu`'s load history takes in its load now (at each of its ticks).
pub fn update_cpu_load<R: Runqueues + ?Sized>(r: &mut R, cpu: usize) {
    let load = weighted_cpuload(r, cpu);
    r.balance_mut(cpu).cpu_load.tick(load);
}

/// [`update_cpu_load`] of the CPU whose policy is `policy` and balancing state `b`.
pub fn update_cpu_load_of<P: Policy + ?Sized>(policy: &P, b: &mut CpuBalance, split: SharesSplit) {
    b.cpu_load.tick(load_of(policy, split));
}

/// Runs `pass` on `cpu`'s domains and their states, the states taken out of its balancing
/// state for the pass (which reads and changes the runqueues through `r`) and put back
/// after. `None`, and no pass, if another pass has them out now: a CPU's newly-idle pass
/// lets go of its runqueue while it reads the others (see `Runqueues::focus`), and a busy
/// CPU's tick may meanwhile balance for it, if it is idle with its tick stopped.
fn with_domains<R: Runqueues + ?Sized, T>(
    r: &mut R,
    cpu: usize,
    pass: impl FnOnce(&mut R, &[Domain], &mut [DomainState]) -> T,
) -> Option<T> {
    r.reach(cpu);
    let b = r.balance_mut(cpu);
    if b.states.is_empty() && !b.domains.is_empty() {
        return None;
    }
    let (domains, mut states) = (b.domains.clone(), core::mem::take(&mut b.states));
    let result = pass(r, &domains, &mut states);
    r.reach(cpu);
    // A holder that let go of `cpu` during the pass may find its domains rebuilt meanwhile
    // (a CPU went offline): the states are then those of domains gone, and go with them, as
    // Linux's live in the domains themselves.
    let b = r.balance_mut(cpu);
    if Arc::ptr_eq(&b.domains, &domains) && b.states.is_empty() {
        b.states = states;
    }
    Some(result)
}

/// `NR_CPUS` as 2.6.24's x86 configuration set it by default (the cap of a balancing
/// interval is `HZ × NR_CPUS / 10` jiffies); a larger machine needs at least its CPU count.
const NR_CPUS_DEFAULT: u64 = 8;

/// `rebalance_domains` for `cpu` at tick `jiffies`, whether it is idle or not; also what a
/// nohz idle load balancer runs on an idle CPU's behalf. Returns the CPUs asked to push.
pub fn rebalance<R: Runqueues + ?Sized>(
    r: &mut R,
    cpu: usize,
    jiffies: u64,
    hz: u64,
) -> Vec<usize> {
    update_blocked_averages(r, cpu);
    let idle = r.rq(cpu).current() == r.rq(cpu).idle();
    let nr_cpus = NR_CPUS_DEFAULT.max(r.len() as u64);
    let pass = with_domains(r, cpu, |r, domains, states| {
        let m = &mut Balancing(r);
        balancer::rebalance_domains(cpu, idle, jiffies, domains, states, hz, nr_cpus, m)
    });
    // (With its domains out, the CPU is in a pass of its own: when it is next due stays.)
    let Some((outcomes, next)) = pass else {
        return Vec::new();
    };
    r.balance_mut(cpu).next_balance = next;
    outcomes.into_iter().filter_map(|o| o.push_from).collect()
}

/// `idle_balance`: `cpu`'s runqueue is empty as it schedules; it pulls from its domains
/// with SD_BALANCE_NEWIDLE — unless its idle spells are too short to be worth it in this
/// era ([`avg_idle::skips_newidle`](super::avg_idle::skips_newidle)). Returns whether it pulled anything.
pub fn idle_balance<R: Runqueues + ?Sized>(r: &mut R, cpu: usize) -> bool {
    let (rules, now) = (r.rules(), r.now());
    r.reach(cpu);
    if r.balance_mut(cpu).skips_newly_idle(rules, now) {
        return false;
    }
    update_blocked_averages(r, cpu);
    let pulled = with_domains(r, cpu, |r, domains, states| {
        balancer::idle_balance(cpu, domains, states, &mut Balancing(r)).is_some()
    });
    let now = r.now();
    r.reach(cpu);
    // A task woken here while the pass had let go of this runqueue counts as pulled (as
    // from 3.18, the pass letting go of its runqueue in every era here): the CPU does not
    // go idle, and no idle spell starts.
    let pulled = pulled.unwrap_or(false) || !r.rq(cpu).about_to_idle();
    r.balance_mut(cpu).idle_stamp = (!pulled).then_some(now);
    pulled
}

/// A task was woken onto `cpu` (`try_to_wake_up`; `ttwu_do_wakeup` from 3.0): if `cpu` was
/// idle, its idle spell ends, and goes into its average ([`avg_idle`](super::avg_idle)).
pub fn woken_onto<R: Runqueues + ?Sized>(r: &mut R, cpu: usize) {
    // Most wake-ups find their CPU busy: the clock is read only for one that was idle.
    if r.balance(cpu).idle_stamp.is_some() {
        let (rules, now) = (r.rules(), r.now());
        r.balance_mut(cpu).woken(rules, || now);
    }
}

/// Every CPU's load as the balancer reads it, from a holder of every runqueue.
pub fn stats<R: Runqueues + ?Sized>(r: &R) -> Vec<CpuStat> {
    let split = r.split();
    (0..r.len())
        .map(|cpu| cpu_stat(r.rq(cpu), r.balance(cpu), split))
        .collect()
}

/// [`stats`] read one CPU at a time, each whole at its own moment ([`Runqueues::stat`]).
pub fn stats_one_by_one<R: Runqueues + ?Sized>(r: &mut R) -> Vec<CpuStat> {
    (0..r.len()).map(|cpu| r.stat(cpu)).collect()
}

/// The load of the CPU whose runqueue is `rq` and balancing state `b`, as the balancer and
/// a wake-up's placement read it.
pub fn cpu_stat<P: Policy + ?Sized>(rq: &Rq<P>, b: &CpuBalance, split: SharesSplit) -> CpuStat {
    let current = rq.current();
    let idle = current == rq.idle();
    // The current task counts while it is still queued: one about to sleep (a newly-idle
    // pass) has left the queue already, as in Linux.
    let queued = !idle && rq.state(current) == State::Running;
    let avg = rq.policy().load_avg();
    CpuStat {
        load: load_of(rq.policy(), split),
        nr_running: rq.policy().waiting_tasks() + u32::from(queued),
        cpu_load: b.cpu_load,
        idle,
        util: avg.map_or(0, |a| a.util.min(1024)),
        runnable: avg.map_or(0, |a| a.runnable),
    }
}

/// What the Wasted Cores invariant sees of the CPUs in `cpus` now: which run their idle
/// task, and every task waiting, where, and where it may run.
pub fn snapshot<R: Runqueues + ?Sized>(r: &R, cpus: CpuSet) -> Snapshot {
    let mut snap = Snapshot::default();
    for cpu in cpus.iter() {
        let rq = r.rq(cpu);
        if rq.current() == rq.idle() {
            snap.idle = snap.idle.with(cpu);
        }
        for q in rq.policy().balance_queues() {
            for w in q.waiting {
                let allowed = r.allowed(cpu, w.task);
                snap.waiting.push(Waiting { cpu, allowed });
            }
        }
    }
    snap
}

mod cpu_balance;
mod machine;
mod placing;
mod view;

pub use machine::{CpuFigures, Machine, ReadCpu};
pub use placing::{SyncWaker, Wakee, Waker, balance_self, choose_wake_cpu, wake_cpu};
