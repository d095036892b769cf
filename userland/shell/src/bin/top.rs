//! `top [-d SECONDS] [-n FRAMES]`: the `ps` table (`shell::procfs`) every SECONDS (default
//! 1), busiest first, its %CPU over the last interval — the shares the scheduler is giving
//! right now — until a key is pressed (or FRAMES frames). On a terminal each frame replaces
//! the last (ANSI home and clear).

#![no_std]
#![no_main]

extern crate alloc;

use alloc::collections::BTreeMap;
use shell::procfs;

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    let (mut delay_ms, mut frames) = (1_000i32, u64::MAX);
    let mut i = 1;
    while let Some(flag) = args.str(i) {
        let value = args.str(i + 1).and_then(|v| v.parse::<f64>().ok());
        match (flag, value) {
            ("-d", Some(s)) if (0.05..=3600.0).contains(&s) => delay_ms = (s * 1000.0) as i32,
            ("-n", Some(n)) if (1.0..=1e9).contains(&n) => frames = n as u64,
            _ => {
                rt::eprintln!("usage: top [-d SECONDS (0.05 to 3600)] [-n FRAMES]");
                return 2;
            }
        }
        i += 2;
    }
    let terminal = rt::io::is_terminal(1);
    let mut keys_possible = true;
    let mut before: BTreeMap<u32, f64> = BTreeMap::new();
    let mut before_uptime = procfs::uptime_s();
    for frame in 0..frames {
        let uptime = procfs::uptime_s();
        let mut processes = match procfs::all() {
            Ok(p) => p,
            Err(e) => {
                rt::eprintln!("top: /proc: {e}");
                return 1;
            }
        };
        let span = (uptime - before_uptime).max(1e-9);
        let share = |p: &procfs::Process| {
            let was = before.get(&p.pid).copied().unwrap_or(p.cpu_s);
            100.0 * (p.cpu_s - was) / span
        };
        processes.sort_by(|a, b| share(b).total_cmp(&share(a)).then(a.pid.cmp(&b.pid)));
        let mut text = alloc::string::String::new();
        if terminal {
            text.push_str("\u{1b}[H\u{1b}[2J");
        }
        text += &alloc::format!(
            "top: frame {}, up {uptime:.1} s, {} processes, %CPU over the last {span:.1} s; a key ends it\n",
            frame + 1,
            processes.len()
        );
        text += &procfs::table(&processes, share);
        let _ = rt::io::write_all(rt::io::STDOUT, text.as_bytes());
        before = processes.iter().map(|p| (p.pid, p.cpu_s)).collect();
        before_uptime = uptime;
        if frame + 1 == frames {
            break;
        }
        // A key ends it; at end of input (a pipe closed) only the frames or a kill do.
        if keys_possible && rt::io::wait_readable(0, delay_ms).unwrap_or(false) {
            let mut key = [0u8; 64];
            match rt::io::read(0, &mut key) {
                Ok(0) | Err(_) => keys_possible = false,
                Ok(_) => break,
            }
        } else if !keys_possible {
            let _ = rt::time::sleep_ns(delay_ms as u64 * 1_000_000);
        }
    }
    0
}
