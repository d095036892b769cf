//! One command line, as the shell reads it: words split at blanks, `'...'` and `"..."`
//! quoting blanks (no expansion inside either), `;` between commands, `&` after a command
//! for the background (it ends the command too, as in `hog & hog`), and `> FILE` sending the
//! command's output to a file. Anything else a POSIX
//! shell does (pipes, `$`, globs) it does not; a line that needs it gets an error, not a
//! guess.

use alloc::string::String;
use alloc::vec::Vec;

/// One command of a line.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Command {
    pub words: Vec<String>,
    /// `> FILE`: where its output goes.
    pub output: Option<String>,
    /// A trailing `&`.
    pub background: bool,
}

/// The longest line the shell takes (Linux's terminal line discipline keeps 4095 bytes).
pub const MAX_LINE: usize = 4096;

/// A token: a word, or one of the operators.
#[derive(Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Semicolon,
    Ampersand,
    Greater,
}

fn tokens(line: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | '\t' | '\r' => {
                chars.next();
            }
            ';' | '&' | '>' => {
                chars.next();
                out.push(match c {
                    ';' => Token::Semicolon,
                    '&' => Token::Ampersand,
                    _ => Token::Greater,
                });
            }
            '|' | '<' | '$' | '`' | '*' | '?' => {
                return Err(alloc::format!("'{c}' is not supported (see help)"));
            }
            _ => {
                let mut word = String::new();
                while let Some(&c) = chars.peek() {
                    match c {
                        ' ' | '\t' | '\r' | ';' | '&' | '>' => break,
                        '\'' | '"' => {
                            chars.next();
                            let mut closed = false;
                            for q in chars.by_ref() {
                                if q == c {
                                    closed = true;
                                    break;
                                }
                                word.push(q);
                            }
                            if !closed {
                                return Err(alloc::format!("unterminated {c}"));
                            }
                        }
                        _ => {
                            word.push(c);
                            chars.next();
                        }
                    }
                }
                out.push(Token::Word(word));
            }
        }
    }
    Ok(out)
}

/// Parses a line into its commands (none for a blank line or a `#` comment).
pub fn line(line: &str) -> Result<Vec<Command>, String> {
    if line.len() > MAX_LINE {
        return Err(alloc::format!(
            "line too long ({} bytes; at most {MAX_LINE})",
            line.len()
        ));
    }
    if line.trim_start().starts_with('#') {
        return Ok(Vec::new());
    }
    let mut commands = Vec::new();
    let mut current = Command::default();
    let mut tokens = tokens(line)?.into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            Token::Word(w) => current.words.push(w),
            Token::Greater => match tokens.next() {
                Some(Token::Word(file)) if current.output.is_none() => current.output = Some(file),
                Some(Token::Word(_)) => return Err("one '>' per command".into()),
                _ => return Err("'>' needs a file name".into()),
            },
            Token::Ampersand => {
                if current.words.is_empty() {
                    return Err("'&' needs a command before it".into());
                }
                current.background = true;
                commands.push(core::mem::take(&mut current));
            }
            Token::Semicolon => {
                if current.words.is_empty() {
                    return Err("';' needs a command before it".into());
                }
                commands.push(core::mem::take(&mut current));
            }
        }
    }
    if !current.words.is_empty() {
        commands.push(current);
    } else if current.output.is_some() {
        return Err("'>' needs a command before it".into());
    }
    Ok(commands)
}
