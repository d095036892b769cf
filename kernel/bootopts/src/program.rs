//! The program to run instead of the scenarios: everything after ` -- ` on the command line
//! is its argv, as Linux passes the words after `--` to init
//! (`make run OPTS="policy=eevdf -- /bin/hello a b"`).

use crate::OptionError;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// The word that ends the options and starts the program's argv; errors about the argv name it.
pub const SEPARATOR: &str = "--";

/// Most arguments a program may be given (Linux's init gets at most MAX_INIT_ARGS = 32).
pub const MAX_ARGS: usize = 32;

/// The words of a command line: split at whitespace, except that a double-quoted part
/// keeps its spaces, and the quotes go. This is how Linux's `next_arg` (lib/cmdline.c) lets
/// `init="/bin/sh -c ..."`-style values through; here it is what keeps an argument such as
/// `sh -c "echo a; echo b"` one word. Inside double quotes, `\"` and `\\` are a quote and
/// a backslash (Linux cannot pass a quote at all), so that any argv can be written.
pub fn words(cmdline: &str) -> Result<Vec<String>, OptionError> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    let mut chars = cmdline.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                word.get_or_insert_with(String::new);
            }
            '\\' if quoted && matches!(chars.peek(), Some('"' | '\\')) => {
                word.get_or_insert_with(String::new).extend(chars.next());
            }
            c if c.is_ascii_whitespace() && !quoted => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quoted {
        return Err(OptionError::new(
            "cmdline",
            "a double quote is not closed",
            "\"WORDS WITH SPACES\"",
        ));
    }
    words.extend(word);
    Ok(words)
}

/// A word as [`words`] reads it back: in double quotes (with `\"` and `\\` inside) if it
/// is empty or has whitespace, a quote or a backslash.
pub fn quoted(word: &str) -> String {
    let special = |c: char| c.is_ascii_whitespace() || c == '"' || c == '\\';
    if !word.is_empty() && !word.contains(special) {
        return word.to_string();
    }
    let mut out = String::from("\"");
    for c in word.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Splits a command line into its options and the program's argv (empty if no `--`).
pub fn split(cmdline: &str) -> Result<(String, Vec<String>), OptionError> {
    let all = words(cmdline)?;
    let mut tokens = all.iter();
    let options: Vec<&str> = tokens
        .by_ref()
        .map(String::as_str)
        .take_while(|t| *t != SEPARATOR)
        .collect();
    let argv: Vec<String> = tokens.cloned().collect();
    let dashes = all.iter().any(|t| t == SEPARATOR);
    if dashes && argv.is_empty() {
        return Err(OptionError::new(
            SEPARATOR,
            "no program after '--'",
            "-- /bin/NAME [ARGS...]",
        ));
    }
    if let Some(path) = argv.first()
        && !path.starts_with('/')
    {
        return Err(OptionError::new(
            SEPARATOR,
            alloc::format!(
                "the program '{}' is not an absolute path",
                crate::error::echo(path)
            ),
            "-- /bin/NAME [ARGS...]",
        ));
    }
    if argv.len() > MAX_ARGS {
        return Err(OptionError::new(
            SEPARATOR,
            alloc::format!("{} arguments", argv.len()),
            alloc::format!("at most {MAX_ARGS}"),
        ));
    }
    Ok((options.join(" "), argv))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_after_dashes_are_the_argv() {
        let (options, argv) = split("policy=eevdf -- /bin/hello a b").unwrap();
        assert_eq!(options, "policy=eevdf");
        assert_eq!(argv, ["/bin/hello", "a", "b"]);
        let (options, argv) = split("-- /bin/hello").unwrap();
        assert_eq!((options.as_str(), argv.len()), ("", 1));
        assert!(split("hz=250").unwrap().1.is_empty());
        // A second `--` is an argument like any other.
        assert_eq!(split("-- /bin/x -- y").unwrap().1, ["/bin/x", "--", "y"]);
    }

    #[test]
    fn a_missing_or_relative_program_is_refused() {
        assert!(split("hz=250 --").is_err());
        assert!(split("-- hello").is_err());
        let many = alloc::format!("-- /bin/x{}", " a".repeat(MAX_ARGS));
        assert!(split(&many).is_err());
    }

    /// A double-quoted argument keeps its spaces (`sh -c "a; b"`), and reads back as it was
    /// written; an unclosed quote is an error, not a silently different argv.
    #[test]
    fn double_quotes_keep_an_argument_whole() {
        let line = "hz=100 -- /bin/sh -c \"echo a;  echo \\\"b\\\\\" \"\" x\\y";
        let (options, argv) = split(line).unwrap();
        assert_eq!(options, "hz=100");
        assert_eq!(argv, ["/bin/sh", "-c", "echo a;  echo \"b\\", "", "x\\y"]);
        let again: Vec<String> = argv.iter().map(|w| quoted(w)).collect();
        assert_eq!(
            split(&alloc::format!("-- {}", again.join(" "))).unwrap().1,
            argv
        );
        assert!(split("-- /bin/sh -c \"echo").is_err());
    }

    /// Found by the fuzzer: the relative path was echoed raw, control characters and all.
    #[test]
    fn a_relative_program_is_echoed_escaped() {
        let line = split("-- \u{e}x").unwrap_err().to_string();
        assert!(line.contains("'\\u{e}x'"), "{line}");
        assert!(line.starts_with("bad boot option --: "), "{line}");
    }
}
