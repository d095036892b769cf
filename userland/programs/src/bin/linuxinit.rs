//! `linuxinit`: the init of the Linux guest that `cargo boot linux` boots beside cfslab in the
//! same QEMU (issue [4/5]'s `make compare`). Linux hands it the words after ` -- ` on its
//! command line, as cfslab's boot options hand them to cfslab's own init; it runs that
//! program, reports how it ended with the same `RESULT {"kind":"exit",...}` line cfslab
//! prints, and powers the machine off (an init that returns would panic Linux).
//!
//! It runs on Linux only: on cfslab the kernel is the init, and anywhere else as root it
//! would power the host off, so it refuses (status 2) unless it is pid 1.

#![no_std]
#![no_main]

use rt::process::{self, Exit};
use rt::{eprintln, print, println};

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    if process::getpid() != 1 {
        eprintln!("linuxinit: not pid 1; it is the Linux guest's init (cargo boot linux)");
        return 2;
    }
    let (argv, envp) = args.raw();
    let status = if args.len() < 2 {
        eprintln!("linuxinit: no program given (the words after ` -- ` on Linux's command line)");
        None
    } else {
        match process::fork() {
            Ok(0) => {
                // SAFETY: argv[1..] is the kernel's null-terminated array of NUL-terminated
                // strings, and argv[1] the program's path.
                let error = unsafe { process::execve(*argv.add(1), argv.add(1), envp) };
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
    report(args, status);
    let _ = process::reboot(process::REBOOT_MAGIC1, process::REBOOT_POWER_OFF);
    1
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

/// The line the boot tool reads, in cfslab's format: argv, pid, status and signal.
fn report(args: &rt::Args, ended: Option<(i32, Exit)>) {
    print!("RESULT {{\"kind\":\"exit\",\"argv\":[");
    for i in 1..args.len() {
        let word = args.str(i).unwrap_or("?");
        print!("{}\"", if i > 1 { "," } else { "" });
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
