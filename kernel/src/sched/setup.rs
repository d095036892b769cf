//! Bringing the scheduler up — the boot flow becomes a task, an idle task waits for an idle
//! CPU, the tick starts — and replacing its policy between lab scenarios; both turn the
//! boot options into a scheduling policy from the `sched` crate (the options' own
//! `Config::fair_params` builds the fair class's parameters).

use super::runqueue::Runqueue;
use super::runqueue::Runqueues;
use super::table::{idle_slot, idle_slot_of};
use super::{Scheduler, TRACE_EVENTS, debugger, new_task, trace_start};
use super::{trace, with_sched};
use crate::arch::irq;
use crate::config::{Config, Policy as ConfigPolicy};
use crate::mm::stack::KernelStack;
use crate::task::{Context, Slot, TaskId};
use crate::time::{self, clock};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use sched::smp::topology::Topology;
use sched::{Fair, O1, Policy, Rq};

/// The policy `config` asks for, ticking every `tick_ns`.
pub fn policy_from(config: &Config, tick_ns: u64) -> Box<dyn Policy + Send> {
    let Some(era) = config
        .effective_era()
        .filter(|_| config.policy != ConfigPolicy::O1)
    else {
        return Box::new(O1::new(tick_ns));
    };
    Box::new(Fair::new(config.fair_params(era, tick_ns)))
}

/// Whether `policy` queues wake-ups on their CPU (`TTWU_QUEUE`): read from the policy as
/// built, so that the options' defaults and the era's preset are decided in one place.
fn queues_wakeups(policy: &(dyn Policy + Send)) -> bool {
    let params = policy.fair_params();
    params.is_some_and(|p| p.features.has(sched::Feature::TtwuQueue))
}

fn idle_loop(_: u64) {
    loop {
        irq::disable();
        switch_if_asked();
        // `sti; hlt` atomically: an interrupt between the two could not be missed.
        irq::enable_and_wait();
    }
}

/// The idle task, interrupts off, about to halt: if a task was queued on this CPU since it
/// last looked, it switches to it first (Linux's `do_idle` halts only `while
/// (!need_resched())`). Another CPU that queues a task here sends the reschedule IPI, which
/// wakes the halt; but a task this CPU queued on itself (a timer's wake-up in an interrupt
/// the idle task took before it got here) has no interrupt left to say so — without this
/// look the CPU would halt beside it until the next one. The look reads the flag without
/// the runqueue's lock (`resched`).
fn switch_if_asked() {
    // (An AP idles before the scheduler has started, `cpus::ap_main`: nothing is asked then.
    // `schedule()` itself switches again for as long as a reschedule is asked.)
    if super::resched::asked_here() {
        super::schedule();
    }
}

/// Starts multitasking: the boot flow becomes task 0 ("main", uid 0), an idle task waits
/// for when nothing is runnable, and the tick starts driving the policy. Each other CPU in
/// `online` (by number) gets a runqueue of its own, with its own policy instance, whose
/// idle task is that CPU's boot flow — now halted in `cpus::ap_main`, as Linux's
/// `swapper/N` is each AP's first thread.
pub fn init(config: &Config, online: &[usize], topology: Topology) {
    let policy = policy_from(config, time::tick_ns());
    let idle_stack = KernelStack::new().expect("no memory for the idle task's stack");
    // With more than one CPU, each gets a stopper (`stopper`): one stack each, by CPU.
    let last = online.iter().copied().max().unwrap_or(0);
    let mut stopper_stacks: Vec<Option<KernelStack>> = (0..=last)
        .map(|cpu| {
            let wanted = online.len() > 1 && online.contains(&cpu);
            wanted.then(|| KernelStack::new().expect("no memory for a stopper's stack"))
        })
        .collect();
    super::wakelist::init(&topology, queues_wakeups(policy.as_ref()));
    irq::without(|| {
        let now = clock::now();
        // The boot task takes slot 0 and the idle task slot 1, in that order.
        let (main, idle) = (Slot::new(0), idle_slot(0));
        let mut s = Scheduler {
            rqs: Runqueues::new(),
            ap_idle: alloc::vec![None],
            balancing: super::balance::BalanceState::new(config, topology),
            online: alloc::vec![0],
            online_mask: 1,
            present_mask: 1,
            slots: Vec::new(),
            free_slots: Vec::new(),
            by_id: BTreeMap::new(),
            next_id: TaskId::from_number(0),
        };
        // `log=trace`: read from the log level once, as the scheduler starts (the level is
        // set once, before), rather than asked of the logger at every event.
        if log::log_enabled!(log::Level::Trace) {
            super::tracing::echo_events();
        }
        // The boot flow runs on the bootloader's stack, and its context is saved at its
        // first switch: it has none to start from.
        let (main_task, _) = new_task("main", 0, 0, None, None);
        assert_eq!(s.add(main_task).1, main);
        let (idle_task, idle_context) =
            new_task("idle", 0, 0, Some((idle_loop, 0)), Some(idle_stack));
        assert_eq!(s.add(idle_task).1, idle);
        // Linux's idle task appears in events as `swapper/0`, pid 0.
        let (id, comm) = (s.task_ref(idle).id, s.task_ref(idle).comm(true));
        let idle_context = Context {
            id,
            process: id,
            comm,
            ..*idle_context
        };
        let mut rq = Runqueue::new(Rq::new(0, policy, idle), idle_context);
        super::resched::publish(0, rq.resched_flag());
        let main_context = Box::new(Context {
            cpu: s.task_ref(main).cpu.clone(),
            ..Context::running(s.task_ref(main).id, s.task_ref(main).comm(false))
        });
        rq.run_boot_task(main, main_context, (0, 0), now);
        if let Some(stack) = stopper_stacks[0].take() {
            s.add_stopper(&mut rq, stack, now);
        }
        s.rqs.push(rq);
        s.add_cpus(online, config, &mut stopper_stacks, now);
        *super::SCHED.lock() = Some(s);
    });
    // With every runqueue in place: the balancer reads them.
    with_sched(Scheduler::build_balancer);
    // Nothing in the kernel calls gdb's entry point; naming it here keeps the linker from
    // dropping it (and the text buffer it writes).
    core::hint::black_box(debugger::cfslab_gdb_dump as extern "C" fn(u64, u64) -> u64);
    time::start_tick();
    if config.trace {
        trace_start(TRACE_EVENTS);
    }
}

/// Tasks still alive other than the boot task and each CPU's own (idle, stopper).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TasksAlive(pub usize);

/// Replaces the policy, e.g. between two lab scenarios. Only the boot task may exist besides
/// each CPU's idle task and stopper, which the policy never sees: the caller reaps every
/// task it started first (see [`wait_child`]). The boot task is registered with the new
/// policy and keeps running; every other CPU gets an instance too.
pub fn set_policy(config: &Config) -> Result<(), TasksAlive> {
    let policy = policy_from(config, time::tick_ns());
    with_sched(|s| {
        let live = s.slots.iter().flatten();
        let live = live
            .filter(|t| !s.is_idle(t.slot) && !s.is_stopper(t.slot) && s.alive(t.slot))
            .count();
        if live != 1 {
            return Err(TasksAlive(live - 1));
        }
        super::wakelist::set_enabled(queues_wakeups(policy.as_ref()));
        s.rqs[0].replace_policy(policy, 0, 0, clock::now());
        for rq in s.rqs.iter_mut().skip(1) {
            rq.replace_idle_policy(policy_from(config, time::tick_ns()));
        }
        s.build_balancer();
        Ok(())
    })
}

/// An AP's idle task, once its boot is done (Linux's `cpu_startup_entry`): with nothing
/// to run (`switch_if_asked` looks first) it stops its tick and halts; an interrupt wakes
/// it, and if that interrupt made a task runnable here (the reschedule IPI, a timer), its
/// end switches to it (`trap::return_from_interrupt`); the idle task resumes here when the
/// CPU has nothing to run again.
pub fn ap_idle_loop() -> ! {
    let cpu = crate::percpu::this_cpu().index();
    loop {
        irq::disable();
        switch_if_asked();
        time::stop_tick();
        // A CPU going offline is dead once it gets here with nothing to run.
        super::hotplug::idle_check(cpu);
        // `sti; hlt` atomically: an interrupt between the two could not be missed.
        irq::enable_and_wait();
    }
}

impl Scheduler {
    /// The APs in `online` (by number) join: a runqueue each under its own instance of
    /// `config`'s policy, running its idle task, with its stopper if `stopper_stacks` has
    /// a stack for it. A CPU below the last that did not come up
    /// gets a runqueue too, which is never given a task (runqueues are indexed by CPU
    /// number), and is not listed.
    fn add_cpus(
        &mut self,
        online: &[usize],
        config: &Config,
        stopper_stacks: &mut [Option<KernelStack>],
        now: u64,
    ) {
        let last = online.iter().copied().max().unwrap_or(0);
        for cpu in self.rqs.len()..=last {
            let policy = policy_from(config, time::tick_ns());
            // Its idle task runs now (its CPU's boot flow): its context is saved at its
            // first switch, and it has no stack of its own to free (it runs on the one its
            // CPU was started on).
            let idle_id = TaskId::from_number(usize::MAX - cpu);
            let idle_context = Context {
                affinity: 1 << cpu,
                ..Context::running(idle_id, trace::Comm::idle(cpu))
            };
            // Its entry in the task table (an online CPU's) shares the CPU number.
            idle_context.cpu.set(cpu);
            let idle_cpu = idle_context.cpu.clone();
            let mut rq = Runqueue::new(Rq::new(cpu, policy, idle_slot_of(cpu)), idle_context);
            super::resched::publish(cpu, rq.resched_flag());
            if let Some(stack) = stopper_stacks.get_mut(cpu).and_then(Option::take) {
                self.add_stopper(&mut rq, stack, now);
            }
            self.rqs.push(rq);
            self.ap_idle.push(None);
            if let Some(area) = crate::percpu::cpu(cpu).filter(|_| online.contains(&cpu)) {
                area.set_idle_slot(idle_slot_of(cpu));
                let (mut idle, _) = new_task("idle", 0, 0, None, None);
                idle.id = idle_id;
                idle.slot = idle_slot_of(cpu);
                idle.cpu = idle_cpu;
                self.ap_idle[cpu] = Some(Box::new(idle));
            }
        }
        self.online = online.to_vec();
        self.online_mask = online.iter().fold(0, |mask, &cpu| mask | 1 << cpu);
        super::state::ONLINE.store(self.online_mask, core::sync::atomic::Ordering::Relaxed);
        self.present_mask = self.online_mask;
    }
}
