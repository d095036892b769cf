//! A task's context: what a CPU loads to run the task and saves as it leaves it — its saved
//! kernel stack pointer, the top of its kernel stack, its FPU/SSE registers and FS base,
//! its address space and open files — with its ids, the flag that says a CPU is still on
//! it, a move it is to make, and the name traces show it by (Linux's `thread_struct` with
//! `task_struct`'s `pid`, `mm`, `files`, `on_cpu` and `comm`).
//!
//! Apart from the rest of the task because the switch needs nothing else: the process
//! model (family, signals, thread group) is the task table's, and the switch never reads
//! it. Who may touch a context: the task itself while it runs; the CPU switching to it or
//! away from it otherwise, once `on_cpu` says no other CPU is still on it.

use super::{TaskCpu, TaskId};
use crate::arch::user_state::UserCpuState;
use crate::sched::trace::Comm;
use crate::user::address_space::AddressSpace;
use crate::user::files::Files;
use alloc::boxed::Box;
use alloc::sync::Arc;
use core::sync::atomic::AtomicBool;

pub struct Context {
    /// The task's id, and its process's (its thread group leader's; its own for a kernel
    /// thread): what the CPU that runs it reads as `current` (`PerCpu::set_current`).
    pub(crate) id: TaskId,
    pub(crate) process: TaskId,
    /// The CPU the task moves to when it next leaves its own (its affinity no longer
    /// allows the one it is on, or the balancer pushes it): see `sched::affinity`. Here,
    /// because the switch that hands the task over reads it.
    pub(crate) move_to: Option<usize>,
    /// The CPUs the task may run on, one bit each (Linux's `cpus_mask`, set by
    /// `sched_setaffinity`): inherited from its creator.
    pub(crate) affinity: u64,
    /// A wake-up came while the task ran: its next sleep returns at once (see
    /// `sched::sleep`). On several CPUs a waker may find a task on its wait queue before
    /// the task has gone to sleep: this is how that wake-up is not lost.
    pub(crate) wake_pending: bool,
    /// The saved stack pointer while the task is not running.
    pub(crate) rsp: u64,
    /// Top of its kernel stack, where interrupts and system calls from ring 3 land (0 for
    /// the boot task, which never enters ring 3).
    pub(crate) kernel_stack_top: u64,
    /// A user task's FPU/SSE registers and FS base while it is not running (`None` for a
    /// kernel thread, which uses neither).
    pub(crate) user_cpu: Option<Box<UserCpuState>>,
    /// A user process's address space (`None` for a kernel thread, which runs in whichever
    /// address space is loaded: the kernel half is the same in all).
    pub(crate) address_space: Option<Arc<AddressSpace>>,
    /// A process's open files (shared by its threads).
    pub(crate) files: Option<Files>,
    /// The task runs on a CPU, or is still leaving it (Linux's `p->on_cpu`): set when a
    /// CPU picks it, cleared by the next task on that CPU once the task's registers are
    /// saved (`sched::switch`). Until then no other CPU may run it, so a move waits.
    pub(crate) on_cpu: AtomicBool,
    /// How trace events show the task (pid, name, prio), made when its id, name or nice
    /// change rather than at each of the several events of every switch.
    pub(crate) comm: Comm,
    /// The CPU whose runqueue holds it, the same number as the task table's (see
    /// [`TaskCpu`]): here, so that a waker that moves the task can say where it went.
    pub(crate) cpu: TaskCpu,
    /// Its uid, a copy of the task table's: a wake-up's placement weighs its group (2.6.36's
    /// `effective_load`) without the table.
    pub(crate) uid: u32,
}

impl Context {
    /// The context of a task that has never run: `rsp` and `kernel_stack_top` on its fresh
    /// stack (0 for the boot task, which runs on the bootloader's), shown as `comm`.
    pub(crate) fn new(rsp: u64, kernel_stack_top: u64, comm: Comm) -> Context {
        Context {
            id: TaskId::from_number(0),
            process: TaskId::from_number(0),
            move_to: None,
            affinity: u64::MAX,
            wake_pending: false,
            rsp,
            kernel_stack_top,
            user_cpu: None,
            address_space: None,
            files: None,
            on_cpu: AtomicBool::new(false),
            comm,
            cpu: TaskCpu::default(),
            uid: 0,
        }
    }

    /// Whether it holds nothing the task's end must give back (files, address space, FPU
    /// state): what an exited task's context must be when the next task frees it.
    pub(crate) fn holds_nothing(&self) -> bool {
        self.files.is_none() && self.address_space.is_none() && self.user_cpu.is_none()
    }

    /// The context of kernel thread `id`, which runs now on the CPU it starts on (the boot
    /// task, an AP's boot flow): its registers are saved at its first switch.
    pub(crate) fn running(id: TaskId, comm: Comm) -> Context {
        Context {
            id,
            process: id,
            on_cpu: AtomicBool::new(true),
            ..Context::new(0, 0, comm)
        }
    }
}
