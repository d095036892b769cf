//! In-kernel tests of the clock and timers. They run under `-icount shift=0,sleep=off`
//! (the test runner's default), where virtual time is exact: the TSC and the APIC timer tick
//! at 1 GHz and an idle CPU jumps to its next timer.

use super::*;
use crate::config::ClockEvent;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use spin::Mutex;

/// Halts (with interrupts on) until `done` holds; timers must be pending, or QEMU's
/// sleep=off mode would have nothing to jump to.
fn idle_until(done: impl Fn() -> bool) {
    while !done() {
        crate::arch::irq::enable_and_wait();
    }
}

static FIRED_AT: AtomicU64 = AtomicU64::new(0);

fn record_fire(_data: u64, now: u64) {
    FIRED_AT.store(now, Ordering::SeqCst);
}

#[test_case]
fn the_tsc_is_calibrated_to_1_ghz_under_icount() {
    // Under -icount the TSC counts virtual nanoseconds; the PIT measurement must see that
    // within the polling granularity (0.1%).
    let hz = clock::tsc_hz();
    assert!(hz.abs_diff(1_000_000_000) <= 1_000_000, "TSC at {hz} Hz");
}

#[test_case]
fn an_idle_100_ms_timer_fires_within_50_us() {
    FIRED_AT.store(0, Ordering::SeqCst);
    let expiry = clock::now() + 100_000_000;
    hrtimer::start(expiry, hrtimer::Action::Test(record_fire, 0));
    idle_until(|| FIRED_AT.load(Ordering::SeqCst) != 0);
    let fired = FIRED_AT.load(Ordering::SeqCst);
    // Never early; late only by the interrupt's latency (the APIC is programmed in ticks of
    // its 1 GHz clock, so the rounding is below a nanosecond).
    assert!(fired >= expiry, "fired {} ns early", expiry - fired);
    assert!(fired - expiry <= 50_000, "fired {} ns late", fired - expiry);
}

static ORDER: Mutex<Vec<u64>> = Mutex::new(Vec::new());

fn record_order(data: u64, _now: u64) {
    ORDER.lock().push(data);
}

#[test_case]
fn timers_fire_in_expiry_order_and_cancelled_ones_never() {
    ORDER.lock().clear();
    let now = clock::now();
    hrtimer::start(now + 3_000_000, hrtimer::Action::Test(record_order, 3));
    let cancelled = hrtimer::start(now + 2_000_000, hrtimer::Action::Test(record_order, 99));
    hrtimer::start(now + 1_000_000, hrtimer::Action::Test(record_order, 1));
    hrtimer::start(now + 2_000_000, hrtimer::Action::Test(record_order, 2));
    assert!(hrtimer::cancel(cancelled));
    assert!(
        !hrtimer::cancel(cancelled),
        "a cancelled timer cancels twice"
    );
    idle_until(|| ORDER.lock().len() == 3);
    assert_eq!(*ORDER.lock(), [1, 2, 3]);
}

#[test_case]
fn sleeps_round_up_to_ticks_only_without_hrtimers() {
    // Whatever the boot's tick (the era's HZ unless hz= is given), an expiry 0.3 ms past a
    // tick boundary ends at the next boundary; one on a boundary stays.
    let tick = tick_ns();
    let (between, boundary) = (10 * tick + 300_000, 11 * tick);
    HRTIMER_OFF.store(false, Ordering::Relaxed);
    assert_eq!(sleep_expiry(between), between);
    HRTIMER_OFF.store(true, Ordering::Relaxed);
    assert_eq!(sleep_expiry(between), boundary);
    assert_eq!(sleep_expiry(boundary), boundary);
    HRTIMER_OFF.store(false, Ordering::Relaxed);
}

#[test_case]
fn with_the_pit_timers_fire_at_the_next_tick() {
    let report = init(ClockEvent::Pit, 1000, true);
    assert_eq!(report.tick_ns, 999_847, "1193 PIT ticks at 1.193182 MHz");
    FIRED_AT.store(0, Ordering::SeqCst);
    let expiry = clock::now() + 10_300_000;
    hrtimer::start(expiry, hrtimer::Action::Test(record_fire, 0));
    idle_until(|| FIRED_AT.load(Ordering::SeqCst) != 0);
    let late = FIRED_AT.load(Ordering::SeqCst) - expiry;
    // The PIT interrupts once per tick; the timer waits for the first one after its expiry.
    assert!(
        late <= report.tick_ns + 50_000,
        "{late} ns late with a {} ns tick",
        report.tick_ns
    );
    init(ClockEvent::Lapic, 1000, true);
}

#[test_case]
fn the_tick_runs_at_hz() {
    let before = ticks();
    start_tick();
    FIRED_AT.store(0, Ordering::SeqCst);
    hrtimer::start(
        clock::now() + 20_000_000,
        hrtimer::Action::Test(record_fire, 0),
    );
    idle_until(|| FIRED_AT.load(Ordering::SeqCst) != 0);
    // 20 ms at the boot's tick rate (the era's HZ: 250 by default), give or take one.
    let expected = 20_000_000 / tick_ns();
    let counted = ticks() - before;
    assert!(
        (expected - 1..=expected + 1).contains(&counted),
        "{counted} ticks in 20 ms with a {} ns tick",
        tick_ns()
    );
}

static RANGE_FIRED: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

fn record_range(data: u64, now: u64) {
    RANGE_FIRED.lock().push((data, now));
}

#[test_case]
fn a_timer_with_slack_fires_with_an_earlier_interrupt_in_its_range_else_at_its_end() {
    // All three inside one tick period, clear of the tick's own interrupts (at multiples of
    // the tick), in eighths T/8 of the tick: timer 1 may fire from 2/8 to 4/8; timer 2 is due
    // at 3/8, inside that range, and its interrupt runs both (Linux's hrtimer ranges). Timer
    // 3, alone from 5/8 with 1/16 of slack, fires at its hard expiry — never before 5/8.
    RANGE_FIRED.lock().clear();
    let tick = tick_ns();
    let eighth = tick / 8;
    let base = clock::now().next_multiple_of(tick);
    hrtimer::start_range(
        base + 2 * eighth,
        2 * eighth,
        hrtimer::Action::Test(record_range, 1),
    );
    hrtimer::start(base + 3 * eighth, hrtimer::Action::Test(record_range, 2));
    hrtimer::start_range(
        base + 5 * eighth,
        eighth / 2,
        hrtimer::Action::Test(record_range, 3),
    );
    idle_until(|| RANGE_FIRED.lock().len() == 3);
    let fired = RANGE_FIRED.lock().clone();
    let at = |id: u64| fired.iter().find(|f| f.0 == id).expect("fired").1 - base;
    // Late only by the interrupt's latency, 50 µs at most (as for a plain timer).
    let around = |t: u64| t..t + 50_000;
    assert!(around(3 * eighth).contains(&at(1)), "{fired:?}");
    assert!(around(3 * eighth).contains(&at(2)), "{fired:?}");
    assert!(
        around(5 * eighth + eighth / 2).contains(&at(3)),
        "{fired:?}"
    );
}

#[test_case]
fn select_and_poll_slack_is_a_thousandth_of_the_timeout_between_50_us_and_100_ms() {
    assert_eq!(poll_slack(1_000_000), TIMER_SLACK_NS);
    assert_eq!(poll_slack(1_000_000_000), 1_000_000);
    assert_eq!(poll_slack(u64::MAX), 100_000_000);
}
