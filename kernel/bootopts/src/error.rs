//! A rejected boot option: one line naming the option, what is wrong and what is right,
//! with the bad token echoed safely (escaped, shortened), whatever bytes it held.

use crate::parse::MAX_CMDLINE_BYTES;
use alloc::string::{String, ToString};
use core::fmt::{self, Write};

/// Longest excerpt of a bad token echoed in an error.
const ECHO_MAX_CHARS: usize = 40;

/// A rejected boot option. Its `Display` is the one line the kernel prints before exiting
/// with the "bad options" status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionError {
    /// The key (or the whole token, if it had no valid key), escaped and shortened.
    pub option: String,
    /// What is wrong.
    pub reason: String,
    /// What would be accepted.
    pub valid: String,
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad boot option {}: {} (valid: {})",
            self.option, self.reason, self.valid
        )
    }
}

impl OptionError {
    pub(crate) fn new(option: &str, reason: impl ToString, valid: impl ToString) -> Self {
        OptionError {
            option: echo(option),
            reason: reason.to_string(),
            valid: valid.to_string(),
        }
    }

    /// The command line is longer than [`MAX_CMDLINE_BYTES`].
    pub fn too_long(len: usize) -> Self {
        OptionError::new(
            "cmdline",
            alloc::format!("{len} bytes long"),
            alloc::format!("at most {MAX_CMDLINE_BYTES} bytes"),
        )
    }

    pub(crate) fn not_utf8(at: usize) -> Self {
        OptionError::new(
            "cmdline",
            alloc::format!("not valid UTF-8 (at byte {at})"),
            "space-separated key=value pairs in ASCII",
        )
    }
}

/// `text` made safe for a one-line report: printable ASCII kept, the rest `\u{..}`-escaped,
/// cut to [`ECHO_MAX_CHARS`] characters.
pub(crate) fn echo(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == ECHO_MAX_CHARS {
            out.push_str("...");
            break;
        }
        if c.is_ascii_graphic() {
            out.push(c);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    out
}

pub(crate) fn list(items: impl IntoIterator<Item = impl fmt::Display>) -> String {
    let mut out = String::new();
    for (i, item) in items.into_iter().enumerate() {
        let _ = write!(out, "{}{item}", if i == 0 { "" } else { ", " });
    }
    out
}
