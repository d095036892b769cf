//! `poweroff`: ends the run as Linux's init does, with `reboot(LINUX_REBOOT_CMD_POWER_OFF)`,
//! after checking the call's rules: an unprivileged process gets EPERM, and wrong magic
//! numbers give EINVAL. It runs on cfslab only (anywhere else it refuses, status 2): as root
//! on Linux it would power the host off.

#![no_std]
#![no_main]

use rt::process::{self, Exit, REBOOT_MAGIC1 as MAGIC1, REBOOT_POWER_OFF as POWER_OFF, reboot};
use rt::{Errno, println};

rt::main!(run);

fn run(_: &rt::Args) -> i32 {
    if !process::cfslab_only("poweroff") {
        return 2;
    }
    let child = match process::fork() {
        Ok(0) => {
            let refused =
                process::setuid(54_321).is_ok() && reboot(MAGIC1, POWER_OFF) == Err(Errno::EPERM);
            process::exit(i32::from(!refused))
        }
        Ok(child) => child,
        Err(_) => return 1,
    };
    let unprivileged_refused = matches!(process::wait(child), Ok((_, Exit::Exited(0))));
    let bad_magic_refused = reboot(0x1234, POWER_OFF) == Err(Errno::EINVAL);
    println!(
        "poweroff: EPERM for uid 54321: {unprivileged_refused}; EINVAL for bad magic: {bad_magic_refused}"
    );
    let _ = reboot(MAGIC1, POWER_OFF);
    println!("poweroff: FAIL: reboot returned");
    1
}
