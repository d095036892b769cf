//! Starting a program as the shell's child: `fork`, then in the child what the command asks
//! for — its output to a file (`> FILE`), a nice value (`nice -n N`), another uid (`su UID`)
//! — and `execve` of the first of `$PATH`'s directories (default `/bin`) that has the
//! program. A program that cannot start says why in one line and exits with 127, as a
//! POSIX shell's child does.

use alloc::ffi::CString;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use rt::process::{self, Which};

/// What the child sets up before it runs the program.
#[derive(Debug, Default, Clone)]
pub struct Setup {
    pub output: Option<String>,
    /// Started with `&`: it ignores Ctrl-C's SIGINT and Ctrl-\'s SIGQUIT, as POSIX has a
    /// shell without job control start a background command, and Ctrl-Z's SIGTSTP, so that
    /// the keys reach only the foreground one.
    pub background: bool,
    pub nice: Option<i32>,
    pub uid: Option<u32>,
}

/// Where `name` may be: itself if it has a `/`, else each directory of `$PATH`.
fn candidates(name: &str) -> Vec<String> {
    if name.contains('/') {
        return alloc::vec![name.into()];
    }
    rt::env("PATH")
        .unwrap_or("/bin")
        .split(':')
        .filter(|dir| !dir.is_empty())
        .map(|dir| format!("{dir}/{name}"))
        .collect()
}

/// Starts `words` (program and arguments) with `setup`: the child's pid.
pub fn start(words: &[String], setup: &Setup) -> Result<i32, String> {
    // Everything the child needs is built before the fork: the child only makes calls.
    let strings: Vec<CString> = words
        .iter()
        .map(|w| CString::new(w.as_str()).map_err(|_| format!("{w:?}: a NUL in a word")))
        .collect::<Result<_, _>>()?;
    let mut argv: Vec<*const u8> = strings.iter().map(|s| s.as_ptr().cast()).collect();
    argv.push(core::ptr::null());
    let paths: Vec<CString> = candidates(&words[0])
        .into_iter()
        .filter_map(|p| CString::new(p).ok())
        .collect();
    match process::fork() {
        Ok(0) => child(&words[0], &paths, &argv, setup),
        Ok(pid) => Ok(pid),
        Err(e) => Err(format!("{}: cannot fork: {e}", words[0])),
    }
}

/// The child's side of [`start`]: never returns.
fn child(name: &str, paths: &[CString], argv: &[*const u8], setup: &Setup) -> ! {
    for signal in process::TERMINAL_KEYS {
        if setup.background {
            let _ = process::ignore_signal(signal);
        } else {
            let _ = process::default_signal(signal);
        }
    }
    if let Some(file) = &setup.output {
        match rt::fs::create(file) {
            Ok(fd) => {
                let _ = rt::io::dup2(fd, rt::io::STDOUT);
                let _ = rt::io::close(fd);
            }
            Err(e) => fail(&format!("{file}: {e}")),
        }
    }
    if let Some(nice) = setup.nice
        && let Err(e) = process::setpriority(Which::Process, 0, nice)
    {
        fail(&format!("nice: {e}"));
    }
    if let Some(uid) = setup.uid
        && let Err(e) = process::setuid(uid)
    {
        fail(&format!("su: {e}"));
    }
    let envp = rt::environ();
    let mut why = rt::Errno::ENOENT;
    for path in paths {
        // SAFETY: NUL-terminated strings in null-terminated arrays, alive across the call.
        let e = unsafe { process::execve(path.as_ptr().cast(), argv.as_ptr(), envp) };
        if e != rt::Errno::ENOENT {
            why = e;
        }
    }
    if why == rt::Errno::ENOENT {
        fail(&format!("{name}: command not found (try help)"));
    }
    fail(&format!("{name}: cannot run: {why}"))
}

fn fail(line: &str) -> ! {
    rt::eprintln!("sh: {line}");
    process::exit(127)
}
