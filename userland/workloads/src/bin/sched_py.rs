//! `sched_py [-t SECONDS] [--seed N] SCRIPT`: seed 000's `sched.py`. Run as root, it forks
//! its tasks and each calls `setuid` as the Python script did, so each uid's tasks can be a
//! scheduling group of their own (cfslab's `group=uid`; Linux's per-uid `cpu` cgroups):
//! - script 1: the sleeper as uid 1; two hogs as uid 2;
//! - script 2: the sleeper and a hog as uid 1; a hog as uid 2.
//!
//! The sleeper (`workloads::sleeper`) sleeps 100 ms in a loop and measures how late each
//! wake-up is; every 0.5 s it prints the median of its last five samples in ms
//! (`14.810944 ms`), as the script did. Run by another uid, the tasks
//! keep its uid (`setuid` is root's), and a line says so.
//!
//! On Linux a uid's group is a `cpu` cgroup its processes join (a login does it); when the
//! init made one per uid (`linuxinit --group-uid`), each task joins `/sys/fs/cgroup/uidN`
//! before its `setuid`. On cfslab, `group=uid` groups tasks by uid itself.

#![no_std]
#![no_main]

extern crate alloc;

use rt::process::{self, Exit};
use rt::time::now_ns;
use workloads::options::Options;
use workloads::{MS, Rng, report, sleeper, spin_until};

rt::main!(run);

/// The sleeper's period.
const PERIOD: u64 = 100 * MS;

/// One task of a script: what it is and its uid.
#[derive(Clone, Copy)]
enum Task {
    Sleeper,
    Hog,
}

fn run(args: &rt::Args) -> i32 {
    let options = Options::parse(args, "[-t SECONDS] [--seed N] SCRIPT (1 or 2)");
    let tasks: &[(Task, u32)] = match options.number(0, "SCRIPT", 1..=2) {
        1 => &[(Task::Sleeper, 1), (Task::Hog, 2), (Task::Hog, 2)],
        _ => &[(Task::Sleeper, 1), (Task::Hog, 1), (Task::Hog, 2)],
    };
    let as_root = process::getuid() == 0;
    if !as_root {
        rt::println!(
            "sched_py: not root: every task keeps uid {}",
            process::getuid()
        );
    }
    let start = now_ns();
    let end = options.end_ns();
    let mut children = alloc::vec::Vec::new();
    for (stream, &(task, uid)) in tasks.iter().enumerate() {
        match process::fork() {
            Ok(0) => {
                if as_root {
                    join_uid_cgroup(uid);
                    if process::setuid(uid).is_err() {
                        process::exit(1);
                    }
                }
                match task {
                    Task::Sleeper => sleeper::run(
                        "sched_py",
                        "sleeper",
                        PERIOD,
                        Rng::for_stream(options.seed, stream as u64),
                        end,
                    ),
                    Task::Hog => {
                        spin_until(end);
                        report::cpu(
                            "sched_py",
                            "hog",
                            rt::time::thread_cpu_ns(),
                            now_ns() - start,
                        );
                    }
                }
                process::exit(0)
            }
            Ok(child) => children.push(child),
            Err(e) => {
                rt::eprintln!("sched_py: fork: {e:?}");
                return 1;
            }
        }
    }
    let all_ok = children
        .into_iter()
        .all(|child| matches!(process::wait(child), Ok((_, Exit::Exited(0)))));
    if all_ok { 0 } else { 1 }
}

/// Joins uid `uid`'s cgroup, if this is Linux and the init made one.
fn join_uid_cgroup(uid: u32) {
    if !process::on_cfslab() {
        let procs = alloc::format!("/sys/fs/cgroup/uid{uid}/cgroup.procs");
        let _ = rt::fs::write_file(&procs, &alloc::format!("{}", process::getpid()));
    }
}
