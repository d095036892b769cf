//! The workload programs' command lines: `-t SECONDS` (how long to run, default 10),
//! `--seed N` (the phase generator's seed, as the kernel's `seed=` option), `--io` (makej's
//! jobs sleep on I/O), then the program's own words. A bad line is one error line and
//! status 2.

use alloc::string::String;
use alloc::vec::Vec;

/// A parsed command line.
pub struct Options {
    /// The program's name, for its error lines.
    pub program: &'static str,
    /// How long the program runs, in ns.
    pub run_ns: u64,
    pub seed: u64,
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
            seed: sched::programs::DEFAULT_SEED,
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
                "--seed" => options.seed = value("--seed")?,
                "--io" => options.io = true,
                _ if word.starts_with('-') && word.len() > 1 => {
                    return Err(alloc::format!("unknown option {word:?}"));
                }
                _ => options.words.push(word),
            }
        }
        Ok(options)
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
