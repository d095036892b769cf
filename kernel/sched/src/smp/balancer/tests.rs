//! The passes on a made-up machine of two CPUs (one MC domain, each CPU a group).

use super::*;
use crate::smp::cpu_load::CpuLoad;
use crate::smp::domains::build_2_6_24;
use crate::smp::move_tasks::{Candidate, GroupQueues, MAX_PRIO};
use crate::smp::topology::Topology;
use crate::task_id::t;
use alloc::vec;

const MS: u64 = 1_000_000;
const HZ: u64 = 250;

/// Nice-0 tasks on each CPU; the first of each CPU runs.
struct Toy {
    cpus: Vec<Vec<Candidate>>,
    now: u64,
}

impl Toy {
    fn new(tasks_per_cpu: &[usize]) -> Toy {
        let mut id = 0;
        let cpus = tasks_per_cpu
            .iter()
            .map(|&n| {
                (0..n)
                    .map(|i| {
                        id += 1;
                        Candidate {
                            task: t(id),
                            weight: 1024,
                            prio: 120,
                            allowed: CpuSet::first(tasks_per_cpu.len()),
                            last_ran: 0,
                            running: i == 0,
                            util: 0,
                        }
                    })
                    .collect()
            })
            .collect();
        Toy {
            cpus,
            now: 100 * MS,
        }
    }

    fn counts(&self) -> Vec<usize> {
        self.cpus.iter().map(Vec::len).collect()
    }
}

impl Machine for Toy {
    fn stats(&mut self) -> Vec<CpuStat> {
        self.cpus
            .iter()
            .map(|tasks| {
                let load = tasks.iter().map(|c| c.weight).sum();
                CpuStat {
                    load,
                    nr_running: tasks.len() as u32,
                    cpu_load: CpuLoad::steady(load),
                    idle: tasks.is_empty(),
                    ..CpuStat::default()
                }
            })
            .collect()
    }

    fn cpus(&self) -> usize {
        self.cpus.len()
    }

    fn queues(&mut self, busiest: usize, this_cpu: usize) -> Queues {
        let here = &self.cpus[this_cpu];
        Queues::Flat(GroupQueues {
            busiest: self.cpus[busiest]
                .iter()
                .filter(|c| !c.running)
                .copied()
                .collect(),
            busiest_load: self.cpus[busiest].iter().map(|c| c.weight).sum(),
            this_load: here.iter().map(|c| c.weight).sum(),
            this_best_prio: here.iter().map(|c| c.prio).min().unwrap_or(MAX_PRIO),
        })
    }

    fn clock(&self, _cpu: usize) -> u64 {
        self.now
    }

    fn running_allowed(&mut self, cpu: usize) -> CpuSet {
        self.cpus[cpu]
            .iter()
            .find(|c| c.running)
            .map_or(CpuSet::EMPTY, |c| c.allowed)
    }

    fn pull(&mut self, from: usize, to: usize, tasks: &[TaskId]) {
        for &task in tasks {
            let i = self.cpus[from].iter().position(|c| c.task == task).unwrap();
            let mut c = self.cpus[from].remove(i);
            c.running = self.cpus[to].is_empty();
            self.cpus[to].push(c);
        }
    }
}

fn two_cpus() -> (Vec<Domain>, Vec<DomainState>) {
    let d = build_2_6_24(&Topology::flat(2), 1);
    let states = d.iter().map(|d| DomainState::new(d, 0)).collect();
    (d, states)
}

#[test]
fn an_idle_cpu_pulls_at_its_tick_and_the_interval_resets() {
    // CPU 0 runs one task and has two waiting; CPU 1 is idle. The imbalance is 1536 (the
    // average 1536 minus CPU 1's nothing): the first waiting task goes, leaving 512 to
    // move, and the second one too (its half weight, 512, is not more than that plus a
    // task's slack): 2.6.24 overshoots to 1 against 2.
    let (d, mut st) = two_cpus();
    let mut m = Toy::new(&[3, 0]);
    st[0].balance_interval_ms = 4;
    let (outcomes, _) = rebalance_domains(1, true, 10, &d, &mut st, HZ, 8, &mut m);
    assert_eq!(outcomes[0].pulled, Some((0, vec![t(2), t(3)])));
    assert_eq!(m.counts(), [1, 2]);
    assert_eq!(st[0].balance_interval_ms, 1, "back to its minimum");
    assert_eq!(st[0].last_balance, 10);
}

#[test]
fn a_balanced_domain_doubles_its_interval_up_to_its_maximum() {
    // Busy: due every 1 ms × 64 = 16 jiffies, then 32, then 64.
    let (d, mut st) = two_cpus();
    let mut m = Toy::new(&[1, 1]);
    for (jiffy, expected) in [(100, 2), (200, 4), (300, 4)] {
        let (outcomes, _) = rebalance_domains(1, false, jiffy, &d, &mut st, HZ, 8, &mut m);
        assert_eq!(outcomes.len(), 1);
        assert_eq!(st[0].balance_interval_ms, expected);
    }
}

#[test]
fn a_busy_cpu_waits_its_busy_factor() {
    // MC's busy factor is 64: 1 ms becomes 64 ms, 16 jiffies at HZ 250; idle, 1 jiffy.
    let (d, st) = two_cpus();
    assert_eq!(interval_jiffies(&st[0], &d[0], true, HZ, 8), 16);
    assert_eq!(interval_jiffies(&st[0], &d[0], false, HZ, 8), 1);
    // A CPU that balanced at jiffy 10 while busy is not due before jiffy 26.
    let (d, mut st) = two_cpus();
    let mut m = Toy::new(&[3, 1]);
    st[0].last_balance = 10;
    let (outcomes, next) = rebalance_domains(1, false, 25, &d, &mut st, HZ, 8, &mut m);
    assert!(outcomes.is_empty());
    assert_eq!(next, 26);
}

#[test]
fn failures_lead_to_pushing_the_running_task() {
    // -smp 4,sockets=2,cores=2: package {0,1} runs one task on each CPU, package {2,3}
    // nothing. At the CPU level {0,1} is over its power of one task, and CPU 2 (the first
    // idle CPU of its package) finds an imbalance of one task; but the busiest CPU's only
    // task is running, and nothing moves. CPU's cache_nice_tries is 1: at the fourth
    // failure (more than 1 + 2) CPU 2 asks CPU 0 to push its running task — how 2.6.24
    // spreads two tasks over two packages — and the count goes back to 2.
    let t = Topology::smp(2, 2, 1);
    let d = build_2_6_24(&t, 2);
    let mut st: Vec<DomainState> = d.iter().map(|d| DomainState::new(d, 0)).collect();
    let mut m = Toy::new(&[1, 1, 0, 0]);
    for failures in 1..=3 {
        let o = load_balance(&mut st[1], &d[1], None, 2, IdleType::Idle, &mut m);
        assert_eq!((o.pulled, o.push_from), (None, None));
        assert_eq!(st[1].nr_balance_failed, failures);
        assert_eq!(st[1].balance_interval_ms, 1, "an imbalance was found");
    }
    let o = load_balance(&mut st[1], &d[1], None, 2, IdleType::Idle, &mut m);
    assert_eq!(o.push_from, Some(0));
    assert_eq!(st[1].nr_balance_failed, 2);
    assert_eq!(st[1].balance_interval_ms, 2, "backing off while it pushes");
    // A running task that may not come here is not pushed: as if pinned.
    m.cpus[0][0].allowed = CpuSet::first(2);
    m.cpus[1][0].allowed = CpuSet::first(2);
    st[1].nr_balance_failed = 3;
    let o = load_balance(&mut st[1], &d[1], None, 2, IdleType::Idle, &mut m);
    assert_eq!(o.push_from, None);
}

#[test]
fn every_task_pinned_means_balanced_with_a_longer_interval() {
    // CPU 0's waiting task may not leave it (the running one is never looked at): all
    // pinned, no other CPU to try — no failure counted, the interval doubles.
    let (d, mut st) = two_cpus();
    let mut m = Toy::new(&[2, 0]);
    m.cpus[0][1].allowed = CpuSet::one(0);
    let o = load_balance(&mut st[0], &d[0], None, 1, IdleType::Idle, &mut m);
    assert_eq!((o.pulled, o.push_from), (None, None));
    assert_eq!(st[0].nr_balance_failed, 0);
    assert_eq!(st[0].balance_interval_ms, 2);
}

#[test]
fn a_newly_idle_cpu_pulls_before_it_sleeps() {
    let (d, mut st) = two_cpus();
    let mut m = Toy::new(&[2, 0]);
    assert_eq!(idle_balance(1, &d, &mut st, &mut m), Some((0, vec![t(2)])));
    assert_eq!(m.counts(), [1, 1]);
    // Newly idle passes leave the interval as it was.
    assert_eq!(st[0].balance_interval_ms, 1);
}

#[test]
fn a_newly_idle_pass_that_finds_nothing_leaves_the_interval() {
    // 2.6.24's `load_balance_newidle` never touches `balance_interval`.
    let (d, mut st) = two_cpus();
    let mut m = Toy::new(&[1, 0]);
    assert_eq!(idle_balance(1, &d, &mut st, &mut m), None);
    assert_eq!(st[0].balance_interval_ms, 1);
}

#[test]
fn a_newly_idle_pass_tunes_the_interval_from_2_6_36_on() {
    use crate::smp::domains::build;
    // Two CPUs, CPU 1 about to go idle. 2.6.24's `load_balance_newidle` never touches the
    // interval. 2.6.36's `load_balance` treats the pass as any other: balanced (one task
    // on CPU 0, nothing to take), it doubles the interval; finding an imbalance (two tasks
    // on CPU 0: one moves), it sets it back to its minimum. 6.6 sets it back the same way
    // but, balanced, leaves it: newly-idle passes do not wait for it.
    for (rules, doubled) in [
        (Rules::V2_6_24, false),
        (Rules::V2_6_36, true),
        (Rules::V6_6, false),
    ] {
        let d = build(&Topology::flat(2), 1, rules);
        let mut st: Vec<DomainState> = d.iter().map(|d| DomainState::new(d, 0)).collect();
        let (min, max) = (d[0].params.min_interval_ms, d[0].params.max_interval_ms);
        let mut m = Toy::new(&[1, 0]);
        assert_eq!(idle_balance(1, &d, &mut st, &mut m), None, "{rules:?}");
        let expected = if doubled { 2 * min } else { min };
        assert_eq!(st[0].balance_interval_ms, expected, "{rules:?}: balanced");
        st[0].balance_interval_ms = max;
        let mut m = Toy::new(&[2, 0]);
        assert!(idle_balance(1, &d, &mut st, &mut m).is_some(), "{rules:?}");
        let expected = if rules == Rules::V2_6_24 { max } else { min };
        assert_eq!(st[0].balance_interval_ms, expected, "{rules:?}: a move");
    }
}
