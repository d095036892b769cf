//! The workload programs' command lines: `-t SECONDS` (how long to run, default 10) or
//! `--until NS` (run until the monotonic clock reads NS: the end of a lab scenario's window,
//! shared by every program it starts), `--seed N` (the phase generator's seed, as the
//! kernel's `seed=` option), `--name NAME` (the probe's or task's name in the `RESULT`
//! lines; a lab scenario numbers its tasks `hog1`, `hog2`), `--io` (makej's jobs sleep on
//! I/O), then the program's own words. A bad line is one error line and status 2.

use alloc::string::String;
use alloc::vec::Vec;

/// A parsed command line.
pub struct Options {
    /// The program's name, for its error lines.
    pub program: &'static str,
    /// How long the program runs, in ns.
    pub run_ns: u64,
    /// `--until`: when it ends, on the monotonic clock (then `run_ns` is unused).
    pub until_ns: Option<u64>,
    pub seed: u64,
    /// `--name`: the probe's or task's name, if not the program's own.
    pub name: Option<&'static str>,
    /// `-p`: lat3's first loop number.
    pub first_p: Option<u64>,
    pub io: bool,
    /// The words that are not options.
    pub words: Vec<&'static str>,
}

/// How long a program runs without `-t`.
pub const DEFAULT_SECONDS: u64 = 10;
/// The longest `-t` (a day): longer runs are surely a typo.
pub const MAX_SECONDS: u64 = 86_400;

impl Options {
    /// Reads `args`; on a bad line prints `PROGRAM: WHY` and the usage, and exits with 2.
    pub fn parse(args: &rt::Args, usage: &str) -> Options {
        match Self::try_parse(args) {
            Ok(options) => options,
            Err(why) => {
                let program = args.str(0).unwrap_or("?");
                let name = program.rsplit('/').next().unwrap_or(program);
                rt::eprintln!("{name}: {why}\nusage: {name} {usage}");
                rt::process::exit(2)
            }
        }
    }

    fn try_parse(args: &rt::Args) -> Result<Options, String> {
        let path = args.str(0).unwrap_or("?");
        let mut options = Options {
            program: path.rsplit('/').next().unwrap_or(path),
            run_ns: DEFAULT_SECONDS * crate::SECOND,
            until_ns: None,
            seed: sched::programs::DEFAULT_SEED,
            name: None,
            first_p: None,
            io: false,
            words: Vec::new(),
        };
        let mut i = 1;
        while let Some(word) = args.str(i) {
            i += 1;
            let mut value = |name: &str| -> Result<u64, String> {
                let text = args
                    .str(i)
                    .ok_or_else(|| alloc::format!("{name} needs a value"))?;
                i += 1;
                text.parse()
                    .map_err(|_| alloc::format!("{name} wants a whole number, not {text:?}"))
            };
            match word {
                "-t" => {
                    let seconds = value("-t")?;
                    if !(1..=MAX_SECONDS).contains(&seconds) {
                        return Err(alloc::format!("-t is 1 to {MAX_SECONDS} seconds"));
                    }
                    options.run_ns = seconds * crate::SECOND;
                }
                "-p" => {
                    let p = value("-p")?;
                    if !(1..=1_000).contains(&p) {
                        return Err("-p is 1 to 1000".into());
                    }
                    options.first_p = Some(p);
                }
                "--until" => options.until_ns = Some(value("--until")?),
                "--seed" => options.seed = value("--seed")?,
                "--name" => {
                    let name = args.str(i).ok_or("--name needs a value")?;
                    i += 1;
                    if name.is_empty()
                        || !name
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                    {
                        return Err(alloc::format!(
                            "--name is letters, digits, - and _ (got {name:?})"
                        ));
                    }
                    options.name = Some(name);
                }
                "--io" => options.io = true,
                _ if word.starts_with('-') && word.len() > 1 => {
                    return Err(alloc::format!("unknown option {word:?}"));
                }
                _ => options.words.push(word),
            }
        }
        Ok(options)
    }

    /// When the program ends on the monotonic clock: `--until`, else `-t` from now.
    pub fn end_ns(&self) -> u64 {
        self.until_ns
            .unwrap_or_else(|| rt::time::now_ns() + self.run_ns)
    }

    /// lat3's first loop number: `-p`, else 1.
    pub fn first_p(&self) -> usize {
        self.first_p.unwrap_or(1) as usize
    }

    /// The probe's or task's name: `--name`, else `default`.
    pub fn name_or(&self, default: &'static str) -> &'static str {
        self.name.unwrap_or(default)
    }

    /// Word `i` as a duration within `range` (ns): a number with a unit (`10ms`, `500us`,
    /// `1s`, `20000ns`), or a bare number in `unit` (the seed program's own: lat3's µs,
    /// wakeup-latency's ms). Else the error line and status 2.
    pub fn duration(
        &self,
        i: usize,
        what: &str,
        unit: Unit,
        range: core::ops::RangeInclusive<u64>,
    ) -> u64 {
        let word = self.words.get(i).copied().unwrap_or("");
        let parsed = parse_duration(word, unit).filter(|ns| range.contains(ns));
        match parsed {
            Some(ns) => ns,
            None => {
                rt::eprintln!(
                    "{}: {what} must be a duration from {} to {} µs, e.g. 10ms, 500us or a bare \
                     number of {} (got {word:?})",
                    self.program,
                    range.start() / 1_000,
                    range.end() / 1_000,
                    unit.name()
                );
                rt::process::exit(2)
            }
        }
    }

    /// Word `i` as a number within `range`, or the error line and status 2.
    pub fn number(&self, i: usize, what: &str, range: core::ops::RangeInclusive<u64>) -> u64 {
        let parsed = self.words.get(i).and_then(|w| w.parse().ok());
        match parsed.filter(|n| range.contains(n)) {
            Some(n) => n,
            None => {
                rt::eprintln!(
                    "{}: {what} must be a whole number from {} to {} (got {:?})",
                    self.program,
                    range.start(),
                    range.end(),
                    self.words.get(i).copied().unwrap_or("nothing")
                );
                rt::process::exit(2)
            }
        }
    }
}

/// The unit of a bare number in a duration.
#[derive(Clone, Copy)]
pub enum Unit {
    Microseconds,
    Milliseconds,
}

impl Unit {
    fn name(self) -> &'static str {
        match self {
            Unit::Microseconds => "µs",
            Unit::Milliseconds => "ms",
        }
    }

    fn ns(self) -> u64 {
        match self {
            Unit::Microseconds => 1_000,
            Unit::Milliseconds => 1_000_000,
        }
    }
}

/// `10ms`, `500us`, `1s`, `20000ns`, or a bare number of `unit`, in ns; `None` if malformed
/// or too large for a u64.
pub fn parse_duration(word: &str, unit: Unit) -> Option<u64> {
    let digits = word
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(word.len());
    let (number, suffix) = word.split_at(digits);
    let scale = match suffix {
        "" => unit.ns(),
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return None,
    };
    number.parse::<u64>().ok()?.checked_mul(scale)
}
