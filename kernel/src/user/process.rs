//! Processes: a program loaded into an address space of its own and started as a task, its
//! exit status, and the first program (`-- /bin/NAME args` on the command line).

use super::address_space::AddressSpace;
use super::stack;
use super::thread_group::CpuTimes;
use super::{elf, initramfs, thread_ends};
use crate::println;
use crate::sched;
use crate::task::TaskId;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

/// Why a program could not start.
#[derive(Debug)]
pub enum ExecError {
    NotFound,
    NotExecutable(&'static str),
    OutOfMemory,
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecError::NotFound => write!(f, "no such file in the initramfs"),
            ExecError::NotExecutable(why) => write!(f, "not executable: {why}"),
            ExecError::OutOfMemory => write!(f, "out of memory"),
        }
    }
}

/// How a process ended: Linux's wait status (exit status << 8, or the killing signal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Status(u8),
    Signal(u8),
}

/// How a process ended, as its zombie carries it to its parent (`sched::family`): how it
/// ended, and its CPU time — its threads' and its reaped children's, as `wait4`'s rusage
/// reports it, and its threads' alone.
#[derive(Debug, Clone, Copy)]
pub struct ExitStatus {
    pub exit: Exit,
    pub times: CpuTimes,
    /// Its threads' CPU time alone (the lab's `cpu` lines: a task's own share).
    pub own: CpuTimes,
}

/// Ends the running thread (`exit`); the process ends with its last thread.
pub fn exit_thread(status: u8) -> ! {
    end(Exit::Status(status), false)
}

/// Ends the running process, every thread of it (`exit_group`).
pub fn exit(status: u8) -> ! {
    end(Exit::Status(status), true)
}

/// Ends the running process, killed by `signal`.
pub fn die(signal: u8) -> ! {
    end(Exit::Signal(signal), true)
}

fn end(exit: Exit, whole_process: bool) -> ! {
    let group = sched::current_group().expect("a process");
    if whole_process && group.decide_exit(exit) {
        thread_ends::end_other_threads(&group);
    }
    release_tid();
    // Before anything below that must not be interrupted: closing files may wake a task.
    sched::release_files();
    let me = sched::current();
    if me != group.leader {
        // A thread leaves its CPU time to the process and goes; no one waits for it.
        crate::arch::irq::disable();
        group.add_ended_thread(sched::current_thread_times());
        // `exit` never returns: what this frame holds must go first.
        drop(group);
        sched::exit()
    }
    // The leader ends the process once its other threads have ended (`exit` of the main
    // thread lets them run on, as on Linux) — unless one of them execs and takes it over.
    if let Some(heir) = thread_ends::wait_for_threads(&group) {
        thread_ends::hand_over(group, heir)
    }
    let exit = group.exit().unwrap_or(exit);
    // Interrupts stay off from here until the scheduler has switched away for good: a child
    // ending between this task's filing and its exit would otherwise file its status under
    // this task after its children passed to the boot task, and stay unreaped for ever.
    crate::arch::irq::disable();
    let (ended, children) = group.ended_and_children();
    let mut times = sched::current_thread_times();
    times.add(ended);
    let own = times;
    times.add(children);
    sched::set_exit_status(ExitStatus { exit, times, own });
    drop(group);
    sched::exit()
}

/// Clears the running thread's tid where `set_tid_address` or CLONE_CHILD_CLEARTID asked,
/// and wakes one futex waiter there: how a thread library's join learns that the thread is
/// gone (Linux's `mm_release`). A bad address is ignored, as there.
fn release_tid() {
    let addr = sched::take_clear_child_tid();
    if addr == 0 {
        return;
    }
    if let Some(space) = sched::current_address_space()
        && space.write(addr, &0u32.to_le_bytes()).is_ok()
    {
        super::syscall::futex_wake(&space, addr, 1);
    }
}

/// Writes the running thread's tid at each non-zero address (CLONE_PARENT_SETTID,
/// CLONE_CHILD_SETTID); a bad address is ignored, as Linux ignores it.
pub fn write_tid(addresses: [u64; 2]) {
    let Some(space) = sched::current_address_space() else {
        return;
    };
    let tid = crate::task::pid_of(sched::current()) as u32;
    for addr in addresses.into_iter().filter(|&a| a != 0) {
        let _ = space.write(addr, &tid.to_le_bytes());
    }
}

/// A program loaded and ready to enter: its address space, entry and initial stack.
pub struct Loaded {
    pub space: AddressSpace,
    pub entry: u64,
    pub sp: u64,
}

/// Loads the program at `path` from the initramfs into a new address space, with its
/// initial stack (argv, envp, auxv). `argv[0]` is whatever the caller chose, as in Linux.
pub fn load(path: &[u8], argv: &[&[u8]], envp: &[&[u8]], uid: u32) -> Result<Loaded, ExecError> {
    let file = initramfs::find(path).ok_or(ExecError::NotFound)?;
    let program = elf::parse(file).map_err(|e| ExecError::NotExecutable(e.0))?;
    let space = AddressSpace::new().map_err(|_| ExecError::OutOfMemory)?;
    let mut end = 0;
    let share_read_only = program.read_only_pages_shareable();
    for s in &program.segments {
        end = end.max(s.vaddr + s.mem_size);
        if share_read_only && !s.writable {
            space
                .map_cached(s.vaddr, s.mem_size, file, s.offset)
                .map_err(|_| ExecError::OutOfMemory)?;
            continue;
        }
        space
            .map_zeroed(s.vaddr, s.mem_size, s.writable)
            .map_err(|_| ExecError::OutOfMemory)?;
        let bytes = &file[s.offset as usize..(s.offset + s.file_size) as usize];
        space
            .load(s.vaddr, bytes)
            .map_err(|_| ExecError::OutOfMemory)?;
    }
    {
        let mut layout = space.layout.lock();
        layout.brk_start = end.next_multiple_of(4096);
        layout.brk = layout.brk_start;
    }
    // AT_RANDOM's bytes: from the TSC, which is as random as this machine gets (under
    // -icount it is the same every run, which keeps runs reproducible).
    let seed = crate::time::clock::now().to_le_bytes();
    let mut random = [0u8; 16];
    random[..8].copy_from_slice(&seed);
    random[8..].copy_from_slice(&seed.map(|b| b.rotate_left(3)));
    let sp = stack::build(&space, &program, argv, envp, uid, random)
        .map_err(|_| ExecError::OutOfMemory)?;
    Ok(Loaded {
        space,
        entry: program.entry,
        sp,
    })
}

/// The name a program's task gets: the last part of its path.
pub fn name_of(path: &[u8]) -> String {
    let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    String::from_utf8_lossy(name).into_owned()
}

/// Loads `/bin/NAME` (argv[0]) into a new address space and starts it as a child of the
/// running task, as `uid` at `nice`.
pub fn spawn(argv: &[&[u8]], envp: &[&[u8]], uid: u32, nice: i8) -> Result<TaskId, ExecError> {
    let path = argv.first().copied().ok_or(ExecError::NotFound)?;
    let loaded = load(path, argv, envp, uid)?;
    let name = name_of(path);
    sched::spawn_process(
        &name,
        uid,
        nice,
        Arc::new(loaded.space),
        loaded.entry,
        loaded.sp,
    )
    .map_err(|_| ExecError::OutOfMemory)
}

/// Runs the program the command line names after ` -- ` as the first process (uid 0), waits
/// for it and reports `RESULT {"kind":"exit",...}`, then what memory it left behind
/// (`RESULT {"kind":"memory",...}`: frames and heap bytes in use before it started and after
/// it and every process it started were reaped). The frames must match exactly; the heap may
/// grow by the few hundred bytes the scheduler's tables keep as capacity after their first
/// growth, and by no more however many processes ran. True if the program exited with 0.
pub fn run_program(argv: &[String]) -> bool {
    initramfs::init();
    let before = (crate::mm::frames_in_use(), crate::mm::heap::stats().used);
    let ok = run_first_program(argv);
    // Orphans pass to this task (see sched::family); reap any still running or unreaped.
    while sched::wait_child().is_some() {}
    // The page cache and the stack cache keep frames for the next execve and task; they are
    // let go here, so that every frame the run took must be back.
    crate::mm::drop_caches();
    let after = (crate::mm::frames_in_use(), crate::mm::heap::stats().used);
    println!(
        "RESULT {{\"kind\":\"memory\",\"frames_before\":{},\"frames_after\":{},\"heap_bytes_before\":{},\"heap_bytes_after\":{}}}",
        before.0, after.0, before.1, after.1
    );
    ok
}

fn run_first_program(argv: &[String]) -> bool {
    let args: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
    let envp: [&[u8]; 2] = [b"HOME=/", b"TERM=dumb"];
    let quoted: Vec<String> = argv.iter().map(|a| alloc::format!("{a:?}")).collect();
    sched::sleep_until_tick_boundary();
    let child = match spawn(&args, &envp, 0, 0) {
        Ok(child) => child,
        Err(e) => {
            let path = argv.first().map_or("", String::as_str);
            let hint = if initramfs::present() {
                ""
            } else {
                " (no initramfs: the boot tool passes one when the command line has ` -- `)"
            };
            println!("{path}: cannot run: {e}{hint}");
            println!(
                "RESULT {{\"kind\":\"exit\",\"argv\":[{}],\"pid\":null,\"status\":null,\"signal\":null}}",
                quoted.join(",")
            );
            return false;
        }
    };
    let exit = loop {
        match sched::wait_child() {
            Some(zombie) if zombie.id == child => break zombie.status.map(|s| s.exit),
            Some(_) => continue,
            None => break None,
        }
    };
    let (status, signal) = match exit {
        Some(Exit::Status(s)) => (alloc::format!("{s}"), String::from("null")),
        Some(Exit::Signal(s)) => (String::from("null"), alloc::format!("{s}")),
        None => (String::from("null"), String::from("null")),
    };
    println!(
        "RESULT {{\"kind\":\"exit\",\"argv\":[{}],\"pid\":{},\"status\":{status},\"signal\":{signal}}}",
        quoted.join(","),
        crate::task::pid_of(child)
    );
    exit == Some(Exit::Status(0))
}
