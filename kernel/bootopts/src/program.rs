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

/// Splits a command line into its options and the program's argv (empty if no `--`).
pub fn split(cmdline: &str) -> Result<(String, Vec<String>), OptionError> {
    let mut tokens = cmdline.split_ascii_whitespace();
    let options: Vec<&str> = tokens.by_ref().take_while(|t| *t != SEPARATOR).collect();
    let argv: Vec<String> = tokens.map(ToString::to_string).collect();
    let dashes = cmdline.split_ascii_whitespace().any(|t| t == SEPARATOR);
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

    /// Found by the fuzzer: the relative path was echoed raw, control characters and all.
    #[test]
    fn a_relative_program_is_echoed_escaped() {
        let line = split("-- \u{e}x").unwrap_err().to_string();
        assert!(line.contains("'\\u{e}x'"), "{line}");
        assert!(line.starts_with("bad boot option --: "), "{line}");
    }
}
