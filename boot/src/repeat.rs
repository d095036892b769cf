//! `run --repeat K`: the same boot K times, and the check that every run printed the same
//! bytes — cfslab's promise that a run's figures are exact, on one CPU or several (the
//! multi-CPU half of it rests on the kernel's anchor, `kernel/src/time/anchor.rs`).

use crate::qemu::{self, Machine};
use crate::serial_output::Echo;
use crate::status::Status;
use std::time::Duration;

/// Where two runs' outputs first differ: the line's number (from 1) and each run's line
/// (`None` where that run's output had ended).
#[derive(Debug, PartialEq)]
pub struct Difference<'a> {
    pub line: usize,
    pub first: Option<&'a str>,
    pub other: Option<&'a str>,
}

/// The first line where `other` differs from `first`, if any.
pub fn first_difference<'a>(first: &'a str, other: &'a str) -> Option<Difference<'a>> {
    let (mut a, mut b) = (first.lines(), other.lines());
    for line in 1.. {
        match (a.next(), b.next()) {
            (None, None) => return None,
            (x, y) if x == y => {}
            (first, other) => return Some(Difference { line, first, other }),
        }
    }
    unreachable!()
}

/// Boots `machine` `times - 1` more times, silently, and compares each run's output with
/// the first run's (`first`); says what it found on stderr. `Some(Status::NotRepeated)` if
/// a run differed, `None` if every one printed the same bytes.
pub fn check(
    machine: &Machine,
    limit: Option<Duration>,
    first: &str,
    times: u32,
) -> Result<Option<Status>, String> {
    for run in 2..=times {
        let (_, _, output) = qemu::run(machine, limit, Echo::Nothing)?;
        if let Some(d) = first_difference(first, &output) {
            let shown =
                |l: Option<&str>| l.map_or("(its output had ended)".into(), |l| l.to_string());
            eprintln!(
                "boot: run {run} of {times} differs from run 1 at line {}:\n  run 1:   {}\n  run {run}:   {}",
                d.line,
                shown(d.first),
                shown(d.other)
            );
            return Ok(Some(Status::NotRepeated));
        }
    }
    eprintln!(
        "boot: {times} runs printed the same {} lines, byte for byte",
        first.lines().count()
    );
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_differing_line_is_found_and_an_ending_counts() {
        assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
        assert_eq!(
            first_difference("a\nb\nc\n", "a\nx\nc\n"),
            Some(Difference {
                line: 2,
                first: Some("b"),
                other: Some("x")
            })
        );
        assert_eq!(
            first_difference("a\nb\n", "a\n"),
            Some(Difference {
                line: 2,
                first: Some("b"),
                other: None
            })
        );
        assert_eq!(
            first_difference("a\n", "a\nmore\n"),
            Some(Difference {
                line: 2,
                first: None,
                other: Some("more")
            })
        );
    }
}
