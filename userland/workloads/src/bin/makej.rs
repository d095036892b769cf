//! `makej [-t SECONDS | --until NS] [--seed N] [--io] [--name NAME] JOBS`: seed 003's `make -jJOBS`. It keeps JOBS
//! compile jobs running: each is started as make starts one, with `vfork` and `execve` of
//! `job` (found beside this program: `/bin/job` in the initramfs), burns 5–50 ms of CPU
//! (`sched::programs`), and exits; `wait4(-1)` reaps whichever ends, and the next starts,
//! until SECONDS have passed; then the last ones are waited for. `--io`: the jobs sleep on
//! I/O between bursts. Prints how many jobs ran.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::ffi::CString;
use alloc::format;
use rt::process::{self, Exit};
use workloads::options::Options;
use workloads::programs::JOB_CPU_NS;
use workloads::{Rng, report, say};

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    let options = Options::parse(
        args,
        "[-t SECONDS | --until NS] [--seed N] [--io] [--name NAME] JOBS",
    );
    let jobs = options.number(0, "JOBS", 1..=64);
    let me = args.str(0).unwrap_or("/bin/makej");
    let job = match me.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/job"),
        None => "job".into(),
    };
    let mut rng = Rng::for_stream(options.seed, 0);
    let start = rt::time::now_ns();
    let end = options.end_ns();
    let (mut running, mut started, mut failed) = (0, 0u64, 0u64);
    while rt::time::now_ns() < end || running > 0 {
        while running < jobs && rt::time::now_ns() < end {
            let cpu_us = rng.within(JOB_CPU_NS) / 1_000;
            let io_seed = rng.next_u64() >> 1;
            if start_job(&job, cpu_us, end, options.io.then_some(io_seed)).is_err() {
                break;
            }
            running += 1;
            started += 1;
        }
        match process::wait(-1) {
            Ok((_, Exit::Exited(0))) => running -= 1,
            Ok(_) => {
                running -= 1;
                failed += 1;
            }
            Err(_) => running = 0,
        }
    }
    say!("makej: {started} jobs ran, {failed} failed");
    report::cpu(
        "makej",
        options.name_or("makej"),
        rt::time::thread_cpu_ns(),
        rt::time::now_ns() - start,
    );
    i32::from(failed > 0 || started == 0)
}

/// Starts `job CPU_US END_NS [io SEED]` with vfork + execve, as make does.
fn start_job(path: &str, cpu_us: u64, end: u64, io_seed: Option<u64>) -> Result<i32, rt::Errno> {
    let words = [
        path.into(),
        format!("{cpu_us}"),
        format!("{end}"),
        io_seed.map_or(alloc::string::String::new(), |_| "io".into()),
        io_seed.map_or(alloc::string::String::new(), |s| format!("{s}")),
    ];
    let strings: alloc::vec::Vec<CString> = words
        .iter()
        .filter(|w| !w.is_empty())
        .map(|w| CString::new(w.as_str()).unwrap_or_default())
        .collect();
    let mut argv: alloc::vec::Vec<*const u8> =
        strings.iter().map(|s| s.as_ptr().cast::<u8>()).collect();
    argv.push(core::ptr::null());
    let envp = [core::ptr::null::<u8>()];
    // SAFETY: NUL-terminated strings in null-terminated arrays, alive across the call.
    unsafe { process::vfork_exec(argv[0], argv.as_ptr(), envp.as_ptr()) }
}
