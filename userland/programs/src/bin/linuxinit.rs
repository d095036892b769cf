//! `linuxinit`: the init of the Linux guest that `cargo boot linux` boots beside cfslab in the
//! same QEMU (`make compare`). Linux hands it the words after ` -- ` on its
//! command line, as cfslab's boot options hand them to cfslab's own init; it runs that
//! program, reports how it ended with the same `RESULT {"kind":"exit",...}` line cfslab
//! prints, and powers the machine off (an init that returns would panic Linux).
//!
//! Before the program, it sets Linux up as a scenario asks, with options ahead of the
//! program's path (`make compare` passes them):
//! - `--tunable NAME=VALUE`: writes VALUE to `/sys/kernel/debug/sched/NAME` (`latency_ns`,
//!   `min_granularity_ns`, `wakeup_granularity_ns`: 6.1's names for 2.6's sysctls);
//! - `--feature NAME`: writes NAME (e.g. `NO_START_DEBIT`) to `/sys/kernel/debug/sched/features`;
//! - `--group-uid`: mounts cgroup2, enables its `cpu` controller and makes `uid1` … `uid9`
//!   under it, today's way of giving each uid a group (2.6.24's FAIR_USER_SCHED); a
//!   program that wants its uid's group joins it (`sched_py` does, before `setuid`);
//! - `--trace`: records the scheduler's events with ftrace (`sched_switch`, `sched_waking`,
//!   `sched_wakeup_new`, `sched_migrate_task`, and `sched_stat_runtime` with each task's vruntime) while the
//!   program runs, and prints them afterwards between
//!   cfslab's markers (`--- TRACE BEGIN ---`, `--- TRACE END ---`), as cfslab's `trace=on`
//!   does, so that one tool reads both kernels' traces.
//!
//! For these it mounts proc, sysfs and debugfs. Each step prints one line; a step that
//! fails ends the run (status 1) before the program starts.
//!
//! It runs on Linux only: on cfslab the kernel is the init, and anywhere else as root it
//! would power the host off, so it refuses (status 2) unless it is pid 1.

#![no_std]
#![no_main]

extern crate alloc;

use rt::fs;
use rt::process::{self, Exit};
use rt::{eprintln, print, println};

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    if process::getpid() != 1 {
        eprintln!("linuxinit: not pid 1; it is the Linux guest's init (cargo boot linux)");
        return 2;
    }
    let (argv, envp) = args.raw();
    let first = match set_up(args) {
        Ok(first) => first,
        Err(why) => {
            eprintln!("linuxinit: {why}");
            report(args, args.len(), None);
            let _ = process::reboot(process::REBOOT_MAGIC1, process::REBOOT_POWER_OFF);
            return 1;
        }
    };
    let status = if first >= args.len() {
        eprintln!("linuxinit: no program given (the words after ` -- ` on Linux's command line)");
        None
    } else {
        match process::fork() {
            Ok(0) => {
                // SAFETY: argv[first..] is the kernel's null-terminated array of
                // NUL-terminated strings, and argv[first] the program's path.
                let error = unsafe { process::execve(*argv.add(first), argv.add(first), envp) };
                eprintln!("linuxinit: cannot run the program: {error:?}");
                process::exit(127)
            }
            Ok(child) => wait_for(child).map(|exit| (child, exit)),
            Err(error) => {
                eprintln!("linuxinit: fork: {error:?}");
                None
            }
        }
    };
    report(args, first, status);
    print_trace_if_recorded();
    let _ = process::reboot(process::REBOOT_MAGIC1, process::REBOOT_POWER_OFF);
    1
}

/// With `--trace`: stops the recording and prints it between cfslab's trace markers.
fn print_trace_if_recorded() {
    let tracing = "/sys/kernel/debug/tracing";
    if fs::read_file(&alloc::format!("{tracing}/tracing_on")).as_deref() != Ok(b"1\n") {
        return;
    }
    let _ = fs::write_file(&alloc::format!("{tracing}/tracing_on"), "0");
    if let Ok(trace) = fs::read_file(&alloc::format!("{tracing}/trace")) {
        println!("--- TRACE BEGIN ---");
        let _ = rt::io::write_all(rt::io::STDOUT, &trace);
        println!("--- TRACE END ---");
    }
}

/// Applies the options ahead of the program; returns the index of the program's path.
fn set_up(args: &rt::Args) -> Result<usize, alloc::string::String> {
    use alloc::format;
    let mut mounted = false;
    let mut mount_all = || -> Result<(), alloc::string::String> {
        if !mounted {
            for (dir, fstype) in [("/proc", "proc"), ("/sys", "sysfs")] {
                let _ = fs::mkdir(dir);
                fs::mount(fstype, dir, fstype).map_err(|e| format!("mount {dir}: {e:?}"))?;
            }
            fs::mount("debugfs", "/sys/kernel/debug", "debugfs")
                .map_err(|e| format!("mount debugfs: {e:?}"))?;
            mounted = true;
        }
        Ok(())
    };
    let mut i = 1;
    while let Some(word) = args.str(i).filter(|w| w.starts_with("--")) {
        let value = args.str(i + 1).unwrap_or("");
        match word {
            "--tunable" => {
                mount_all()?;
                let (name, number) = value
                    .split_once('=')
                    .ok_or_else(|| format!("--tunable wants NAME=VALUE, not {value:?}"))?;
                let path = format!("/sys/kernel/debug/sched/{name}");
                fs::write_file(&path, number).map_err(|e| format!("{path} = {number}: {e:?}"))?;
                println!("linuxinit: {name} = {number}");
                i += 2;
            }
            "--feature" => {
                mount_all()?;
                fs::write_file("/sys/kernel/debug/sched/features", value)
                    .map_err(|e| format!("feature {value}: {e:?}"))?;
                println!("linuxinit: feature {value}");
                i += 2;
            }
            "--group-uid" => {
                mount_all()?;
                let root = "/sys/fs/cgroup";
                fs::mount("cgroup2", root, "cgroup2")
                    .map_err(|e| format!("mount cgroup2: {e:?}"))?;
                fs::write_file(&format!("{root}/cgroup.subtree_control"), "+cpu")
                    .map_err(|e| format!("enable the cpu controller: {e:?}"))?;
                for uid in 1..=9 {
                    fs::mkdir(&format!("{root}/uid{uid}"))
                        .map_err(|e| format!("uid{uid}: {e:?}"))?;
                }
                println!("linuxinit: a cpu cgroup per uid ({root}/uid1 .. uid9)");
                i += 1;
            }
            "--trace" => {
                mount_all()?;
                let tracing = "/sys/kernel/debug/tracing";
                for (file, value) in [
                    ("buffer_size_kb", "16384"),
                    ("events/sched/sched_switch/enable", "1"),
                    ("events/sched/sched_waking/enable", "1"),
                    ("events/sched/sched_wakeup_new/enable", "1"),
                    ("events/sched/sched_migrate_task/enable", "1"),
                    // Each charge of CPU time, with the task's vruntime after it.
                    ("events/sched/sched_stat_runtime/enable", "1"),
                    ("tracing_on", "1"),
                ] {
                    let path = format!("{tracing}/{file}");
                    fs::write_file(&path, value).map_err(|e| format!("{path}: {e:?}"))?;
                }
                println!("linuxinit: tracing the scheduler's events");
                i += 1;
            }
            _ => return Err(format!("unknown option {word:?}")),
        }
    }
    Ok(i)
}

/// Waits for `child`, reaping any orphan that ends meanwhile (an init's duty).
fn wait_for(child: i32) -> Option<Exit> {
    loop {
        match process::wait(-1) {
            Ok((pid, exit)) if pid == child => return Some(exit),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
}

/// The line the boot tool reads, in cfslab's format: the program's argv (from `first`), pid,
/// status and signal.
fn report(args: &rt::Args, first: usize, ended: Option<(i32, Exit)>) {
    print!("RESULT {{\"kind\":\"exit\",\"argv\":[");
    for i in first..args.len() {
        let word = args.str(i).unwrap_or("?");
        print!("{}\"", if i > first { "," } else { "" });
        for c in word.chars() {
            match c {
                '"' | '\\' => print!("\\{c}"),
                c => print!("{c}"),
            }
        }
        print!("\"");
    }
    match ended {
        Some((pid, Exit::Exited(code))) => {
            println!("],\"pid\":{pid},\"status\":{code},\"signal\":null}}")
        }
        Some((pid, Exit::Killed(signal))) => {
            println!("],\"pid\":{pid},\"status\":null,\"signal\":{signal}}}")
        }
        None => println!("],\"pid\":null,\"status\":null,\"signal\":null}}"),
    }
}
