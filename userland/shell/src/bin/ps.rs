//! `ps`: every process, one line each, from Linux's `/proc` files (`shell::procfs` says which
//! field comes from where): pid, ppid, uid, nice, state, %CPU (its CPU time over its life),
//! vruntime, sum_exec, switches, wait time and name.

#![no_std]
#![no_main]

use shell::procfs;

rt::main!(run);

fn run(_args: &rt::Args) -> i32 {
    let uptime = procfs::uptime_s();
    let processes = match procfs::all() {
        Ok(p) => p,
        Err(e) => {
            rt::eprintln!("ps: /proc: {e}");
            return 1;
        }
    };
    let table = procfs::table(&processes, |p| {
        let alive = uptime - p.start_s;
        if alive > 0.0 {
            // At most all of one CPU (cfslab's): a process a few ticks old can show more,
            // its CPU time and its start being counted in whole 10 ms ticks.
            (100.0 * p.cpu_s / alive).min(100.0)
        } else {
            0.0
        }
    });
    let _ = rt::io::write_all(rt::io::STDOUT, table.as_bytes());
    0
}
