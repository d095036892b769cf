//! 6.6's load tracking through the fair class: what a CPU's load is after a task ran,
//! slept, or left, each figure from PELT's arithmetic (`crate::pelt`).

use super::MIN_SHARES;
use super::group::{calc_group_shares, tg_load_avg_change};
use crate::Fair;
use crate::params::{Era, FairParams, Grouping};
use crate::policy::{Policy, TaskId, Wakeup};
use crate::task_id::t;

const MS: u64 = 1_000_000;
/// 32 PELT periods of 1024 × 1024 ns: the half-life.
const HALF_LIFE: u64 = 32 * 1024 * 1024;

fn eevdf(grouping: Grouping) -> Fair {
    let mut p = FairParams::preset(Era::V6_6);
    p.grouping = grouping;
    Fair::new(p)
}

/// `tasks` (uid 1, nice 0) spawned at 0 on `f`, run for a second with a tick a millisecond
/// (each tick the running task gives way to the next, so every task is runnable all the
/// time and runs its part).
fn run_a_second(f: &mut Fair, tasks: &[TaskId]) -> TaskId {
    for &t in tasks {
        f.spawn(t, 1, 0, 0);
    }
    let mut running = f.pick_next(0).expect("a task");
    for ms in 1..=1000 {
        let now = ms * MS;
        f.tick(now);
        f.put_prev(running, now);
        running = f.pick_next(now).expect("a task");
    }
    running
}

/// Within 2 of `expected`: the rounding of the averages' integer arithmetic.
fn assert_near(value: u64, expected: u64) {
    assert!(
        value.abs_diff(expected) <= 2,
        "{value}, not about {expected}"
    );
}

fn load(f: &Fair) -> u64 {
    f.load_avg().expect("6.6 tracks load").load
}

#[test]
fn a_hog_loads_its_cpu_by_its_weight_and_asleep_halves_in_32_periods() {
    // Runnable for a second (954 periods: y^954 leaves nothing of the start), a nice-0
    // task's load average is its whole weight, 1024, and so is its CPU's (to a unit of
    // rounding). So is the utilisation: it ran all the time.
    let mut f = eevdf(Grouping::None);
    let hog = run_a_second(&mut f, &[t(0)]);
    let avg = f.load_avg().unwrap();
    assert!((1023..=1024).contains(&avg.load), "{avg:?}");
    assert!((1023..=1024).contains(&avg.util), "{avg:?}");
    // It sleeps. Its load stays on the CPU's queue, blocked, and decays: after one
    // half-life of decay (`update_blocked_averages`, as a balancing pass starts) half is
    // left.
    f.dequeue(hog, 1000 * MS);
    f.put_prev(hog, 1000 * MS);
    let before = load(&f);
    f.update_blocked_averages(1000 * MS + HALF_LIFE);
    assert!(
        load(&f).abs_diff(before / 2) <= 2,
        "{before} → {}",
        load(&f)
    );
}

#[test]
fn a_task_that_moves_takes_its_load_at_once() {
    // Two hogs on one CPU, no groups: its load is 2048. One moves to another CPU: the
    // first CPU drops to 1024 and the second rises to 1024 in the same instant — detached
    // from one runqueue's sums and attached to the other's — where an average left to
    // itself would take ~100 ms to follow.
    let mut a = eevdf(Grouping::None);
    let running = run_a_second(&mut a, &[t(0), t(1)]);
    assert_near(load(&a), 2048);
    let waiting = t(1 - running.index());
    let now = 1000 * MS;
    let migrant = a.migrate_out(waiting, now);
    let mut b = eevdf(Grouping::None);
    b.migrate_in(waiting, migrant, None, now);
    assert_near(load(&a), 1024);
    assert_near(load(&b), 1024);
}

#[test]
fn with_groups_a_move_reaches_the_root_through_the_groups_entity() {
    // With per-uid groups a CPU's load is its groups' entities', and a task moving into
    // a group's queue changes the entity's load at once (propagation): the runnable time
    // it brings is added to the entity's, up to a full window — so a CPU that had nothing
    // weighs the group's 1024 right away.
    let mut a = eevdf(Grouping::Uid);
    let running = run_a_second(&mut a, &[t(0), t(1)]);
    // Two tasks of one group, always runnable: the group's entity, weight 1024, is.
    assert_near(load(&a), 1024);
    let waiting = t(1 - running.index());
    let now = 1000 * MS;
    let migrant = a.migrate_out(waiting, now);
    let mut b = eevdf(Grouping::Uid);
    b.migrate_in(waiting, migrant, None, now);
    assert_near(load(&b), 1024);
    // The group on `a` still runs a task all the time: its entity's load is unchanged
    // (what left was at most the queue's per-task share, and the one left runs on).
    assert_near(load(&a), 1024);
    // A task moved in from a wake-up counts the same.
    b.dequeue(waiting, now);
    let migrant = b.migrate_out(waiting, now);
    a.migrate_in(waiting, migrant, Some(Wakeup::default()), now);
    assert!(load(&b) <= 1, "{}", load(&b));
}

#[test]
fn in_6_6_two_busy_cpus_hold_half_each_and_a_lone_one_the_whole() {
    // One always-busy nice-0 task of a 1024 group on each of two CPUs: each runqueue
    // averages 1024, the total 2048, so each CPU's entity weighs
    // 1024 × 1024 / 2048 = 512.
    assert_eq!(calc_group_shares(1024, 1024, 1024, 2048, 1024), 512);
    // When CPU 1's task has left, its average decays, and CPU 0's part climbs back:
    // with CPU 1 down to 256 (two half-lives), 1024 × 1024 / 1280 = 819.
    assert_eq!(calc_group_shares(1024, 1024, 1024, 1280, 1024), 819);
    // A CPU the group has just reached: its average is still 0, but the weight queued
    // counts — 1024 / (2048 + 1024) of the shares, not nothing.
    assert_eq!(calc_group_shares(1024, 1024, 0, 2048, 0), 341);
    // Never more than the group's shares, never less than 2.
    assert_eq!(calc_group_shares(1024, 1024, 1024, 0, 0), 1024);
    assert_eq!(calc_group_shares(1024, 0, 0, 0, 0), MIN_SHARES);
    assert_eq!(calc_group_shares(1024, 0, 0, 1 << 20, 0), MIN_SHARES);
}

#[test]
fn in_6_6_a_cpu_publishes_only_a_change_over_a_64th() {
    assert_eq!(tg_load_avg_change(1040, 1024), None, "16 = 1024 / 64");
    assert_eq!(tg_load_avg_change(1041, 1024), Some(17));
    assert_eq!(tg_load_avg_change(0, 1024), Some(-1024));
}
