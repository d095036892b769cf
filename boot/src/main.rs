//! `boot`: cfslab's host tool. It builds the kernel, wraps it in a BIOS disk image, runs it
//! in QEMU and turns the kernel's report into an exit status (see `status.rs`).
//!
//! ```text
//! boot run [OPTIONS] [KEY=VALUE...]   boot the kernel with boot options
//! boot test-runner ELF [ARGS...]      what `cargo test` calls for each kernel test binary
//! boot gdb [OPTIONS]                  QEMU paused with a gdb stub, and gdb attached
//! boot userland                       build the user programs, print their directory
//! boot docs [--check | GENERATOR...]  the documents' generated blocks (docs/mod.rs)
//! ```

mod argv;
mod atomic_file;
mod build;
mod busybox;
mod cli;
mod compare;
mod console_input;
mod debian;
mod docs;
mod ftrace;
mod gdb;
mod heatmap;
mod image;
mod initramfs;
mod lab;
mod linux;
mod markers;
mod perfetto;
mod profile;
mod qemu;
mod repeat;
mod rq_lengths;
mod serial_output;
mod shape;
mod status;
mod strip;
mod timeout;
mod usage;
mod userland;

use cli::{Args, Mode};
use status::Status;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let status = match cli::parse(&args) {
        Ok(Mode::Help) => {
            println!("{}", usage::USAGE);
            Status::Success
        }
        Ok(Mode::Run(args)) => report(run(&args)),
        Ok(Mode::Linux(args)) => report(run_linux(&args)),
        Ok(Mode::Compare { args, part }) => {
            report(compare::run(args.memory_mib, args.verbose, part))
        }
        Ok(Mode::TestRunner { kernel, extra }) => report(test_runner(&kernel, &extra)),
        Ok(Mode::Gdb(args)) => report(debug(&args)),
        Ok(Mode::Lab {
            args,
            seconds,
            seeds,
            jobs,
        }) => report(run_lab(&args, seconds, seeds, jobs)),
        Ok(Mode::LabCheck) => report(lab::check()),
        Ok(Mode::CompareCheck) => report(compare::check()),
        Ok(Mode::Docs(action)) => report(docs::main(&action)),
        Ok(Mode::Userland) => report(userland::build().map(|dir| {
            println!("{}", dir.display());
            Status::Success
        })),
        Ok(Mode::Busybox) => report(busybox::get().map(|busybox| {
            println!("{}", busybox.binary.display());
            Status::Success
        })),
        Err(message) => {
            eprintln!("boot: {message}\n\n{}", usage::USAGE);
            Status::Usage
        }
    };
    ExitCode::from(status.code() as u8)
}

/// Prints a one-line verdict for anything but success.
fn report(result: Result<Status, String>) -> Status {
    match result {
        Ok(Status::Success) => Status::Success,
        // `run` has said which program ended how.
        Ok(Status::ProgramFailed) => Status::ProgramFailed,
        Ok(status) => {
            eprintln!("boot: {status} (exit status {})", status.code());
            status
        }
        Err(message) => {
            eprintln!("boot: {message}");
            Status::HostError
        }
    }
}

/// The kernel to boot: `--kernel`, or a fresh build (`--release`, or `default`).
fn kernel_for(args: &Args, default: build::Profile) -> Result<std::path::PathBuf, String> {
    match &args.kernel {
        Some(path) => Ok(path.clone()),
        None if args.release => build::build_kernel(build::Profile::Release),
        None => build::build_kernel(default),
    }
}

fn machine_for(args: &Args, kernel: &Path) -> Result<qemu::Machine, String> {
    let image = image::build_image(kernel)?;
    let mut machine = qemu::Machine::new(image);
    machine.options = argv::command_line(&args.options);
    machine.icount_shift = if args.realtime {
        None
    } else {
        Some(args.icount_shift)
    };
    machine.memory_mib = args.memory_mib;
    machine.smp = args.smp;
    machine.shape = args.shape;
    // Every run has the initramfs: the lab's scenarios run its workload programs, and
    // ` -- ` runs any program in it.
    machine.initramfs = Some(if args.busybox {
        let busybox = busybox::get()?;
        eprintln!(
            "boot: {} and its {} applets under /bin",
            busybox.version,
            busybox.applets.len()
        );
        initramfs::build_with_busybox(&args.add, &busybox)?
    } else {
        initramfs::build(&args.add)?
    });
    if let Some(script) = &args.input {
        let text = std::fs::read_to_string(script)
            .map_err(|e| format!("--input {}: {e}", script.display()))?;
        machine.console_input = console_input::ConsoleInput::Script(console_input::parse(&text));
    } else if args.interactive {
        machine.console_input = console_input::ConsoleInput::Terminal;
        // While the shell waits for a key, virtual time follows the host's (with sleep=off
        // it would leap from tick to tick, and `sleep 1` would pass in an instant).
        machine.icount_sleep = true;
    }
    if args.verbose {
        eprintln!("boot: kernel {}", kernel.display());
        eprintln!("boot: {}", machine.command_line());
    }
    Ok(machine)
}

fn run(args: &Args) -> Result<Status, String> {
    let kernel = kernel_for(args, build::Profile::Dev)?;
    let mut machine = machine_for(args, &kernel)?;
    let timeout = args.timeout_secs.unwrap_or_else(|| {
        let shift = (!args.realtime).then_some(args.icount_shift);
        timeout::derived(&machine.options, shift)
    });
    let echo = if args.trace_file.is_some() {
        qemu::Echo::AllButTrace
    } else {
        qemu::Echo::All
    };
    let (timeout, profiling) = if args.profile {
        let pipe = profile::make_pipe()?;
        machine.profile_log = Some(pipe.clone());
        if args.verbose {
            eprintln!(
                "boot: profiling: QEMU also gets -d exec,nochain,in_asm -D {}",
                pipe.display()
            );
        }
        let from_user = args.options.iter().any(|o| o == "--");
        // Logging every block slows QEMU about tenfold.
        (
            timeout * 10,
            Some((pipe.clone(), profile::start(pipe, from_user))),
        )
    } else {
        (timeout, None)
    };
    if args.verbose {
        eprintln!("boot: timeout {timeout} s");
    }
    // A person at the console takes their time.
    let limit = (!args.interactive).then(|| Duration::from_secs(timeout));
    let (status, timing, output) = qemu::run(&machine, limit, echo)?;
    if args.repeat > 1
        && let Some(differ) = repeat::check(&machine, limit, &output, args.repeat)?
    {
        return Ok(differ);
    }
    if let Some((pipe, counter)) = profiling {
        // If QEMU never opened the log, the counter still waits in `open`: release it.
        let _ = std::fs::OpenOptions::new().write(true).open(&pipe);
        let counts = counter.join().map_err(|_| "the profile's counter failed")?;
        print!(
            "{}",
            profile::report(&counts, &profile::kernel_symbols(&kernel)?, 40)
        );
    }
    if let Some(path) = &args.trace_file {
        match qemu::extract_trace(&output) {
            Some(trace) => {
                let json = path.with_extension("json");
                for (file, text) in [
                    (path, trace.clone()),
                    (&json, perfetto::from_ftrace(&trace)),
                ] {
                    std::fs::write(file, text)
                        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
                }
                eprintln!(
                    "boot: trace written to {} (ftrace text) and {} (Perfetto JSON); open either in ui.perfetto.dev",
                    path.display(),
                    json.display()
                );
            }
            None => eprintln!("boot: no trace in the output (boot with trace=on)"),
        }
    }
    if args.verbose {
        let banner = timing
            .to_banner
            .map_or("-".into(), |t| format!("{:.2} s", t.as_secs_f64()));
        eprintln!(
            "boot: wall time to the banner {banner}, whole run {:.2} s",
            timing.total.as_secs_f64()
        );
    }
    if status == Status::Timeout {
        eprintln!("boot: no report within {timeout} s; QEMU was killed (raise it with --timeout)");
    }
    if status == Status::Failure
        && let Some(ending) = program_ending(&output)
    {
        eprintln!("boot: {ending} (exit status 1: the program failed, not the kernel)");
        return Ok(Status::ProgramFailed);
    }
    Ok(status)
}

/// How the program after ` -- ` ended, from the kernel's `RESULT {"kind":"exit",...}` line
/// ("/bin/sh exited with status 1", "/bin/crash was killed by signal 11"); `None` if there
/// is no such line, or the kernel failed after it (a panic, a leak).
fn program_ending(output: &str) -> Option<String> {
    let results: Vec<serde_json::Value> = output
        .lines()
        .filter_map(|l| serde_json::from_str(l.trim().strip_prefix("RESULT ")?).ok())
        .collect();
    let exit = results.iter().find(|r| r["kind"] == "exit")?;
    let memory = results.iter().find(|r| r["kind"] == "memory")?;
    if memory["frames_after"] != memory["frames_before"] || output.contains("PANIC") {
        return None;
    }
    let program = exit["argv"][0].as_str().unwrap_or("the program");
    match (exit["status"].as_i64(), exit["signal"].as_i64()) {
        (Some(status), _) => Some(format!("{program} exited with status {status}")),
        (_, Some(signal)) => Some(format!("{program} was killed by signal {signal}")),
        _ => Some(format!("{program} could not be run")),
    }
}

/// `boot linux -- PROGRAM ARGS`: the program on Linux, in the machine `run` would boot.
fn run_linux(args: &Args) -> Result<Status, String> {
    let program = &args.options[1..];
    let hardware = linux::Hardware {
        icount_shift: (!args.realtime).then_some(args.icount_shift),
        memory_mib: args.memory_mib,
        smp: args.smp,
        shape: args.shape,
    };
    let timeout = Duration::from_secs(args.timeout_secs.unwrap_or(300));
    let (status, _, _) = linux::run(
        program,
        &args.add,
        hardware,
        timeout,
        args.verbose,
        qemu::Echo::All,
    )?;
    if status == Status::Timeout {
        eprintln!(
            "boot: Linux did not finish within {} s; QEMU was killed",
            timeout.as_secs()
        );
    }
    Ok(status)
}

/// Default per-test-kernel timeout; `CFSLAB_TEST_TIMEOUT` (seconds) overrides it.
const TEST_TIMEOUT_SECS: u64 = 300;

fn test_runner(kernel: &Path, extra: &[String]) -> Result<Status, String> {
    let name = kernel.file_name().unwrap_or_default().to_string_lossy();
    eprintln!("boot: booting test kernel {name} in QEMU");
    if !extra.is_empty() {
        eprintln!(
            "boot: note: test arguments {extra:?} are ignored; a test kernel runs all its tests"
        );
    }
    let timeout = std::env::var("CFSLAB_TEST_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(TEST_TIMEOUT_SECS);
    // A test of several CPUs (kernel/tests/smp_*.rs) gets two.
    let smp = name.starts_with("smp_").then_some(2);
    let args = Args {
        verbose: std::env::var_os("CFSLAB_VERBOSE").is_some(),
        smp,
        options: smp.map(|n| format!("smp={n}")).into_iter().collect(),
        ..Args::default()
    };
    let machine = machine_for(&args, kernel)?;
    qemu::run(
        &machine,
        Some(Duration::from_secs(timeout)),
        qemu::Echo::All,
    )
    .map(|(status, _, _)| status)
}

fn run_lab(args: &Args, seconds: u64, seeds: u64, jobs: usize) -> Result<Status, String> {
    // The optimised kernel, as a kernel is built to run: the workloads are processes, and
    // the unoptimised build's system calls and page faults (several times slower, and not
    // preemptible) would show in the latencies as if they were the scheduler's.
    let kernel = kernel_for(args, build::Profile::Release)?;
    let shift = args.icount_shift_given.unwrap_or(lab::LAB_ICOUNT_SHIFT);
    lab::lab(&kernel, &lab::default_out(), seconds, seeds, jobs, shift)
}

fn debug(args: &Args) -> Result<Status, String> {
    let kernel = kernel_for(args, build::Profile::Gdb)?;
    let mut machine = machine_for(args, &kernel)?;
    machine.gdb_port = Some(args.gdb_port);
    // Idle time passes in host time while gdb holds the machine (see gdb.rs).
    machine.icount_sleep = true;
    let script = gdb::write_script(
        &build::target_dir(),
        &kernel,
        args.gdb_port,
        &build::sysroot()?,
    )?;
    let attach = gdb::command_line(&script);
    let mut qemu = machine.spawn(true)?;
    if args.no_launch {
        eprintln!(
            "boot: QEMU is paused, waiting for gdb on 127.0.0.1:{}; attach with:",
            args.gdb_port
        );
        println!("{attach}");
        let status =
            qemu::wait_with_timeout(&mut qemu, args.timeout_secs.map(Duration::from_secs))?;
        // gdb's `kill` (or quitting it) stops QEMU before the kernel reports: the end of a
        // debugging session, not a failure. A report the kernel did make still counts.
        if status == Status::NoReport {
            eprintln!("boot: the debugging session ended (QEMU was stopped from gdb)");
            return Ok(Status::Success);
        }
        return Ok(status);
    }
    eprintln!("boot: {attach}");
    let gdb_status = std::process::Command::new("gdb")
        .args(["-q", "-x"])
        .arg(&script)
        .status();
    let _ = qemu.kill();
    let _ = qemu.wait();
    match gdb_status {
        Ok(_) => Ok(Status::Success),
        Err(e) => Err(format!(
            "cannot start gdb ({e}); install it (Debian: apt-get install gdb)"
        )),
    }
}
