//! Processes and threads: `clone` (and `fork`, `vfork`, which are clones), `execve`,
//! `wait4`, `arch_prctl`.
//!
//! `fork` shares the address space copy-on-write (`user::cow`); `vfork`
//! and threads (`clone` with CLONE_VM) share it. A vfork parent sleeps until its child execs
//! or exits, through the scheduler's own vfork path, so the policy sees Linux's sequence.

use super::{errno, exec_strings, space};
use crate::arch::user_mode::TrapFrame;
use crate::sched::WaitTarget;
use crate::sched::proc::exit_status::{Exit, ExitStatus};
use crate::sched::proc::sighand::JobReport;
use crate::sched::proc::thread_ends;
use crate::sched::{self, ForkKind};
use crate::task::{id_of_pid, pid_of};
use crate::user::process::{self, ExecError};
use alloc::sync::Arc;

const CLONE_VM: u64 = 0x100;
const CLONE_FS: u64 = 0x200;
const CLONE_FILES: u64 = 0x400;
const CLONE_SIGHAND: u64 = 0x800;
const CLONE_VFORK: u64 = 0x4000;
const CLONE_THREAD: u64 = 0x1_0000;
const CLONE_SYSVSEM: u64 = 0x4_0000;
const CLONE_SETTLS: u64 = 0x8_0000;
const CLONE_PARENT_SETTID: u64 = 0x10_0000;
const CLONE_CHILD_CLEARTID: u64 = 0x20_0000;
/// Ignored by Linux since 2.6.2; thread libraries still pass it.
const CLONE_DETACHED: u64 = 0x40_0000;
const CLONE_CHILD_SETTID: u64 = 0x100_0000;
/// The exit signal in clone's low byte: SIGCHLD for a process (the only one cfslab
/// honours); a thread has none.
pub const SIGCHLD: u64 = 17;
/// What `vfork()` is: clone(CLONE_VM | CLONE_VFORK | SIGCHLD).
pub const VFORK_FLAGS: u64 = CLONE_VM | CLONE_VFORK | SIGCHLD;
const SUPPORTED: u64 = 0xff
    | CLONE_VM
    | CLONE_FS
    | CLONE_FILES
    | CLONE_SIGHAND
    | CLONE_VFORK
    | CLONE_THREAD
    | CLONE_SYSVSEM
    | CLONE_SETTLS
    | CLONE_PARENT_SETTID
    | CLONE_CHILD_CLEARTID
    | CLONE_DETACHED
    | CLONE_CHILD_SETTID;
/// Linux's TASK_SIZE_MAX: the end of the user half, less a guard page.
const TASK_SIZE_MAX: u64 = 0x7fff_ffff_f000;

/// `clone(flags, newsp, parent_tid, child_tid, tls)` (x86_64's argument order): a child
/// process, or with CLONE_THREAD a thread of this one, that returns 0 from the call, on
/// `newsp` if given. Linux's rules: a thread shares the signal actions (CLONE_SIGHAND),
/// which needs a shared address space (CLONE_VM), else EINVAL.
pub fn clone(flags: u64, newsp: u64, tids: [u64; 2], tls: u64, frame: &TrapFrame) -> i64 {
    let thread = flags & CLONE_THREAD != 0;
    if flags & !SUPPORTED != 0
        || (thread && flags & CLONE_SIGHAND == 0)
        || (flags & CLONE_SIGHAND != 0 && flags & CLONE_VM == 0)
        || (!thread && flags & 0xff != SIGCHLD)
    {
        return -errno::EINVAL;
    }
    if flags & CLONE_SETTLS != 0 && tls >= TASK_SIZE_MAX {
        return -errno::EPERM;
    }
    let space = if flags & CLONE_VM != 0 {
        space()
    } else {
        match space().fork() {
            Ok(copy) => Arc::new(copy),
            Err(_) => return -errno::ENOMEM,
        }
    };
    let Some(files) = sched::current_files() else {
        return -errno::EBADF;
    };
    let files = if flags & CLONE_FILES != 0 {
        files
    } else {
        files.lock().fork()
    };
    let mut child = *frame;
    child.rax = 0;
    if newsp != 0 {
        child.rsp = newsp;
    }
    let kind = if flags & CLONE_VFORK != 0 {
        ForkKind::Vfork
    } else {
        ForkKind::Fork
    };
    // The child's FPU and FS base are the parent's as they are now, in the registers.
    let mut cpu = crate::arch::user_state::UserCpuState::current();
    if flags & CLONE_SETTLS != 0 {
        cpu = cpu.with_fs_base(tls);
    }
    let [parent_tid, child_tid] = tids;
    let wanted = |flag: u64, addr: u64| if flags & flag != 0 { addr } else { 0 };
    let set_tid = [
        wanted(CLONE_PARENT_SETTID, parent_tid),
        wanted(CLONE_CHILD_SETTID, child_tid),
    ];
    let clone = sched::Clone {
        kind,
        thread,
        space,
        files,
        frame: child,
        cpu,
        set_tid,
        clear_child_tid: wanted(CLONE_CHILD_CLEARTID, child_tid),
    };
    match sched::fork_process(clone) {
        Ok(id) => {
            // Linux writes parent_tid before the child can run (copy_process). Here the
            // child may have run first — it writes the tid itself as it starts — and, a
            // thread sharing this memory, may even have ended and cleared the word
            // (CLONE_CHILD_CLEARTID): writing the tid then would leave a stale one that a
            // join waits on forever (EEVDF, which often runs a new thread at once, hung
            // seed 003's wakeup_latency so). So the parent writes it only while the child
            // lives, with interrupts off so that it cannot end in between; a forked process
            // has its own memory, where the parent's copy is always written.
            if set_tid[0] != 0 {
                let shares_memory = flags & CLONE_VM != 0;
                crate::arch::irq::without(|| {
                    if !shares_memory || sched::task_uid(id).is_some() {
                        let _ = space_write_tid(set_tid[0], pid_of(id));
                    }
                });
            }
            pid_of(id)
        }
        Err(_) => -errno::EAGAIN,
    }
}

fn space_write_tid(addr: u64, tid: i64) -> Result<(), ()> {
    space()
        .write(addr, &(tid as u32).to_le_bytes())
        .map_err(|_| ())
}

/// The most bytes of a path, its NUL included (Linux's PATH_MAX).
const PATH_MAX: usize = 4096;

/// `execve(path, argv, envp)`: on success never returns to the caller's program.
pub fn execve(path: u64, argv: u64, envp: u64) -> i64 {
    // Everything `exec` allocated is freed when it returns: `enter_user` never does.
    let (entry, sp) = match exec(path, argv, envp) {
        Ok(start) => start,
        Err(e) => return e,
    };
    crate::arch::irq::disable();
    // SAFETY: `exec` loaded the new address space, which maps the entry and the stack
    // `load` built; the kernel stack is this task's.
    unsafe { crate::arch::user_mode::enter_user(entry, sp) }
}

/// Loads the program and makes it the running process's: its entry and stack pointer.
fn exec(path: u64, argv: u64, envp: u64) -> Result<(u64, u64), i64> {
    let Ok(mut path) = space().read_c_string(path, PATH_MAX) else {
        return Err(-errno::EFAULT);
    };
    let plain =
        path.first() == Some(&b'/') && !path.windows(2).any(|pair| pair == b"//" || pair == b"/.");
    if !plain {
        // A relative path (`./prog`) starts at the working directory; one with `.`, `..` or
        // `//` in it is made canonical (a plain `/bin/NAME` is found as it is).
        let cwd = super::fs::working_directory();
        let (_, canonical) = crate::user::fs::lookup(&path, &cwd)?;
        path = canonical.into_bytes();
    }
    let mut copy = exec_strings::Copy::new();
    let args = copy.strings(argv)?;
    let env = copy.strings(envp)?;
    let (argv, envp) = (args.as_slices(), env.as_slices());
    let group = sched::current_group().expect("a process");
    // `sched_exec`: before the new program is loaded (and before a vfork parent is let
    // go), the era's exec balancing may move the task to another CPU.
    sched::balance::exec_balance();
    let loaded = process::load(&path, &argv, &envp, sched::current_uid()).map_err(|e| match e {
        ExecError::NotFound => -errno::ENOENT,
        ExecError::NotExecutable(_) => -errno::ENOEXEC,
        ExecError::OutOfMemory => -errno::ENOMEM,
    })?;
    // The point of no return: the other threads end (Linux's `de_thread`) — in a thread
    // other than the leader, which then hands the process (and its pid) over to this one —
    // and the handlers go. Another thread already ending the process or exec'ing wins.
    let me = sched::current();
    if !group.begin_exec(me) {
        return Err(-errno::EAGAIN);
    }
    if me == group.leader {
        thread_ends::end_other_threads(&group);
    } else {
        thread_ends::take_over(&group);
    }
    group.end_exec();
    group.sighand.reset_handlers();
    sched::unshare_files();
    // Descriptors marked close-on-exec close now; their files go after the table's lock.
    let closed = sched::current_files().map(|files| files.lock().take_close_on_exec());
    drop(closed);
    sched::replace_program(Arc::new(loaded.space), &process::name_of(&path));
    Ok((loaded.entry, loaded.sp))
}

/// `wait4(pid, status, options, rusage)`: waits for a child to end — `pid` > 0: that one,
/// -1: any, 0: any in the caller's process group, < -1: any in group -`pid` — and with
/// WUNTRACED or WCONTINUED also for one to stop or continue (reported once each). An ended
/// child's CPU time (and its reaped children's) goes to `rusage` and to the caller's
/// RUSAGE_CHILDREN.
pub fn wait4(pid: i64, status: u64, options: u64, rusage: u64) -> i64 {
    const WNOHANG: u64 = 1;
    const WUNTRACED: u64 = 2;
    const WCONTINUED: u64 = 8;
    const WALL: u64 = 0x4000_0000;
    const WCLONE: u64 = 0x8000_0000;
    if options & !(WNOHANG | WUNTRACED | WCONTINUED | WALL | WCLONE) != 0 {
        return -errno::EINVAL;
    }
    let target = match pid {
        -1 => WaitTarget::Any,
        0 => WaitTarget::Group(sched::current_group().map_or(0, |g| g.pgid())),
        p if p > 0 => match id_of_pid(p) {
            Some(id) => WaitTarget::Child(id),
            None => return -errno::ECHILD,
        },
        p => WaitTarget::Group(p.unsigned_abs() as u32),
    };
    let (stopped, continued) = (options & WUNTRACED != 0, options & WCONTINUED != 0);
    loop {
        if let Some(zombie) = sched::reap_child(target) {
            let child = zombie.id;
            // A process's children are processes, which file a status as they end; a child
            // without one (none is known) is reaped and passed over.
            let Some(ExitStatus { exit, times, .. }) = zombie.status else {
                continue;
            };
            let word: i32 = match exit {
                Exit::Status(s) => i32::from(s) << 8,
                Exit::Signal(s) => i32::from(s),
            };
            if let Some(group) = sched::current_group() {
                group.add_reaped_child(times);
            }
            if status != 0 && space().write(status, &word.to_le_bytes()).is_err() {
                return -errno::EFAULT;
            }
            if rusage != 0 && super::rusage::write_rusage(rusage, times) != 0 {
                return -errno::EFAULT;
            }
            return pid_of(child);
        }
        if (stopped || continued)
            && let Some((child, report)) = sched::take_job_report(target, stopped, continued)
        {
            // Linux's wait status of a stopped child is 0x7f | signal << 8; of a continued
            // one, 0xffff.
            let word: i32 = match report {
                JobReport::Stopped(signal) => 0x7f | i32::from(signal) << 8,
                JobReport::Continued => 0xffff,
            };
            if status != 0 && space().write(status, &word.to_le_bytes()).is_err() {
                return -errno::EFAULT;
            }
            if rusage != 0 && super::rusage::write_rusage(rusage, Default::default()) != 0 {
                return -errno::EFAULT;
            }
            return pid_of(child);
        }
        if !sched::has_child(target) {
            return -errno::ECHILD;
        }
        if options & WNOHANG != 0 {
            return 0;
        }
        sched::wait_for_child(target, stopped || continued);
        if sched::signal_pending() {
            return -errno::ERESTARTSYS;
        }
    }
}

/// `prctl(option, arg)`: PR_SET_NAME and PR_GET_NAME, the thread's name (16 bytes with the
/// NUL, as `comm`); other options give EINVAL, as an option Linux does not know does.
pub fn prctl(option: u64, arg: u64) -> i64 {
    const PR_SET_NAME: u64 = 15;
    const PR_GET_NAME: u64 = 16;
    const TASK_COMM_LEN: usize = 16;
    match option {
        PR_SET_NAME => {
            // Up to 15 bytes, cut there if no NUL comes sooner.
            let space = space();
            let name: Result<alloc::vec::Vec<u8>, _> =
                space.read_c_string(arg, TASK_COMM_LEN).or_else(|_| {
                    let mut raw = [0u8; TASK_COMM_LEN - 1];
                    space.read(arg, &mut raw).map(|()| raw.to_vec())
                });
            match name {
                Ok(name) => {
                    sched::rename_current(&alloc::string::String::from_utf8_lossy(&name));
                    0
                }
                Err(_) => -errno::EFAULT,
            }
        }
        PR_GET_NAME => {
            let mut raw = [0u8; TASK_COMM_LEN];
            let name = sched::current_name();
            let n = name.len().min(TASK_COMM_LEN - 1);
            raw[..n].copy_from_slice(&name.as_bytes()[..n]);
            match space().write(arg, &raw) {
                Ok(()) => 0,
                Err(_) => -errno::EFAULT,
            }
        }
        _ => -errno::EINVAL,
    }
}

/// `set_robust_list(head, len)`: where the thread's robust futex list is, walked when it
/// ends (`sched::futex::release_robust_list`). EINVAL unless `len` is the size of Linux's
/// `struct robust_list_head` (24).
pub fn set_robust_list(head: u64, len: u64) -> i64 {
    if len != 24 {
        return -errno::EINVAL;
    }
    sched::set_robust_list(head);
    0
}

/// `get_robust_list(tid, head, len)`: where thread `tid`'s robust list is (0: the caller),
/// and its length, 24 (musl asks before it makes a mutex robust). Another uid's thread:
/// EPERM unless root; no such thread: ESRCH.
pub fn get_robust_list(tid: i64, head: u64, len: u64) -> i64 {
    let id = if tid == 0 {
        Some(sched::current())
    } else {
        id_of_pid(tid)
    };
    let Some((list, uid)) = id.and_then(sched::robust_list_of) else {
        return -errno::ESRCH;
    };
    let me = sched::current_uid();
    if me != 0 && me != uid {
        return -errno::EPERM;
    }
    let space = space();
    if space.write(head, &list.to_le_bytes()).is_err()
        || space.write(len, &24u64.to_le_bytes()).is_err()
    {
        return -errno::EFAULT;
    }
    0
}

/// `arch_prctl(code, addr)`: the FS base, which C libraries point at the thread's TLS
/// block. ARCH_SET_GS/GET_GS give EINVAL: cfslab keeps no user GS base.
pub fn arch_prctl(code: u64, addr: u64) -> i64 {
    const ARCH_SET_FS: u64 = 0x1002;
    const ARCH_GET_FS: u64 = 0x1003;
    match code {
        ARCH_SET_FS if addr >= TASK_SIZE_MAX => -errno::EPERM,
        ARCH_SET_FS => {
            crate::arch::user_state::set_fs_base(addr);
            0
        }
        ARCH_GET_FS => {
            let base = crate::arch::user_state::fs_base();
            match space().write(addr, &base.to_le_bytes()) {
                Ok(()) => 0,
                Err(_) => -errno::EFAULT,
            }
        }
        _ => -errno::EINVAL,
    }
}
