//! What a process's end reports to its parent: how it ended (`wait4`'s status, Linux's
//! `exit_code`) and the CPU time it used (`wait4`'s and `getrusage`'s `struct rusage`).
//! Plain data, naming nothing of the scheduler, so that a task can carry its zombie's
//! status without standing on the code that ends processes (`exit`, `family`).

/// How a process ended: Linux's wait status (exit status << 8, or the killing signal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Status(u8),
    Signal(u8),
}

/// How a process ended, as its zombie carries it to its parent (`family`): how it
/// ended, and its CPU time — its threads' and its reaped children's, as `wait4`'s rusage
/// reports it, and its threads' alone.
#[derive(Debug, Clone, Copy)]
pub struct ExitStatus {
    pub exit: Exit,
    pub times: CpuTimes,
    /// Its threads' CPU time alone (the lab's `cpu` lines: a task's own share).
    pub own: CpuTimes,
    /// Its process group, for a `wait4` on a group.
    pub pgid: u32,
}

/// CPU time split into user and system time, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user_ns: u64,
    pub system_ns: u64,
    /// Context switches the task asked for (it slept) and ones it did not (preempted or
    /// yielded), as `ru_nvcsw` and `ru_nivcsw` count them.
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
}

impl CpuTimes {
    /// Splits `runtime` (the scheduler's exact CPU time) between user and system in the
    /// proportion of the ticks that found the task in each, as Linux's `cputime_adjust`
    /// does: ticks are a sample, the runtime is the truth. No tick at all counts as user
    /// time, as there.
    pub fn from_ticks(runtime: u64, user_ticks: u64, system_ticks: u64) -> CpuTimes {
        let system_ns = if system_ticks == 0 {
            0
        } else if user_ticks == 0 {
            runtime
        } else {
            let total = u128::from(user_ticks + system_ticks);
            (u128::from(runtime) * u128::from(system_ticks) / total) as u64
        };
        CpuTimes {
            user_ns: runtime - system_ns,
            system_ns,
            ..CpuTimes::default()
        }
    }

    /// Both summed.
    pub fn add(&mut self, other: CpuTimes) {
        self.user_ns += other.user_ns;
        self.system_ns += other.system_ns;
        self.voluntary_switches += other.voluntary_switches;
        self.involuntary_switches += other.involuntary_switches;
    }
}
