//! Preemptive multitasking on real timers, in QEMU under -icount (deterministic): spinning
//! threads share the CPU as the policy says, sleeps end on time, and spawning and exiting
//! many threads gives back every byte.

#![no_std]
#![no_main]
#![feature(custom_test_frameworks)]
#![test_runner(kernel::testing::run_tests)]
#![reexport_test_harness_main = "test_main"]

extern crate alloc;

mod ftrace_check;
use ftrace_check::parse_ftrace_line;

use alloc::string::String;
use alloc::vec::Vec;
use bootloader_api::BootInfo;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::config::{ClockEvent, Config};
use kernel::mm::heap;
use kernel::sched;
use kernel::time::clock;
use kernel::{ExitCode, exit};

bootloader_api::entry_point!(main, config = &kernel::BOOTLOADER_CONFIG);

fn main(boot_info: &'static mut BootInfo) -> ! {
    kernel::init(boot_info);
    test_main();
    exit(ExitCode::Success)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    kernel::testing::test_panic_handler(info)
}

const MS: u64 = 1_000_000;

/// Spins until the clock reads `deadline` (passed as the argument).
fn spin_until(deadline: u64) {
    clock::spin_until(deadline);
}

/// Runs `(uid, nice)` spinners for `window` ns and returns each one's CPU time.
fn spinners(options: &str, specs: &[(u32, i8)], window: u64) -> Vec<u64> {
    sched::set_policy(&Config::parse(options).unwrap()).expect("only main and idle alive");
    let deadline = clock::now() + window;
    let ids: Vec<kernel::task::TaskId> = specs
        .iter()
        .map(|&(uid, nice)| sched::spawn(spin_until, deadline, "spinner", uid, nice).unwrap())
        .collect();
    // Collect the statistics before the threads go away: read them before the deadline,
    // early enough for a policy that lets the reader wait for its turn (EEVDF's
    // RUN_TO_PARITY holds a wake-up back until the running task's request is served).
    sched::sleep_until(deadline - 10 * MS);
    let cpu: Vec<u64> = ids
        .iter()
        .map(|&id| {
            sched::task_stats(id)
                .unwrap_or_else(|| {
                    panic!(
                        "{options}: spinner {id} gone at {} of deadline {deadline}",
                        clock::now()
                    )
                })
                .3
                .cpu_ns
        })
        .collect();
    for id in ids {
        sched::join(id);
    }
    cpu
}

fn shares(cpu: &[u64]) -> Vec<f64> {
    let total: u64 = cpu.iter().sum();
    cpu.iter().map(|&c| c as f64 / total as f64).collect()
}

#[test_case]
fn two_spinning_threads_both_make_progress() {
    // Each spins until the same deadline: without timer preemption the first would take
    // the whole window and the second would start after it, with nothing left to do.
    // Under every policy: CFS's 3 ms slices, EEVDF's 0.75 ms requests, O(1)'s 100 ms
    // time slices all fit twice in the window.
    for options in ["policy=cfs", "policy=eevdf", "policy=o1"] {
        let cpu = spinners(options, &[(1, 0), (1, 0)], 200 * MS);
        for (i, c) in cpu.iter().enumerate() {
            assert!(
                *c >= 80 * MS,
                "{options}: spinner {i} got only {c} ns of 200 ms: {cpu:?}"
            );
        }
    }
}

#[test_case]
fn nice_0_and_nice_5_share_75_25_under_cfs_and_eevdf() {
    // Weights 1024 and 335: 1024 / 1359 = 75.3% and 24.7% (docs/scheduler.md §1.1).
    for options in ["policy=cfs", "policy=eevdf"] {
        let s = shares(&spinners(options, &[(1, 0), (1, 5)], 1_000 * MS));
        assert!(
            (s[0] - 0.753).abs() <= 0.02,
            "{options}: nice 0 got {:.3}",
            s[0]
        );
        assert!(
            (s[1] - 0.247).abs() <= 0.02,
            "{options}: nice 5 got {:.3}",
            s[1]
        );
    }
}

#[test_case]
fn groups_split_per_uid_before_per_task() {
    // uid 1: one spinner; uid 2: three. Per-uid groups give each uid half the CPU; without
    // groups each of the four tasks gets a quarter.
    let specs = [(1, 0), (2, 0), (2, 0), (2, 0)];
    let grouped = shares(&spinners("era=2.6.36 group=uid", &specs, 1_000 * MS));
    assert!(
        (grouped[0] - 0.5).abs() <= 0.02,
        "group=uid: uid 1 got {:.3}",
        grouped[0]
    );
    let flat = shares(&spinners("era=2.6.36 group=none", &specs, 1_000 * MS));
    assert!(
        (flat[0] - 0.25).abs() <= 0.02,
        "group=none: uid 1 got {:.3}",
        flat[0]
    );
}

#[test_case]
fn an_idle_100_ms_sleep_ends_within_50_us() {
    sched::set_policy(&Config::default()).expect("only main and idle alive");
    let start = clock::now();
    sched::sleep(100 * MS);
    let late = clock::now() - start - 100 * MS;
    // The APIC one-shot fires on time; the wake-up and the switch cost microseconds.
    assert!(late <= 50_000, "woke {late} ns late");
}

#[test_case]
fn spawning_and_exiting_10_000_threads_gives_back_the_heap() {
    fn nothing(_: u64) {}
    // One round first, so that tables reach their working size.
    for _ in 0..100 {
        let id = sched::spawn(nothing, 0, "short", 1, 0).unwrap();
        sched::join(id);
    }
    let heap_before = heap::stats().used;
    for _ in 0..10_000 {
        let id = sched::spawn(nothing, 0, "short", 1, 0).unwrap();
        sched::join(id);
    }
    assert_eq!(
        heap::stats().used,
        heap_before,
        "the heap grew over 10 000 spawn/exit"
    );
}

/// Regression: ids were reused, so joining an exited task could wait
/// for the newer task that got its number.
#[test_case]
fn task_ids_are_never_reused() {
    fn nothing(_: u64) {}
    sched::set_policy(&Config::default()).expect("only main and idle alive");
    let first = sched::spawn(nothing, 0, "short", 1, 0).unwrap();
    sched::join(first);
    let deadline = clock::now() + 20 * MS;
    let second = sched::spawn(spin_until, deadline, "long", 1, 0).unwrap();
    assert_ne!(first, second, "an exited task's id was given again");
    sched::join(first);
    assert!(
        clock::now() < deadline,
        "joining an exited task waited for the new one"
    );
    assert!(sched::task_stats(first).is_none());
    assert!(sched::task_stats(second).is_some());
    sched::join(second);
}

/// A child that records its own id, read as its first act.
fn records_its_id(_: u64) {
    OWN_ID.store(sched::current().number() as u64, Ordering::SeqCst);
}

static OWN_ID: AtomicU64 = AtomicU64::new(u64::MAX);

/// Regression: a child that preempts its parent at once still
/// knows its id, and the parent reaps exactly the children it started.
#[test_case]
fn a_parent_reaps_each_child_once_even_when_children_preempt_it() {
    // Under O(1) a fork child runs first: it preempts the parent inside `spawn_child`.
    sched::set_policy(&Config::parse("policy=o1").unwrap()).expect("only main and idle alive");
    let mut started = Vec::new();
    for _ in 0..5 {
        let id = sched::spawn_child(records_its_id, 0, "child", sched::ForkKind::Fork).unwrap();
        assert_eq!(OWN_ID.load(Ordering::SeqCst), id.number() as u64);
        started.push(id);
    }
    let mut reaped = Vec::new();
    while let Some(zombie) = sched::wait_child() {
        reaped.push(zombie.id);
    }
    reaped.sort_unstable();
    assert_eq!(reaped, started);
    assert!(sched::reap_child(sched::WaitTarget::Any).is_none());
    sched::set_policy(&Config::default()).expect("every child reaped");
}

static EXEC_AT: AtomicU64 = AtomicU64::new(0);

/// A vfork child: works 5 ms, execs, works 5 ms more, exits.
fn vfork_child_that_execs(_: u64) {
    clock::spin_until(clock::now() + 5 * MS);
    EXEC_AT.store(clock::now(), Ordering::SeqCst);
    sched::exec_done();
    clock::spin_until(clock::now() + 5 * MS);
}

/// A vfork child that works 5 ms and exits without exec.
fn vfork_child_that_exits(_: u64) {
    clock::spin_until(clock::now() + 5 * MS);
    EXEC_AT.store(clock::now(), Ordering::SeqCst);
}

#[test_case]
fn a_vfork_parent_sleeps_until_its_child_execs_or_exits() {
    sched::set_policy(&Config::default()).expect("only main and idle alive");
    for child in [vfork_child_that_execs as fn(u64), vfork_child_that_exits] {
        EXEC_AT.store(0, Ordering::SeqCst);
        let id = sched::spawn_child(child, 0, "vfork-child", sched::ForkKind::Vfork).unwrap();
        let back = clock::now();
        let exec = EXEC_AT.load(Ordering::SeqCst);
        assert!(
            exec != 0 && back >= exec,
            "the parent ran on before its child's exec ({exec}, {back})"
        );
        sched::join(id);
    }
}

static MOVED: AtomicU64 = AtomicU64::new(0);

/// Runs as root: becomes uid 3 and records whether its uid's runqueue now holds it.
fn becomes_uid_3(_: u64) {
    let ok = sched::setuid(3).is_ok();
    let queued = sched::with_policy(|p| {
        p.runqueues()
            .iter()
            .any(|q| q.name == "/uids/3" && q.nr_running == 1)
    });
    let denied = sched::setuid(0) == Err(sched::PermissionDenied);
    MOVED.store(
        u64::from(ok) | u64::from(queued) << 1 | u64::from(denied) << 2,
        Ordering::SeqCst,
    );
}

#[test_case]
fn setuid_is_for_root_and_moves_the_task_to_its_new_group() {
    // 2.6.24: per-uid groups. Root may become uid 3 (and lands in uid 3's group); uid 3 may
    // not become anything else.
    sched::set_policy(&Config::parse("era=2.6.24").unwrap()).expect("only main and idle alive");
    MOVED.store(0, Ordering::SeqCst);
    let id = sched::spawn(becomes_uid_3, 0, "setuid", 0, 0).unwrap();
    sched::join(id);
    assert_eq!(
        MOVED.load(Ordering::SeqCst),
        0b111,
        "bits: setuid ok, queued in uid 3, refused after"
    );
}

/// Sleeps 10.3 ms twenty times and returns the smallest and largest lateness (negative:
/// early), with the given timer setup; restores the default (APIC, hrtimers) afterwards.
fn sleep_lateness(clockevent: ClockEvent, hrtimer: bool) -> (i64, i64, u64) {
    let tick = kernel::time::init(clockevent, 1000, hrtimer).tick_ns;
    let (mut min, mut max) = (i64::MAX, i64::MIN);
    for _ in 0..20 {
        let deadline = clock::now() + 10_300_000;
        sched::sleep_until(deadline);
        let late = clock::now() as i64 - deadline as i64;
        min = min.min(late);
        max = max.max(late);
    }
    kernel::time::init(ClockEvent::Lapic, 1000, true);
    (min, max, tick)
}

#[test_case]
fn without_hrtimers_or_with_the_pit_sleeps_end_at_the_next_tick() {
    sched::set_policy(&Config::default()).expect("only main and idle alive");
    // hrtimer=off: the sleep's end is rounded up to the next tick boundary (the jiffies
    // world): never early, late by less than a tick (plus the wake-up's own cost).
    let (min, max, tick) = sleep_lateness(ClockEvent::Lapic, false);
    assert!(min >= 0, "woke {} ns early", -min);
    assert!(
        max < (tick + 50_000) as i64,
        "woke {max} ns late with a {tick} ns tick"
    );
    // clockevent=pit: timers are only checked at the PIT's periodic interrupts.
    let (min, max, tick) = sleep_lateness(ClockEvent::Pit, true);
    assert!(min >= 0, "woke {} ns early", -min);
    assert!(
        max < (tick + 50_000) as i64,
        "woke {max} ns late with a {tick} ns PIT tick"
    );
    // And the rounding really happens: 10.3 ms sleeps cannot all end within 50 µs.
    assert!(max > 50_000, "no tick rounding seen ({max} ns)");
}

/// The checker is Linux's format, not ours: lines from Linux 6.x traces (posted to LKML and
/// in kernel documentation) pass it. `<idle>` lines of any event show the idle column.
#[test_case]
fn real_linux_6_trace_lines_pass_the_format_check() {
    for line in [
        "            sudo-5229    [000] d.... 17001.435416: sched_switch: prev_comm=sudo prev_pid=5229 prev_prio=120 prev_state=R+ ==> next_comm=kworker/0:0 next_pid=2379 next_prio=120",
        "            bash-178     [000] ...1.    97.968395: sched_process_fork: comm=bash pid=178 child_comm=bash child_pid=231",
        "          stream-5045    [032] d..2.   167.914699: sched_wakeup_new: comm=stream pid=5047 prio=120 target_cpu=048",
        " process_exit.sh-1822    [000] .....  6541.710373: sched_process_exit: comm=process_exit.sh pid=1822 prio=120",
        "          <idle>-0       [005] d.h2.   521.164922: sched_waking: comm=kworker/5:1 pid=93 prio=120 target_cpu=005",
    ] {
        parse_ftrace_line(line);
    }
}

#[test_case]
fn the_trace_is_ftrace_text_and_counts_every_switch() {
    sched::set_policy(&Config::default()).expect("only main and idle alive");
    let before = sched::trace_start(65_536);
    let deadline = clock::now() + 30 * MS;
    let a = sched::spawn(spin_until, deadline, "spin a", 1, 0).unwrap();
    let b = sched::spawn(spin_until, deadline, "spin b", 1, 0).unwrap();
    sched::join(a);
    sched::join(b);
    let (trace, after) = sched::trace_stop();
    let mut text = String::new();
    trace.unwrap().write_ftrace(&mut text).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("# tracer: nop"));
    // Linux 6.x's header: the five flag columns, named.
    assert!(text.contains("#                              ||| / _-=> migrate-disable\n"));
    assert!(text.contains("#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"));
    let (mut switches, mut last) = (0, 0);
    let mut seen = alloc::collections::BTreeSet::new();
    for line in lines.filter(|l| !l.starts_with('#')) {
        let (at, event, prev_state) = parse_ftrace_line(line);
        assert!(at >= last, "time went back at {line:?}");
        last = at;
        switches += u64::from(event == "sched_switch");
        seen.insert(event);
        seen.extend(prev_state);
        // The idle task is `<idle>-0` in the task column (`swapper/0` in event fields).
        if event == "sched_switch" {
            assert_eq!(
                line.starts_with("          <idle>-0 "),
                line.contains(" prev_pid=0 "),
                "{line}"
            );
        }
    }
    // Two spinners preempt each other (`R+`) and exit (`X`); `main` sleeps in join (`S`).
    for expected in [
        "sched_process_fork",
        "sched_wakeup_new",
        "sched_waking",
        "sched_process_exit",
        "R+",
        "S",
        "X",
    ] {
        assert!(
            seen.contains(expected),
            "no {expected} in the trace:\n{text}"
        );
    }
    // Two spinners share 30 ms in 3 ms slices, each ended at the first tick after it (4 ms
    // at the default HZ=250): at least one switch per slice so served, plus the joins.
    let served = (3 * MS).max(kernel::time::tick_ns());
    assert!(
        switches >= 30 * MS / served,
        "only {switches} switches traced"
    );
    assert_eq!(
        switches,
        after - before,
        "the trace and the tasks' counters disagree"
    );
}
