//! The seed experiments' workloads as kernel threads (the threads are cited in README.md).
//! Each task owns a [`Probe`] in the lab's table, where it records its samples and, as it
//! ends, its CPU time; the lab prints the reports once every task has ended.
//!
//! The same programs exist for the host simulator (`kernel/sched/src/sim/workload.rs`).

use crate::config::tasks::TaskKind;
use crate::println;
use crate::sched::{self, ForkKind};
use crate::time::{clock, hrtimer};
use ::sched::programs::{EXEC_COST_NS, JOB_CPU_NS, JOB_IO_BURST_NS, JOB_IO_SLEEP_NS, Rng};
use alloc::string::String;
use alloc::vec::Vec;
use spin::Mutex;
use x86_64::instructions::interrupts;

const MS: u64 = 1_000_000;

/// One lab task's parameters and measurements.
pub struct Probe {
    pub scenario: &'static str,
    pub name: String,
    pub kind: TaskKind,
    pub uid: u32,
    pub nice: i8,
    /// The spec's ARG (a duration in ns, or makej's job count).
    pub arg: u64,
    /// makej: its jobs sleep on I/O between bursts (`makej:N/io`).
    pub io: bool,
    /// When the scenario ends.
    pub end: u64,
    /// Instance number (lat3's `P` column).
    pub index: usize,
    /// Latency samples in ns (sleeper: overshoot; lat3: each cycle's longest gap; waker:
    /// each timer thread's lateness).
    pub samples: Vec<u64>,
    /// Waker: timer expiries that came while the previous one was still pending.
    pub missed: u64,
    /// CPU time of the task itself, recorded as it ends.
    pub cpu_ns: u64,
    /// The task running this probe, recorded by the task itself as it starts.
    pub task: Option<crate::task::TaskId>,
    /// Waker: the expiry waiting for the helper, and the next expiry.
    pub pending: Option<u64>,
    pub next_expiry: u64,
    /// The task's phase variation and makej's job lengths, from the `seed=` option.
    pub rng: Rng,
}

/// Every probe of the current scenario.
pub static PROBES: Mutex<Vec<Probe>> = Mutex::new(Vec::new());

/// Runs `f` on probe `index` with interrupts off (timer callbacks use the table too).
pub fn with_probe<R>(index: usize, f: impl FnOnce(&mut Probe) -> R) -> R {
    interrupts::without_interrupts(|| f(&mut PROBES.lock()[index]))
}

/// Records the running task's id in probe `index` and returns the index; every workload
/// does this first.
fn begin(index: u64) -> usize {
    let me = sched::current();
    with_probe(index as usize, |p| p.task = Some(me));
    index as usize
}

/// Records the running task's CPU time in its probe; every workload does this as it ends.
fn finish(index: usize) {
    let cpu = sched::current_cpu_ns();
    with_probe(index, |p| p.cpu_ns = cpu);
}

/// The thread body for probe `index`'s kind.
pub fn entry(kind: TaskKind) -> fn(u64) {
    match kind {
        TaskKind::Sleeper => sleeper,
        TaskKind::Hog => hog,
        TaskKind::Lat3 => lat3,
        TaskKind::Waker => waker,
        TaskKind::Makej => makej,
    }
}

fn hog(index: u64) {
    let index = begin(index);
    let end = with_probe(index, |p| p.end);
    clock::spin_until(end);
    finish(index);
}

/// seed 000's `sched.py`: sleeps ARG in a loop; each sample is how late it woke (timer slack
/// included, as the script measured it); every 0.5 s prints the median of its last 5
/// samples, in ms, as the script did (`14.810944 ms`). It starts at a random point of its
/// first period and does a little work per iteration (`sched::programs`).
fn sleeper(index: u64) {
    let index = begin(index);
    let (period, end, scenario) = with_probe(index, |p| (p.arg, p.end, p.scenario));
    let offset = with_probe(index, |p| p.rng.start_offset(period));
    sched::sleep(offset);
    let mut last_five: Vec<u64> = Vec::new();
    let mut next_print = clock::now() + 500 * MS;
    while clock::now() + period < end {
        let (work, slack) = with_probe(index, |p| (p.rng.sleeper_loop_work(), p.rng.timer_slack()));
        clock::spin_until(clock::now() + work);
        let due = clock::now() + period;
        sched::sleep_until(due + slack);
        let late = clock::now() - due;
        with_probe(index, |p| p.samples.push(late));
        if last_five.len() == 5 {
            last_five.remove(0);
        }
        last_five.push(late);
        if clock::now() >= next_print {
            let mut sorted = last_five.clone();
            sorted.sort_unstable();
            let median = sorted[sorted.len() / 2];
            println!("{scenario}: {}.{:06} ms", median / MS, median % MS);
            next_print += 500 * MS;
        }
    }
    finish(index);
}

/// seed 002's `lat3`: spins ARG of wall time reading the clock, then sleeps 1 ms, until the
/// end; one line per cycle, `P: Date_sec.usec select loop maxlat nbmax` (µs): how long the
/// 1 ms sleep took, how long the spin took, the longest gap between two clock reads in the
/// spin (the longest time the task was kept off the CPU) and how many gaps exceeded 1 ms.
fn lat3(index: u64) {
    let index = begin(index);
    let (spin, end, scenario, p) = with_probe(index, |p| (p.arg, p.end, p.scenario, p.index));
    let mut select = 0;
    while clock::now() < end {
        let start = clock::now();
        let (mut previous, mut max_gap, mut gaps) = (start, 0, 0);
        while previous - start < spin && previous < end {
            let now = clock::now();
            let gap = now - previous;
            max_gap = max_gap.max(gap);
            gaps += u64::from(gap > MS);
            previous = now;
        }
        let spun = previous - start;
        with_probe(index, |probe| probe.samples.push(max_gap));
        println!(
            "{scenario}: {p}: {}.{:06} {} {} {} {gaps}",
            previous / 1_000_000_000,
            previous % 1_000_000_000 / 1_000,
            select / 1_000,
            spun / 1_000,
            max_gap / 1_000
        );
        if previous >= end {
            break;
        }
        let before = clock::now();
        let slack = with_probe(index, |p| p.rng.timer_slack());
        sched::sleep(MS + slack);
        select = clock::now() - before;
    }
    finish(index);
}

/// The waker's periodic timer (data: the probe index). Hands the ideal expiry to the helper
/// thread — counting an overrun if the previous one is still pending — and arms the next
/// expiry, or, past the end, one last wake-up at the end so that the helper notices it.
fn waker_tick(index: u64, now: u64) {
    let (task, rearm) = with_probe(index as usize, |p| {
        if p.next_expiry <= now {
            match p.pending {
                Some(_) => p.missed += 1,
                None => p.pending = Some(p.next_expiry),
            }
            p.next_expiry += p.arg;
        }
        let rearm = if p.next_expiry < p.end {
            Some(p.next_expiry)
        } else if now < p.end {
            Some(p.end)
        } else {
            None
        };
        (p.task, rearm)
    });
    if let Some(at) = rearm {
        hrtimer::start(at, waker_tick, index);
    }
    if let Some(task) = task {
        sched::unpark_irq(task, now);
    }
}

/// seed 003's `wakeup-latency`: a periodic timer (ARG) whose every expiry makes this helper
/// thread create a new thread, as glibc does for SIGEV_THREAD; the new thread records how
/// late it runs against the ideal expiry. At the end, the program's three closing lines.
fn waker(index: u64) {
    let i = begin(index);
    // POSIX timers have no slack; the program's start is the only drift (a random point
    // of its first period).
    let (end, scenario) = with_probe(i, |p| {
        p.next_expiry = clock::now() + p.arg + p.rng.start_offset(p.arg);
        (p.end, p.scenario)
    });
    hrtimer::start(with_probe(i, |p| p.next_expiry), waker_tick, index);
    while clock::now() < end {
        sched::park();
        // Reap the timer threads that have ended (glibc's threads are detached).
        while sched::try_wait_child().is_some() {}
        let Some(due) = with_probe(i, |p| p.pending.take()) else {
            continue;
        };
        let packed = (index << 48) | (due & ((1 << 48) - 1));
        let _ = sched::spawn_child(timer_thread, packed, "wakeup-thread", ForkKind::Fork);
    }
    // The threads still running use this probe: wait for them.
    while sched::wait_child().is_some() {}
    let (samples, missed) = with_probe(i, |p| (p.samples.clone(), p.missed));
    let max = samples.iter().copied().max().unwrap_or(0);
    let avg = samples.iter().sum::<u64>() / (samples.len() as u64).max(1);
    println!(
        "{scenario}: maximum latency: {}.{} µs",
        max / 1_000,
        max % 1_000 / 100
    );
    println!(
        "{scenario}: average latency: {}.{} µs",
        avg / 1_000,
        avg % 1_000 / 100
    );
    println!("{scenario}: missed timer events: {missed}");
    finish(i);
}

/// A thread created for one timer expiry: records its lateness and ends.
fn timer_thread(packed: u64) {
    let index = (packed >> 48) as usize;
    let now = clock::now();
    // The expiry's low 48 bits (78 hours of clock) travel in the argument.
    let expiry = (now & !((1 << 48) - 1)) | (packed & ((1 << 48) - 1));
    with_probe(index, |p| p.samples.push(now.saturating_sub(expiry)));
}

/// seed 003's `make -j N`: keeps ARG jobs alive; each starts vfork-style (this parent sleeps
/// until the job execs), burns a pseudo-random 5–50 ms of CPU — in bursts with I/O sleeps
/// between them with `makej:N/io` — and exits; the parent waits for any job and starts the
/// next, until the end. The numbers are `sched::programs`', shared with the simulator.
fn makej(index: u64) {
    let i = begin(index);
    let (jobs, end) = with_probe(i, |p| (p.arg, p.end));
    let mut running = 0;
    while clock::now() < end || running > 0 {
        while running < jobs && clock::now() < end {
            let cpu = with_probe(i, |p| p.rng.within(JOB_CPU_NS));
            let job_index = (index << 48) | (cpu & ((1 << 48) - 1));
            if sched::spawn_child(job, job_index, "job", ForkKind::Vfork).is_err() {
                break;
            }
            running += 1;
        }
        // Wait for any job to end (`wait()`).
        match sched::wait_child() {
            Some(_) => running -= 1,
            None => running = 0,
        }
    }
    finish(i);
}

/// One compile job (argument: its probe index and CPU to burn, packed): exec, burn its CPU
/// (never past the end), sleeping on I/O between bursts if its makej says so, exit (its
/// parent reaps it).
fn job(packed: u64) {
    let index = (packed >> 48) as usize;
    let mut left = packed & ((1 << 48) - 1);
    clock::spin_until(clock::now() + EXEC_COST_NS);
    sched::exec_done();
    let (end, io) = with_probe(index, |p| (p.end, p.io));
    while left > 0 && clock::now() < end {
        let burst = if io {
            with_probe(index, |p| p.rng.within(JOB_IO_BURST_NS)).min(left)
        } else {
            left
        };
        left -= burn_cpu(burst, end);
        if io && left > 0 {
            let sleep = with_probe(index, |p| p.rng.within(JOB_IO_SLEEP_NS));
            sched::sleep(sleep);
        }
    }
}

/// Burns `cpu` ns of CPU time — not wall time: spins in slices and counts only what ran —
/// or until the clock reads `end`. Returns the CPU time burnt.
fn burn_cpu(cpu: u64, end: u64) -> u64 {
    let mut left = cpu;
    while left > 0 && clock::now() < end {
        let before = sched::current_cpu_ns();
        clock::spin_until(clock::now() + left.min(MS));
        let after = sched::current_cpu_ns();
        left = left.saturating_sub((after - before).max(1));
    }
    cpu - left
}
