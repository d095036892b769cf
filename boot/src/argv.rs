//! The program's argv, from the host's shell to the kernel's command line, kept as given.
//!
//! The words after ` -- ` reach the kernel through one string (fw_cfg's
//! `opt/cfslab/cmdline`), which the kernel splits at whitespace except inside double
//! quotes, as Linux's `next_arg` does (`bootopts::program::words`). So a word with spaces,
//! such as the script of `sh -c 'echo a; echo b'`, goes in double quotes, with `\"` for a
//! quote inside it. The value of
//! `--opts` (`make run OPTS="..."`) is split as a POSIX shell would split it, so that
//! `OPTS="-- /bin/sh -c 'echo a; echo b'"` means what it says.

/// Splits `text` into words as a POSIX shell does: at blanks, except inside single quotes
/// (taken literally) or double quotes (where a backslash escapes `"` and `\`); outside
/// quotes, a backslash escapes the next character.
pub fn shell_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err(format!("unclosed single quote in {text:?}")),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => w.push(c),
                            Some(c) => w.extend(['\\', c]),
                            None => return Err(format!("unclosed double quote in {text:?}")),
                        },
                        Some(c) => w.push(c),
                        None => return Err(format!("unclosed double quote in {text:?}")),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// The kernel's command line for `words` (boot options, then ` -- ` and the argv): a word
/// that is empty or holds whitespace, a quote or a backslash goes in double quotes
/// (`bootopts::program::quoted`).
pub fn command_line(words: &[String]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| bootopts::program::quoted(w)).collect();
    quoted.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a shell user writes in `OPTS` reaches the kernel as the same argv.
    #[test]
    fn an_argument_with_spaces_arrives_whole() {
        let words = shell_words("hz=100 -- /bin/sh -c 'echo a;  echo b' \"x y\" a\\ b ''").unwrap();
        assert_eq!(
            words,
            [
                "hz=100",
                "--",
                "/bin/sh",
                "-c",
                "echo a;  echo b",
                "x y",
                "a b",
                ""
            ]
        );
        let line = command_line(&words);
        assert_eq!(
            line,
            "hz=100 -- /bin/sh -c \"echo a;  echo b\" \"x y\" \"a b\" \"\""
        );
        let (_, argv) = bootopts::program::split(&line).unwrap();
        assert_eq!(argv, words[2..]);
    }

    /// Quotes and backslashes in an argument reach the program too.
    #[test]
    fn quotes_inside_an_argument_arrive() {
        let words: Vec<String> = ["--", "/bin/sh", "-c", "echo \"a b\" \\"]
            .map(String::from)
            .to_vec();
        let (_, argv) = bootopts::program::split(&command_line(&words)).unwrap();
        assert_eq!(argv, words[1..]);
    }

    #[test]
    fn an_unclosed_quote_is_refused() {
        assert!(shell_words("-- /bin/sh -c 'echo").is_err());
        assert!(shell_words("-- /bin/sh -c \"echo").is_err());
    }
}
