//! `cat FILE...`: each file's contents to standard output — how a student reads
//! `/proc/sched_debug` or `/proc/PID/sched`. A file that cannot be read is one error line
//! (status 1), and the others are still printed.

#![no_std]
#![no_main]

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    if args.len() < 2 {
        rt::eprintln!("usage: cat FILE...");
        return 2;
    }
    let mut status = 0;
    for i in 1..args.len() {
        let path = args.str(i).unwrap_or("?");
        match rt::fs::read_file(path) {
            Ok(bytes) => {
                let _ = rt::io::write_all(rt::io::STDOUT, &bytes);
            }
            Err(e) => {
                rt::eprintln!("cat: {path}: {e}");
                status = 1;
            }
        }
    }
    status
}
