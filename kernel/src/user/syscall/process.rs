//! Processes: `clone` (and `fork`, `vfork`, which are clones), `execve`, `wait4`, `kill`.
//!
//! `fork` shares the address space copy-on-write (`user::cow`); `vfork`
//! and threads (`clone` with CLONE_VM) share it. A vfork parent sleeps until its child execs
//! or exits, through the scheduler's own vfork path, so the policy sees Linux's sequence.

use super::{errno, space};
use crate::arch::x86_64::syscall::SyscallFrame;
use crate::sched::{self, ForkKind};
use crate::task::{id_of_pid, pid_of};
use crate::user::process::{self, ExecError, Exit};
use alloc::sync::Arc;
use alloc::vec::Vec;

const CLONE_VM: u64 = 0x100;
const CLONE_FS: u64 = 0x200;
const CLONE_FILES: u64 = 0x400;
const CLONE_SIGHAND: u64 = 0x800;
const CLONE_VFORK: u64 = 0x4000;
/// The exit signal in clone's low byte; SIGCHLD is the only one cfslab honours.
pub const SIGCHLD: u64 = 17;
/// What `vfork()` is: clone(CLONE_VM | CLONE_VFORK | SIGCHLD).
pub const VFORK_FLAGS: u64 = CLONE_VM | CLONE_VFORK | SIGCHLD;
const SUPPORTED: u64 = 0xff | CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_VFORK;

/// `clone(flags, newsp, ...)`: a child that returns 0 from the call, on `newsp` if given.
pub fn clone(flags: u64, newsp: u64, frame: &SyscallFrame) -> i64 {
    if flags & !SUPPORTED != 0 || flags & 0xff != SIGCHLD {
        // CLONE_THREAD, CLONE_SETTLS, the tid pointers, other exit signals: not yet.
        return -errno::EINVAL;
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
        x86_64::instructions::interrupts::without_interrupts(|| files.lock().fork())
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
    let cpu = crate::arch::x86_64::user_state::UserCpuState::current();
    match sched::fork_process(kind, space, files, child, cpu) {
        Ok(id) => pid_of(id),
        Err(_) => -errno::EAGAIN,
    }
}

/// Most arguments (or environment strings) and bytes per string `execve` takes, and most
/// bytes in all (Linux's historical ARG_MAX, 128 KiB): so that execs at once in every
/// process cannot take the kernel heap; more gives E2BIG.
const ARGS_MAX: usize = 256;
const STRING_MAX: usize = 4096;
const ARG_BYTES_MAX: usize = 128 * 1024;

/// Reads a null-terminated array of string pointers, taking their bytes (and a NUL each)
/// from `budget`: E2BIG once it is spent.
fn strings(array: u64, budget: &mut usize) -> Result<Vec<Vec<u8>>, i64> {
    let space = space();
    let mut out = Vec::new();
    if array == 0 {
        return Ok(out);
    }
    for i in 0..ARGS_MAX as u64 {
        let mut ptr = [0u8; 8];
        space
            .read(array + 8 * i, &mut ptr)
            .map_err(|_| -errno::EFAULT)?;
        let ptr = u64::from_le_bytes(ptr);
        if ptr == 0 {
            return Ok(out);
        }
        let max = STRING_MAX.min(budget.saturating_sub(1));
        let string = space.read_c_string(ptr, max).map_err(|_| {
            if max < STRING_MAX {
                -errno::E2BIG
            } else {
                -errno::EFAULT
            }
        })?;
        *budget -= string.len() + 1;
        out.push(string);
    }
    Err(-errno::E2BIG)
}

/// `execve(path, argv, envp)`: on success never returns to the caller's program.
pub fn execve(path: u64, argv: u64, envp: u64) -> i64 {
    let Ok(path) = space().read_c_string(path, STRING_MAX) else {
        return -errno::EFAULT;
    };
    let mut budget = ARG_BYTES_MAX;
    let args = match strings(argv, &mut budget) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let env = match strings(envp, &mut budget) {
        Ok(e) => e,
        Err(e) => return e,
    };
    let argv: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    let envp: Vec<&[u8]> = env.iter().map(Vec::as_slice).collect();
    let loaded = match process::load(&path, &argv, &envp, sched::current_uid()) {
        Ok(l) => l,
        Err(ExecError::NotFound) => return -errno::ENOENT,
        Err(ExecError::NotExecutable(_)) => return -errno::ENOEXEC,
        Err(ExecError::OutOfMemory) => return -errno::ENOMEM,
    };
    sched::replace_program(Arc::new(loaded.space), &process::name_of(&path));
    x86_64::instructions::interrupts::disable();
    // SAFETY: `replace_program` loaded the new address space, which maps the entry and the
    // stack `load` built; the kernel stack is this task's.
    unsafe { crate::arch::x86_64::syscall::enter_user(loaded.entry, loaded.sp) }
}

/// `wait4(pid, status, options, rusage)`: waits for a child to end (`pid` -1: any).
pub fn wait4(pid: i64, status: u64, options: u64) -> i64 {
    const WNOHANG: u64 = 1;
    let me = sched::current();
    let target = match pid {
        -1 => None,
        p if p > 0 => id_of_pid(p),
        // Process groups: cfslab has one, so "my group" is any child.
        _ => None,
    };
    loop {
        if let Some((child, exit)) = process::take_exit(me, target) {
            // Forgotten by the scheduler too (else its list of exited children would grow
            // with every child ever reaped).
            sched::reap_child(child);
            let word: i32 = match exit {
                Exit::Status(s) => i32::from(s) << 8,
                Exit::Signal(s) => i32::from(s),
            };
            if status != 0 && space().write(status, &word.to_le_bytes()).is_err() {
                return -errno::EFAULT;
            }
            return pid_of(child);
        }
        if !sched::has_child(me, target) {
            return -errno::ECHILD;
        }
        if options & WNOHANG != 0 {
            return 0;
        }
        sched::wait_child();
        if sched::current_killed().is_some() {
            return -errno::ECHILD;
        }
    }
}

/// `kill(pid, signal)`: signal 0 checks; SIGCHLD, SIGCONT, SIGURG and SIGWINCH are ignored
/// by default; every other signal's default action ends the process. Another uid's process
/// may be signalled by root only (EPERM). `pid` -1 signals every process the caller may,
/// but itself (Linux also spares init, which on cfslab is a kernel thread); cfslab has no
/// process groups, so 0 and other negative pids give ESRCH.
pub fn kill(pid: i64, signal: i64) -> i64 {
    if !(0..=64).contains(&signal) {
        return -errno::EINVAL;
    }
    let me = sched::current_uid();
    if pid as i32 == -1 {
        let myself = sched::current();
        let uid = (me != 0).then_some(me);
        let targets: Vec<_> = sched::processes_of(uid)
            .into_iter()
            .filter(|&id| id != myself)
            .collect();
        if targets.is_empty() {
            return -errno::ESRCH;
        }
        for id in targets {
            deliver(id, signal);
        }
        return 0;
    }
    let Some(id) = id_of_pid(pid) else {
        return -errno::ESRCH;
    };
    let Some(uid) = sched::task_uid(id) else {
        return -errno::ESRCH;
    };
    if me != 0 && me != uid {
        return -errno::EPERM;
    }
    if deliver(id, signal) {
        0
    } else {
        -errno::ESRCH
    }
}

/// Sends `signal` to task `id`: its default action (see [`kill`]); false if it is gone.
fn deliver(id: crate::task::TaskId, signal: i64) -> bool {
    if matches!(signal, 0 | 17 | 18 | 23 | 28) {
        return sched::task_uid(id).is_some();
    }
    sched::kill_task(id, signal as u8)
}

/// `arch_prctl(code, addr)`: the FS base, which C libraries point at the thread's TLS
/// block. ARCH_SET_GS/GET_GS give EINVAL: cfslab keeps no user GS base.
pub fn arch_prctl(code: u64, addr: u64) -> i64 {
    const ARCH_SET_FS: u64 = 0x1002;
    const ARCH_GET_FS: u64 = 0x1003;
    /// Linux's TASK_SIZE_MAX: the end of the user half, less a guard page.
    const TASK_SIZE_MAX: u64 = 0x7fff_ffff_f000;
    match code {
        ARCH_SET_FS if addr >= TASK_SIZE_MAX => -errno::EPERM,
        ARCH_SET_FS => {
            crate::arch::x86_64::user_state::set_fs_base(addr);
            0
        }
        ARCH_GET_FS => {
            let base = crate::arch::x86_64::user_state::fs_base();
            match space().write(addr, &base.to_le_bytes()) {
                Ok(()) => 0,
                Err(_) => -errno::EFAULT,
            }
        }
        _ => -errno::EINVAL,
    }
}
