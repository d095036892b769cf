//! The kernel's serial output as the boot tool takes it: collected whole for the caller,
//! copied to our stdout as it arrives (all of it, nothing, or all but the trace, which
//! `run --trace FILE` writes to a file instead), and handed to a console script, which
//! types its next line at the shell's prompt.

use std::io::{Read, Write};
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What the forwarding thread saw: when the first output arrived (the kernel's banner is
/// its first line) and everything the kernel printed.
pub struct Output {
    pub first_output: Option<Instant>,
    pub text: String,
}

/// What of the kernel's output to copy to our stdout as it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Echo {
    /// Nothing (the lab reads the output afterwards).
    Nothing,
    /// Everything.
    All,
    /// Everything but the trace between its markers, which goes to a file instead
    /// (`run --trace FILE`): one line stands in for it.
    AllButTrace,
}

/// Holds back the lines of a trace (from `--- TRACE BEGIN ---` to `--- TRACE END ---`),
/// fed the output in arbitrary chunks.
#[derive(Default)]
pub struct TraceFilter {
    line: Vec<u8>,
    in_trace: bool,
    held: usize,
}

impl TraceFilter {
    /// The bytes of `chunk` to show, complete lines only (the rest waits for its end).
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<u8> {
        let mut shown = Vec::new();
        for &b in chunk {
            self.line.push(b);
            if b != b'\n' {
                continue;
            }
            let line = core::mem::take(&mut self.line);
            let text = String::from_utf8_lossy(&line);
            match text.trim_end() {
                "--- TRACE BEGIN ---" => (self.in_trace, self.held) = (true, 0),
                "--- TRACE END ---" if self.in_trace => {
                    self.in_trace = false;
                    let note = format!(
                        "(trace: {} lines, written to the --trace file)\n",
                        self.held
                    );
                    shown.extend_from_slice(note.as_bytes());
                }
                _ if self.in_trace => self.held += 1,
                _ => shown.extend_from_slice(&line),
            }
        }
        shown
    }
}

/// The capacity asked of the pipe from QEMU's console: Linux's default for unprivileged
/// users' `pipe-max-size` (a pipe's default is 64 KiB).
const PIPE_BYTES: i32 = 1 << 20;

/// Asks for a pipe of [`PIPE_BYTES`] (`F_SETPIPE_SZ`; kept as it is if refused). QEMU writes
/// the console without blocking: into a full pipe the UART's byte waits, its transmitter
/// busy, until QEMU's main loop sees room — a wait the guest's polling loop spends in
/// virtual time as long as the host takes to drain the pipe, and a run's figures would
/// follow the host's load. This thread drains the pipe as it fills, but echoes what it
/// reads to a stdout that may itself block (a test harness, a pager).
fn enlarge(pipe: &std::process::ChildStdout) {
    use std::os::fd::AsRawFd;
    // SAFETY: fcntl on a descriptor this process owns (the pipe's read end, open for as long
    // as `pipe` lives) with an integer argument; it changes only the pipe's capacity.
    unsafe {
        libc::fcntl(pipe.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES);
    }
}

/// Collects the child's stdout, copying it to ours as it arrives as `echo` says (and to `tap`,
/// which a console script reads), in a thread.
pub fn forward_output(
    child: &mut Child,
    echo: Echo,
    tap: Option<Arc<Mutex<Vec<u8>>>>,
) -> Option<std::thread::JoinHandle<Output>> {
    let mut from = child.stdout.take()?;
    enlarge(&from);
    Some(std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let mut out = std::io::stdout();
        let mut first_output = None;
        let mut all = Vec::new();
        let mut filter = TraceFilter::default();
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            first_output.get_or_insert_with(Instant::now);
            all.extend_from_slice(&buf[..n]);
            if let Some(tap) = &tap {
                tap.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend_from_slice(&buf[..n]);
            }
            let shown = match echo {
                Echo::Nothing => continue,
                Echo::All => buf[..n].to_vec(),
                Echo::AllButTrace => filter.feed(&buf[..n]),
            };
            let _ = out.write_all(&shown).and_then(|_| out.flush());
        }
        Output {
            first_output,
            text: String::from_utf8_lossy(&all).into_owned(),
        }
    }))
}

/// The ftrace text between the kernel's trace markers (the first trace), with the serial
/// line's CR LF line ends made LF.
pub fn extract_trace(output: &str) -> Option<String> {
    let (_, rest) = output.split_once("--- TRACE BEGIN ---")?;
    let (trace, _) = rest.split_once("--- TRACE END ---")?;
    let mut text: String = trace
        .lines()
        .skip_while(|l| l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    if text.is_empty() {
        text.push('\n');
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pipe_from_the_console_holds_a_megabyte() {
        use std::os::fd::AsRawFd;
        let mut child = std::process::Command::new("true")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("true runs");
        let pipe = child.stdout.take().expect("piped");
        enlarge(&pipe);
        // SAFETY: F_GETPIPE_SZ only reads the capacity of a pipe this test owns.
        let capacity = unsafe { libc::fcntl(pipe.as_raw_fd(), libc::F_GETPIPE_SZ) };
        assert_eq!(capacity, PIPE_BYTES);
        let _ = child.wait();
    }

    #[test]
    fn the_trace_is_held_back_and_summarised() {
        let mut f = TraceFilter::default();
        let mut shown = f.feed(b"banner\n--- TRACE BEG");
        shown.extend(
            f.feed(b"IN ---\n# tracer: nop\n  a-1 [000] d..2\n--- TRACE END ---\r\nafter\n"),
        );
        assert_eq!(
            String::from_utf8(shown).unwrap(),
            "banner\n(trace: 2 lines, written to the --trace file)\nafter\n"
        );
    }

    #[test]
    fn the_trace_is_cut_from_the_output_with_lf_line_ends() {
        let out = "banner\r\n--- TRACE BEGIN ---\r\n# tracer: nop\r\nline\r\n--- TRACE END ---\r\nafter\r\n";
        assert_eq!(extract_trace(out).as_deref(), Some("# tracer: nop\nline\n"));
        assert_eq!(extract_trace("no trace here"), None);
    }
}
