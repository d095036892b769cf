//! A thread's alternate signal stack (`sigaltstack`, Linux's `sas_ss_sp`/`sas_ss_size`), and
//! the `stack_t` a program reads it back as. Plain data: the thread keeps it (`task::Task`),
//! the way back to ring 3 runs a handler on it (`super`).

/// What a program reads and writes: Linux's `stack_t` (sp, flags, size).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StackT {
    pub sp: u64,
    pub flags: i32,
    pub size: u64,
}

/// `ss_flags` values (Linux's).
pub const SS_ONSTACK: i32 = 1;
pub const SS_DISABLE: i32 = 2;
pub const SS_AUTODISARM: i32 = 1 << 31;

/// A thread's alternate signal stack: none while `size` is 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AltStack {
    pub sp: u64,
    pub size: u64,
    /// SS_AUTODISARM: the stack is given up while a handler runs on it.
    pub autodisarm: bool,
}

impl AltStack {
    /// Whether `sp` is on this stack (Linux's `on_sig_stack`: stacks grow down, so its top
    /// is in it and its base is not).
    pub fn contains(&self, sp: u64) -> bool {
        self.size != 0 && sp > self.sp && sp - self.sp <= self.size
    }

    /// The `stack_t` a program reads back, for a thread whose stack pointer is `sp`.
    pub fn as_stack_t(&self, sp: u64) -> StackT {
        let flags = if self.size == 0 {
            SS_DISABLE
        } else if self.contains(sp) {
            SS_ONSTACK
        } else {
            0
        } | if self.autodisarm { SS_AUTODISARM } else { 0 };
        StackT {
            sp: self.sp,
            flags,
            size: self.size,
        }
    }
}
