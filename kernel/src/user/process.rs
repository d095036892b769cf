//! Programs: a program loaded into an address space of its own and started as a process,
//! and the first program (`-- /bin/NAME args` on the command line). How a process ends is
//! the process model's (`sched::proc::exit`).

use super::address_space::AddressSpace;
use super::layout::Program;
use super::stack;
use super::{elf, initramfs};
use crate::println;
use crate::sched;
use crate::sched::proc::exit_status::Exit;
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
        layout.program = Program::new(path, argv);
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
    super::tty::start();
    let before = (crate::mm::frames_in_use(), crate::mm::heap::stats().used);
    let ok = run_first_program(argv);
    end_what_is_left();
    // A child reaped from another CPU may not have left it yet: its stack is freed there
    // at that CPU's next switch.
    sched::wait_for_exited_stacks();
    // The page cache and the stack cache keep frames for the next execve and task; they are
    // let go here, so that every frame the run took must be back.
    crate::mm::drop_caches();
    let after = (crate::mm::frames_in_use(), crate::mm::heap::stats().used);
    println!(
        "RESULT {{\"kind\":\"memory\",\"frames_before\":{},\"frames_after\":{},\"heap_bytes_before\":{},\"heap_bytes_after\":{}}}",
        before.0, after.0, before.1, after.1
    );
    // With `trace=on`, the run's events since the boot, for the boot tool's `--trace`.
    if let (Some(trace), _) = sched::trace_stop() {
        sched::print_trace(&trace);
    }
    ok
}

/// The run ends with its program: what the program left running (a background job, a
/// daemon) is killed, as a session's processes are when it ends, and reaped with the
/// orphans, which pass to this task (see `sched::proc::family`).
fn end_what_is_left() {
    use crate::sched::proc::{sighand::SIGKILL, signal};
    loop {
        let left = sched::processes_of(None);
        if left.is_empty() {
            break;
        }
        for id in left {
            signal::deliver(id, SIGKILL);
        }
        // Each dies at its next step through the kernel, and ends up this task's child.
        if sched::wait_child().is_none() {
            break;
        }
    }
    while sched::wait_child().is_some() {}
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
    // The first program leads a session of its own, with the console as its terminal.
    super::tty::job::set_controlling(crate::task::pid_of(child) as u32);
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
    if let Some(invariant) = sched::balance::invariant_report() {
        println!("{}", invariant.result_line());
    }
    exit == Some(Exit::Status(0))
}
