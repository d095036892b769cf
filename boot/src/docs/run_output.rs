//! What `make run` prints, as the documents show it: `boot docs run` boots the kernel as
//! `make run` does (the optimised kernel, default options, `-icount shift=0`), keeps the
//! whole console output in `docs/data/make-run.txt`, and renders two excerpts of it — the
//! README's short one (`run:short`) and docs/experiments.md's longer one (`run`), cut where
//! marked `...` and with long `RESULT` lines abbreviated. The cuts are rules, not line
//! numbers, so a new run's output renders the same way.

use crate::status::Status;
use std::time::Duration;

/// Where the output is kept, relative to the workspace root.
pub const DATA: &str = "docs/data/make-run.txt";

/// Boots the kernel as `make run` does and returns everything it printed.
pub fn generate() -> Result<String, String> {
    let kernel = crate::build::build_kernel(crate::build::Profile::Release)?;
    let image = crate::image::build_image(&kernel)?;
    let mut machine = crate::qemu::Machine::new(image);
    machine.initramfs = Some(crate::initramfs::build(&[])?);
    let timeout = crate::timeout::derived("", machine.icount_shift);
    eprintln!("docs: make run's boot (about a minute and a half)");
    let (status, _, output) = crate::qemu::run(
        &machine,
        Some(Duration::from_secs(timeout)),
        crate::qemu::Echo::All,
    )?;
    if status != Status::Success {
        return Err(format!("make run's boot failed ({status})"));
    }
    Ok(output
        .lines()
        .map(|l| format!("{}\n", l.trim_end_matches('\r')))
        .collect())
}

const CUT: &str = "...";

/// The longer excerpt (docs/experiments.md).
pub fn render_full(data: &str) -> Result<String, String> {
    Ok(fenced(&excerpt(data, false)?))
}

/// The README's short excerpt.
pub fn render_short(data: &str) -> Result<String, String> {
    Ok(fenced(&excerpt(data, true)?))
}

fn fenced(lines: &[String]) -> String {
    let mut out = String::from("\n```text\n");
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("```\n");
    out
}

fn missing(what: &str) -> String {
    format!("{DATA} has no {what}: not the output of make run")
}

/// The excerpt: the boot's lines, the first scenario (its header, its first two progress
/// reports, its closing figures), one line of seed 002's lat3 and seed 003's closing lines.
fn excerpt(data: &str, short: bool) -> Result<Vec<String>, String> {
    let lines: Vec<&str> = data.lines().collect();
    let mut out: Vec<String> = Vec::new();
    // The boot: from the banner to the self-check's RESULT (short: to the `time:` line).
    let banner = lines
        .iter()
        .position(|l| l.starts_with("cfslab "))
        .ok_or_else(|| missing("banner"))?;
    let selfcheck = lines[banner..]
        .iter()
        .position(|l| l.starts_with(r#"RESULT {"kind":"selfcheck""#))
        .ok_or_else(|| missing("self-check"))?
        + banner;
    let boot_end = if short {
        lines[banner..selfcheck]
            .iter()
            .position(|l| l.starts_with("time: "))
            .ok_or_else(|| missing("time: line"))?
            + banner
    } else {
        selfcheck
    };
    out.extend(lines[banner..=boot_end].iter().map(|l| abbreviate(l)));
    if short {
        out.push(CUT.into());
    }
    // The first scenario, named by the first header line after the self-check.
    let name = lines[selfcheck..]
        .iter()
        .find_map(|l| l.split_once(": run=").map(|(n, _)| n))
        .ok_or_else(|| missing("scenario header"))?;
    let prefix = format!("{name}: ");
    let result_of = format!(r#""scenario":"{name}""#);
    let ours =
        |l: &&str| l.starts_with(&prefix) || (l.starts_with("RESULT {") && l.contains(&result_of));
    let scenario: Vec<&str> = lines[selfcheck + 1..]
        .iter()
        .copied()
        .filter(ours)
        .collect();
    let progress = format!("{prefix}progress ");
    let first_progress = scenario
        .iter()
        .position(|l| l.starts_with(&progress))
        .ok_or_else(|| missing("progress line"))?;
    let header = &scenario[..first_progress];
    if short {
        out.extend(header.iter().take(2).map(|l| l.to_string()));
    } else {
        out.extend(header.iter().map(|l| l.to_string()));
    }
    // Its first progress reports, each with the line that follows it (the seed's own).
    let reports = if short { 1 } else { 2 };
    let mut at = first_progress;
    for _ in 0..reports {
        let Some(i) = scenario[at..].iter().position(|l| l.starts_with(&progress)) else {
            break;
        };
        out.extend(
            scenario[at + i..(at + i + 2).min(scenario.len())]
                .iter()
                .map(|l| l.to_string()),
        );
        at += i + 2;
    }
    out.push(CUT.into());
    // Its closing figures: from the cyclictest line to the end of its block.
    let cyclictest = format!("{prefix}T: ");
    let start = lines
        .iter()
        .position(|l| l.starts_with(&cyclictest))
        .ok_or_else(|| missing("cyclictest line"))?;
    let closing: Vec<&str> = lines[start..].iter().copied().take_while(ours).collect();
    if short {
        out.push(closing[0].to_string());
        out.extend(
            closing
                .iter()
                .filter(|l| l.starts_with(r#"RESULT {"kind":"cpu""#))
                .map(|l| l.to_string()),
        );
    } else {
        out.extend(closing.iter().map(|l| abbreviate(l)));
    }
    out.push(CUT.into());
    if !short {
        // Seed 002's lat3: what its lines mean, and one of them.
        let legend = lines
            .iter()
            .find(|l| l.contains(": lat3 lines ("))
            .ok_or_else(|| missing("lat3 legend"))?;
        let lat3 = legend.split_once(": ").map(|(n, _)| n).unwrap_or_default();
        let sample = lines
            .iter()
            .find(|l| l.starts_with(&format!("{lat3}: 2: ")))
            .ok_or_else(|| missing("lat3 line"))?;
        out.extend([
            legend.to_string(),
            CUT.into(),
            sample.to_string(),
            CUT.into(),
        ]);
    }
    // Seed 003's three closing lines.
    for what in ["maximum latency", "average latency", "missed timer events"] {
        let line = lines
            .iter()
            .find(|l| l.starts_with(&format!("seed003: {what}: ")))
            .ok_or_else(|| missing(&format!("seed003 {what} line")))?;
        out.push(line.to_string());
    }
    out.push(CUT.into());
    Ok(out)
}

/// The top-level `"key":value` fields of a one-line JSON object.
fn fields(object: &str) -> Vec<&str> {
    let inner = object
        .trim()
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .unwrap_or("");
    let (mut out, mut depth, mut quoted, mut escaped, mut from) =
        (Vec::new(), 0i32, false, false, 0);
    for (i, c) in inner.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '[' | '{' if !quoted => depth += 1,
            ']' | '}' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                out.push(&inner[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    if from < inner.len() {
        out.push(&inner[from..]);
    }
    out
}

/// A `RESULT` line as the excerpt shows it: the self-check's name only; a latency summary
/// up to its minimum, then its maximum and missed count; a samples line without its
/// samples. Any other line as it is.
fn abbreviate(line: &str) -> String {
    let Some(json) = line.strip_prefix("RESULT ") else {
        return line.to_string();
    };
    let f = fields(json);
    let kind = f.first().copied().unwrap_or("");
    let shown: Vec<String> = match kind {
        r#""kind":"selfcheck""# => vec![kind.to_string(), CUT.into()],
        r#""kind":"latency""# => {
            let Some(min) = f.iter().position(|x| x.starts_with(r#""min_us":"#)) else {
                return line.to_string();
            };
            let tail = f.len().saturating_sub(2).max(min + 1);
            let mut v: Vec<String> = f[..=min].iter().map(|s| s.to_string()).collect();
            v.push(CUT.into());
            v.extend(f[tail..].iter().map(|s| s.to_string()));
            v
        }
        r#""kind":"samples""# => f
            .iter()
            .map(|x| {
                if x.starts_with(r#""us":"#) {
                    format!(r#""us":[{CUT}]"#)
                } else {
                    x.to_string()
                }
            })
            .collect(),
        _ => return line.to_string(),
    };
    format!("RESULT {{{}}}", shown.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "\
cfslab 0.1.0 - banner
boot options: run=lab
memory: m
time: t
heap: h
RESULT {\"kind\":\"selfcheck\",\"ok\":true,\"x\":[1,2]}
s1: run=lab policy=cfs for 3000 ms
s1: measures this
s1: then that
s1: progress 0.5 of 3 s
s1: 7.8 ms
s1: progress 1.0 of 3 s
s1: 7.9 ms
s1: progress 1.5 of 3 s
s1: 7.7 ms
s1: T: 0 (    3) P: 0
s1: \t50.0th: 7832
RESULT {\"kind\":\"latency\",\"scenario\":\"s1\",\"n\":27,\"min_us\":7656,\"avg_us\":7799,\"p50_us\":7832,\"max_us\":7832,\"missed\":0}
RESULT {\"kind\":\"samples\",\"scenario\":\"s1\",\"probe\":\"sleeper\",\"us\":[1,2,3]}
RESULT {\"kind\":\"cpu\",\"scenario\":\"s1\",\"task\":\"hog1\",\"share\":0.499}
RESULT {\"kind\":\"window\",\"scenario\":\"s1\",\"idle_us\":0}
s2: run=lab
seed002-a: lat3 lines (seed 002's format): P: ...
seed002-a: 1: 1.0 0 1 2 3
seed002-a: 2: 7.072399 0 1000000 4005 125
seed002-a: 2: 8.0 0 1 2 3
seed003: maximum latency: 21258.2 µs
seed003: average latency: 8408.0 µs
seed003: missed timer events: 0
";

    #[test]
    fn the_long_excerpt_keeps_the_boot_the_first_scenario_and_the_closing_lines() {
        let text = render_full(OUTPUT).unwrap();
        let want = "
```text
cfslab 0.1.0 - banner
boot options: run=lab
memory: m
time: t
heap: h
RESULT {\"kind\":\"selfcheck\",...}
s1: run=lab policy=cfs for 3000 ms
s1: measures this
s1: then that
s1: progress 0.5 of 3 s
s1: 7.8 ms
s1: progress 1.0 of 3 s
s1: 7.9 ms
...
s1: T: 0 (    3) P: 0
s1: \t50.0th: 7832
RESULT {\"kind\":\"latency\",\"scenario\":\"s1\",\"n\":27,\"min_us\":7656,...,\"max_us\":7832,\"missed\":0}
RESULT {\"kind\":\"samples\",\"scenario\":\"s1\",\"probe\":\"sleeper\",\"us\":[...]}
RESULT {\"kind\":\"cpu\",\"scenario\":\"s1\",\"task\":\"hog1\",\"share\":0.499}
RESULT {\"kind\":\"window\",\"scenario\":\"s1\",\"idle_us\":0}
...
seed002-a: lat3 lines (seed 002's format): P: ...
...
seed002-a: 2: 7.072399 0 1000000 4005 125
...
seed003: maximum latency: 21258.2 µs
seed003: average latency: 8408.0 µs
seed003: missed timer events: 0
...
```
";
        assert_eq!(text, want);
        // An excerpt renders to itself: the stored data may be an excerpt.
        let inner = want
            .trim_start_matches("\n```text\n")
            .trim_end_matches("```\n");
        assert_eq!(render_full(inner).unwrap(), want);
    }

    #[test]
    fn the_short_excerpt_is_short() {
        let text = render_short(OUTPUT).unwrap();
        assert_eq!(
            text,
            "\n```text\ncfslab 0.1.0 - banner\nboot options: run=lab\nmemory: m\ntime: t\n...\n\
             s1: run=lab policy=cfs for 3000 ms\ns1: measures this\ns1: progress 0.5 of 3 s\n\
             s1: 7.8 ms\n...\ns1: T: 0 (    3) P: 0\n\
             RESULT {\"kind\":\"cpu\",\"scenario\":\"s1\",\"task\":\"hog1\",\"share\":0.499}\n...\n\
             seed003: maximum latency: 21258.2 µs\nseed003: average latency: 8408.0 µs\n\
             seed003: missed timer events: 0\n...\n```\n"
        );
        assert!(render_short("no kernel here").is_err());
    }
}
