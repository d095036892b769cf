//! Processes: a program loaded into an address space of its own and started as a task, its
//! exit status, and the first program (`-- /bin/NAME args` on the command line).

use super::address_space::AddressSpace;
use super::stack::{self, STACK_BYTES, STACK_TOP};
use super::{elf, initramfs};
use crate::println;
use crate::sched;
use crate::task::TaskId;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;
use spin::Mutex;

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

/// Exit statuses of processes not yet waited for.
static EXITS: Mutex<BTreeMap<TaskId, Exit>> = Mutex::new(BTreeMap::new());

/// Records how the running process ended; the task itself exits next.
pub fn record_exit(exit: Exit) {
    let me = sched::current();
    x86_64::instructions::interrupts::without_interrupts(|| EXITS.lock().insert(me, exit));
}

/// Loads `/bin/NAME` (argv[0]) into a new address space and starts it as a child of the
/// running task, as `uid`.
pub fn spawn(argv: &[&[u8]], envp: &[&[u8]], uid: u32) -> Result<TaskId, ExecError> {
    let path = argv.first().ok_or(ExecError::NotFound)?;
    let file = initramfs::find(path).ok_or(ExecError::NotFound)?;
    let program = elf::parse(file).map_err(|e| ExecError::NotExecutable(e.0))?;
    let mut space = AddressSpace::new().map_err(|_| ExecError::OutOfMemory)?;
    for s in &program.segments {
        space
            .map_zeroed(s.vaddr, s.mem_size, s.writable)
            .map_err(|_| ExecError::OutOfMemory)?;
        let bytes = &file[s.offset as usize..(s.offset + s.file_size) as usize];
        space
            .load(s.vaddr, bytes)
            .map_err(|_| ExecError::OutOfMemory)?;
    }
    space
        .map_zeroed(STACK_TOP - STACK_BYTES, STACK_BYTES, true)
        .map_err(|_| ExecError::OutOfMemory)?;
    // AT_RANDOM's bytes: from the TSC, which is as random as this machine gets (under
    // -icount it is the same every run, which keeps runs reproducible).
    let seed = crate::time::clock::now().to_le_bytes();
    let mut random = [0u8; 16];
    random[..8].copy_from_slice(&seed);
    random[8..].copy_from_slice(&seed.map(|b| b.rotate_left(3)));
    let sp = stack::build(&space, &program, argv, envp, uid, random)
        .map_err(|_| ExecError::OutOfMemory)?;
    let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    let name = String::from_utf8_lossy(name);
    sched::spawn_process(&name, uid, 0, Arc::new(space), program.entry, sp)
        .map_err(|_| ExecError::OutOfMemory)
}

/// Runs the program the command line names after ` -- ` as the first process (uid 0), waits
/// for it and reports `RESULT {"kind":"exit",...}`; true if it exited with status 0.
pub fn run_program(argv: &[String]) -> bool {
    initramfs::init();
    let args: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
    let envp: [&[u8]; 2] = [b"HOME=/", b"TERM=dumb"];
    let quoted: Vec<String> = argv.iter().map(|a| alloc::format!("{a:?}")).collect();
    let child = match spawn(&args, &envp, 0) {
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
    while sched::wait_child().is_some_and(|id| id != child) {}
    let exit = x86_64::instructions::interrupts::without_interrupts(|| EXITS.lock().remove(&child));
    let (status, signal) = match exit {
        Some(Exit::Status(s)) => (alloc::format!("{s}"), String::from("null")),
        Some(Exit::Signal(s)) => (String::from("null"), alloc::format!("{s}")),
        None => (String::from("null"), String::from("null")),
    };
    println!(
        "RESULT {{\"kind\":\"exit\",\"argv\":[{}],\"pid\":{},\"status\":{status},\"signal\":{signal}}}",
        quoted.join(","),
        child + 1
    );
    exit == Some(Exit::Status(0))
}
