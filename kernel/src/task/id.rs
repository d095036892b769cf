//! The two numbers that name a task (see the module above): its id, unique for the boot,
//! with the pid programs see; and its slot, small, dense and reused. A leaf, so that the
//! timers, the wait queues and the trace can name a task without depending on what a task
//! holds.

/// A task's number, unique for the boot (never reused): a type of its own, so that it is
/// never taken for a [`Slot`] — which is reused — or a CPU's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct TaskId(usize);

impl TaskId {
    /// The task numbered `n`: the boot task is 0, each new task one more than the last.
    pub const fn from_number(n: usize) -> Self {
        TaskId(n)
    }

    /// Its number.
    pub const fn number(self) -> usize {
        self.0
    }

    /// The id the task made after this one gets.
    pub const fn next(self) -> Self {
        TaskId(self.0 + 1)
    }
}

/// The id's number, as the kernel's messages print it.
impl core::fmt::Display for TaskId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A task's pid as programs, the trace and gdb see it: its id plus one, so that the boot
/// task is pid 1, as init is. (The trace names the idle task pid 0, `<idle>-0`, as Linux's
/// does; no program can name it.)
pub fn pid_of(id: TaskId) -> i64 {
    id.0 as i64 + 1
}

/// The task a pid names (`None` for pids no task can have: zero and below).
pub fn id_of_pid(pid: i64) -> Option<TaskId> {
    usize::try_from(pid).ok()?.checked_sub(1).map(TaskId)
}

/// A task as the things that wake it keep it — a wait queue, a futex's waiters: its id, its
/// slot and the CPU it was on when it was taken (Linux's wait-queue entry holds the
/// `task_struct` itself, whose `cpu` a waker reads). The slot finds the task without a
/// search; it is reused once the task has exited, so a wake-up takes it only if the task
/// there still has the id (else it looks the id up: the task was renamed, as a thread that
/// execs takes its leader's id). The CPU is a hint: a waker looks for the task on that
/// CPU's runqueue under that runqueue's lock alone, and takes the scheduler's whole state
/// if the task has moved since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskRef {
    pub id: TaskId,
    pub slot: Slot,
    pub cpu: usize,
}

impl TaskRef {
    /// A place holder in a buffer of references, never read as a task.
    pub const UNUSED: TaskRef = TaskRef {
        id: TaskId(0),
        slot: Slot::new(0),
        cpu: 0,
    };
}

/// A task's place in the scheduler's table and the policy's: small, dense, reused after
/// the task has exited. The policy's [`sched::TaskId`], under the kernel's name for it: a
/// type, not a `usize`, so that neither a [`TaskId`] nor a CPU's number passes for one.
pub type Slot = sched::TaskId;
