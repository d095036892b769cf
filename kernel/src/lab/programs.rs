//! A scenario's tasks as user processes: each task spec becomes the workload program of
//! `userland/workloads` that the seed ran (seeds/README.md), started from the initramfs as
//! a child of the boot task with the spec's uid and nice, as a shell would start it:
//!
//! | task | program |
//! |---|---|
//! | `sleeper:P` | `/bin/sleeper P` (seed 000's `sched.py` sleeper) |
//! | `hog` | `/bin/hog` |
//! | `lat3:S` | `/bin/lat3 -p N S` (seed 002) |
//! | `waker:P` | `/bin/wakeup_latency P` (seed 003) |
//! | `makej:N[/io]` | `/bin/makej [--io] N`, which vforks and execs `/bin/job` (seed 003) |
//!
//! Every program gets `--until END` (the window's end on the monotonic clock, the same for
//! all), `--name` (the task's name in the reports: `hog1`, `lat3-2`) and, where it draws
//! phases, `--seed` (stream N of `seed=`). Its environment says which scenario it runs in
//! and under which settings (`CFSLAB_*`, read by `workloads::lab`), so that it prints the
//! lab's lines itself: the seed's format prefixed with the scenario, its cyclictest and
//! schbench blocks, its `latency` `RESULT`. The programs are the one implementation of the
//! workloads; the kernel only starts them, reaps them and reports their CPU time.

use crate::config::Config;
use crate::config::scenarios::Scenario;
use crate::config::tasks::{TaskKind, TaskSpec};
use crate::println;
use crate::sched;
use crate::sched::proc::exit_status::Exit;
use crate::task::TaskId;
use crate::user::process;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// One task of a scenario: its name in the reports, who it runs as, and its process.
pub struct LabTask {
    pub name: String,
    pub kind: TaskKind,
    pub uid: u32,
    pub nice: i8,
    /// The process, if it started.
    pub process: Option<TaskId>,
    /// Its threads' CPU time, once it has ended and been reaped.
    pub cpu_ns: u64,
}

/// The name of instance `nth` (0-based) of `kind` among `total` of that kind: `hog1`,
/// `hog2`; `lat3-1` where the kind's name ends in a digit; no number for a kind that
/// appears once.
fn task_name(kind: TaskKind, nth: usize, total: u32) -> String {
    let name = kind.name();
    match (total > 1, name.ends_with(|c: char| c.is_ascii_digit())) {
        (false, _) => name.into(),
        (true, false) => format!("{name}{}", nth + 1),
        (true, true) => format!("{name}-{}", nth + 1),
    }
}

/// The argv that runs `spec` as task `name` (instance `nth` of its kind; `seed` seeds its
/// variation) until `end`.
fn argv_for(spec: &TaskSpec, name: &str, nth: usize, seed: u64, end: u64) -> Vec<String> {
    let mut argv: Vec<String> = Vec::new();
    let program = match spec.kind {
        TaskKind::Sleeper => "/bin/sleeper",
        TaskKind::Hog => "/bin/hog",
        TaskKind::Lat3 => "/bin/lat3",
        TaskKind::Waker => "/bin/wakeup_latency",
        TaskKind::Makej => "/bin/makej",
    };
    argv.push(program.into());
    argv.extend(["--until".into(), format!("{end}")]);
    argv.extend(["--name".into(), name.into()]);
    if matches!(
        spec.kind,
        TaskKind::Sleeper | TaskKind::Waker | TaskKind::Makej
    ) {
        argv.extend(["--seed".into(), format!("{seed}")]);
    }
    match spec.kind {
        TaskKind::Hog => {}
        TaskKind::Makej => {
            if spec.io {
                argv.push("--io".into());
            }
            argv.push(format!("{}", spec.arg));
        }
        TaskKind::Lat3 => {
            // seed 002's P column: which of the lat3 loops this is.
            argv.extend(["-p".into(), format!("{}", nth + 1)]);
            argv.push(format!("{}ns", spec.arg));
        }
        TaskKind::Sleeper | TaskKind::Waker => argv.push(format!("{}ns", spec.arg)),
    }
    argv
}

/// The environment that tells a program which scenario it runs in (`workloads::lab`).
fn environment(s: &Scenario, config: &Config) -> Vec<String> {
    alloc::vec![
        format!("CFSLAB_SCENARIO={}", s.name),
        format!(
            "CFSLAB_POLICY={}",
            crate::config::policy_name(config.policy)
        ),
        format!(
            "CFSLAB_ERA={}",
            config.effective_era().map_or("2.6.11", |e| e.name())
        ),
        format!("CFSLAB_FEATURES={}", config.features_value()),
    ]
}

/// Starts every task of `s` (children of the running task), all ending at `end`. A task
/// that cannot start is reported in one line and left out.
pub fn start(s: &Scenario, config: &Config, seed: u64, end: u64) -> Vec<LabTask> {
    let envp = environment(s, config);
    let envp: Vec<&[u8]> = envp.iter().map(|e| e.as_bytes()).collect();
    let mut tasks: Vec<LabTask> = Vec::new();
    for spec in &s.tasks {
        let total: u32 = s
            .tasks
            .iter()
            .filter(|t| t.kind == spec.kind)
            .map(|t| t.count)
            .sum();
        for _ in 0..spec.count {
            let nth = tasks.iter().filter(|t| t.kind == spec.kind).count();
            let name = task_name(spec.kind, nth, total);
            let task_seed = ::sched::programs::task_seed(seed, tasks.len() as u64);
            let argv = argv_for(spec, &name, nth, task_seed, end);
            let args: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
            let started = process::spawn(&args, &envp, spec.uid, spec.nice);
            if let Err(e) = &started {
                println!("{}: cannot start {name} ({}): {e}", s.name, argv[0]);
            }
            tasks.push(LabTask {
                name,
                kind: spec.kind,
                uid: spec.uid,
                nice: spec.nice,
                process: started.ok(),
                cpu_ns: 0,
            });
        }
    }
    tasks
}

/// Waits for every task (and anything they left behind) to end, and records each task's
/// CPU time. A task that did not end with status 0 says so.
pub fn reap(scenario: &str, tasks: &mut [LabTask]) {
    // Every zombie, the tasks' own and any orphan a program left behind (passed to this
    // task, see sched::proc::family).
    let mut zombies = alloc::vec::Vec::new();
    while let Some(zombie) = sched::wait_child() {
        zombies.push(zombie);
    }
    for task in tasks.iter_mut() {
        let ended = zombies
            .iter()
            .find(|z| Some(z.id) == task.process)
            .and_then(|z| z.status);
        let Some(ended) = ended else {
            continue;
        };
        task.cpu_ns = ended.own.user_ns + ended.own.system_ns;
        if ended.exit != Exit::Status(0) {
            println!("{scenario}: {} ended badly: {:?}", task.name, ended.exit);
        }
    }
}
