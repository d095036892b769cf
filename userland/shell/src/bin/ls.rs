//! `ls [DIR...]`: the names in each directory (default `/`), sorted, one per line; with
//! several directories, each under a `DIR:` heading. A directory that cannot be read is one
//! error line (status 1).

#![no_std]
#![no_main]

extern crate alloc;

rt::main!(run);

fn run(args: &rt::Args) -> i32 {
    let dirs: alloc::vec::Vec<&str> = (1..args.len()).filter_map(|i| args.str(i)).collect();
    let dirs = if dirs.is_empty() {
        alloc::vec!["/"]
    } else {
        dirs
    };
    let mut status = 0;
    for (n, dir) in dirs.iter().enumerate() {
        match rt::fs::list_dir(dir) {
            Ok(mut names) => {
                names.sort();
                if dirs.len() > 1 {
                    rt::println!("{}{dir}:", if n > 0 { "\n" } else { "" });
                }
                let mut text = alloc::string::String::new();
                for name in names {
                    text.push_str(&name);
                    text.push('\n');
                }
                let _ = rt::io::write_all(rt::io::STDOUT, text.as_bytes());
            }
            Err(e) => {
                rt::eprintln!("ls: {dir}: {e}");
                status = 1;
            }
        }
    }
    status
}
