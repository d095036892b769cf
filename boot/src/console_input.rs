//! Typing at cfslab's console: `run --input FILE` feeds a script to the serial port as a
//! person would type it, and `run --interactive` (`make shell`) hands the terminal over.
//!
//! A script is lines of text, each typed with its Enter once the shell has printed its
//! prompt (`# ` or `$ `) after the previous one — typed ahead of the prompt, a line would
//! interleave with the output it waits for. Some lines are keys instead: `^C` (Ctrl-C),
//! `^Z` (Ctrl-Z) and `^\` (Ctrl-\), each typed once the output has been quiet for a
//! second, so that the foreground command is running; `^D` (Ctrl-D) and `^U` (Ctrl-U),
//! each at the prompt; inside a line, `^H` is
//! Backspace and `^U` Ctrl-U, typed where they stand. A line `[after TEXT] KEYS` types KEYS
//! and Enter, not at a prompt but once the output since the last key shows TEXT: how a
//! script answers a program that is not the shell (`[after frame 3] q` ends `top` at its
//! third screen). The echo comes from
//! cfslab's terminal (`kernel/src/user/tty/`), so the output reads like the session.

use std::io::Write;
use std::process::ChildStdin;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the console's input is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ConsoleInput {
    /// None: QEMU's stdin is closed.
    #[default]
    Nothing,
    /// A script (`--input FILE`), typed line by line.
    Script(Vec<Key>),
    /// This terminal (`--interactive`).
    Terminal,
}

/// One step of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// Bytes typed at the prompt (a line and its Enter, or Ctrl-D, Ctrl-U).
    AtPrompt(Vec<u8>),
    /// A key for the foreground job — Ctrl-C, Ctrl-Z or Ctrl-\ — typed once the output has
    /// been quiet.
    Interrupt(u8),
    /// Bytes typed once the output shows the text.
    After { text: Vec<u8>, bytes: Vec<u8> },
}

impl Key {
    /// Whether the shell answers this key with a new prompt: a line ended by Enter, Ctrl-D
    /// and Ctrl-C do; Ctrl-U alone does not, so the prompt it was typed at still counts for
    /// the next key.
    fn brings_a_prompt(&self) -> bool {
        match self {
            Key::AtPrompt(bytes) => bytes != &[0x15],
            Key::Interrupt(_) | Key::After { .. } => true,
        }
    }
}

/// How long the output must be quiet before `^C` is typed.
const QUIET: Duration = Duration::from_secs(1);

/// Reads a script.
pub fn parse(text: &str) -> Vec<Key> {
    text.lines()
        .map(|line| match line {
            "^C" => Key::Interrupt(0x03),
            "^Z" => Key::Interrupt(0x1a),
            "^\\" => Key::Interrupt(0x1c),
            "^D" => Key::AtPrompt(vec![0x04]),
            "^U" => Key::AtPrompt(vec![0x15]),
            _ if line.starts_with("[after ") && line.contains(']') => {
                let (text, keys) = line["[after ".len()..].split_once(']').unwrap_or_default();
                let mut bytes = keys.trim_start().as_bytes().to_vec();
                bytes.push(b'\r');
                Key::After {
                    text: text.as_bytes().to_vec(),
                    bytes,
                }
            }
            _ => {
                let mut bytes = line
                    .replace("^H", "\u{8}")
                    .replace("^U", "\u{15}")
                    .into_bytes();
                bytes.push(b'\r');
                Key::AtPrompt(bytes)
            }
        })
        .collect()
}

/// Whether `output` (what the kernel printed since the last key) holds the shell's prompt
/// at the start of a line: usually its very end, but a background job may print after it.
/// A prompt is `# ` or `$ `, alone (cfslab's shell) or after a word without spaces
/// (busybox ash's `/ # `, the working directory).
fn at_prompt(output: &[u8]) -> bool {
    let prompt_at = |i: usize| {
        if i > 0 && output[i - 1] != b'\n' {
            return false;
        }
        let rest = &output[i..];
        let word = rest
            .iter()
            .take_while(|&&b| b != b' ' && b != b'\n')
            .count();
        matches!(rest, [b'#' | b'$', b' ', ..])
            || (word > 0 && matches!(&rest[word..], [b' ', b'#' | b'$', b' ', ..]))
    };
    (0..output.len()).any(prompt_at)
}

/// Types `keys` into `stdin` (QEMU's, the serial port's input) in a thread, pacing them by
/// `output` (everything the kernel printed so far, appended by the output's reader).
pub fn type_in(
    mut stdin: ChildStdin,
    keys: Vec<Key>,
    output: Arc<Mutex<Vec<u8>>>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut typed_at = 0;
        for key in keys {
            let (mut seen, mut changed) = (0, Instant::now());
            loop {
                std::thread::sleep(Duration::from_millis(20));
                let out = output.lock().unwrap_or_else(|e| e.into_inner());
                if out.len() != seen {
                    (seen, changed) = (out.len(), Instant::now());
                }
                let ready = match &key {
                    Key::AtPrompt(_) => at_prompt(&out[typed_at.min(out.len())..]),
                    Key::Interrupt(_) => out.len() > typed_at && changed.elapsed() >= QUIET,
                    Key::After { text, .. } => out[typed_at.min(out.len())..]
                        .windows(text.len().max(1))
                        .any(|w| w == text.as_slice()),
                };
                if ready {
                    if key.brings_a_prompt() {
                        typed_at = out.len();
                    }
                    break;
                }
            }
            let bytes = match &key {
                Key::AtPrompt(bytes) | Key::After { bytes, .. } => bytes.clone(),
                Key::Interrupt(key) => vec![*key],
            };
            if stdin
                .write_all(&bytes)
                .and_then(|()| stdin.flush())
                .is_err()
            {
                return;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_is_lines_typed_at_the_prompt_and_control_keys() {
        let keys = parse("hog -t 1 &\n^C\nab^H\nx^Uy\n[after frame 2] q\n^D\n^Z\n^\\\n");
        assert_eq!(
            keys,
            [
                Key::AtPrompt(b"hog -t 1 &\r".to_vec()),
                Key::Interrupt(3),
                Key::AtPrompt(b"ab\x08\r".to_vec()),
                Key::AtPrompt(b"x\x15y\r".to_vec()),
                Key::After {
                    text: b"frame 2".to_vec(),
                    bytes: b"q\r".to_vec()
                },
                Key::AtPrompt(vec![4]),
                Key::Interrupt(0x1a),
                Key::Interrupt(0x1c),
            ]
        );
        assert!(at_prompt(b"...\r\n# "));
        assert!(
            at_prompt(b"hi\r\n# RESULT {}\r\n"),
            "a job's line after the prompt"
        );
        assert!(at_prompt(b"$ ") && !at_prompt(b"echo a # b\r\n") && !at_prompt(b""));
        assert!(at_prompt(b"\n/proc # \x1b[6n"), "busybox ash's prompt");
    }
}
