//! `boot docs` (`make docs`): every figure the documents show is written by a tool between
//! `<!-- TAG -->` markers (`crate::markers`) from a data file the tool stored, and a test
//! renders each block again from its data and fails if the document says anything else.
//!
//! | tag | data | written by |
//! |---|---|---|
//! | `lab:seedNNN` | docs/lab/results.json | `make lab` (`crate::lab`) |
//! | `compare:NAME` | docs/compare/results.json | `make compare` (`crate::compare`) |
//! | `paths` | docs/data/paths.json | `boot compare --paths` (`make bench`, `make compare`) |
//! | `run`, `run:short` | docs/data/make-run.txt | `boot docs run` |
//! | `gdb:scheduler`, `gdb:hello` | docs/data/gdb-*.txt | `boot docs gdb` |
//! | `bench:ops`, `bench:ratio`, `bench:switch`, `bench:churn`, `bench:smp`, `bench:sim` | docs/data/bench.json | `boot docs bench` (`make bench`) |
//! | `seeds` | docs/data/seeds.txt | `boot docs seeds` |
//! | `compare:smp` | docs/data/compare-smp.json | `make compare` (`crate::compare::smp`) |
//! | `wasted:sim`, `wasted:kernel` | docs/data/wasted-sim.json, docs/data/wasted-kernel.json | `boot docs wasted` (`make wasted`) |
//! | `session` | docs/data/session.txt | `CFSLAB_BLESS=1 cargo test -p systests --test live_scheduler` |
//!
//! `boot docs` alone re-renders every block from its stored data, the lab's and compare's
//! tables included (after prose moved around them); `boot docs --check` checks them all,
//! and that no document holds a marker no tool writes. `make docs` reruns every generator,
//! then checks.

mod bench;
mod blocks;
mod gdb;
mod messaging_bench;
mod run_output;
mod sim_bench;
mod smp_bench;
mod storm_bench;
mod ttwu_bench;
mod wasted_kernel;
mod wasted_sim;

use blocks::{BLOCKS, SEEDS_DATA};

use crate::markers;
use crate::status::Status;
use std::path::{Path, PathBuf};

/// `n` with its digits in groups of three, as the documents write numbers: `12 833`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

fn root() -> PathBuf {
    crate::build::workspace_root()
}

fn read_data(root: &Path, data: &str) -> Result<String, String> {
    std::fs::read_to_string(root.join(data)).map_err(|e| format!("cannot read {data}: {e}"))
}

/// Stores `text` as `data` (relative to the workspace root).
pub fn store(data: &str, text: &str) -> Result<(), String> {
    let path = root().join(data);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(&path, text).map_err(|e| format!("cannot write {data}: {e}"))
}

/// Rewrites every block rendered from `data` (or every block, for `None`) from the stored
/// data; returns the documents changed.
pub fn render_blocks(data: Option<&str>) -> Result<Vec<PathBuf>, String> {
    let root = root();
    let mut written = Vec::new();
    for block in BLOCKS.iter().filter(|b| data.is_none_or(|d| d == b.data)) {
        let body = (block.render)(&read_data(&root, block.data)?)
            .map_err(|e| format!("{}: {e}", block.tag))?;
        let doc = markers::write_block(&root, block.tag, &body)?;
        eprintln!(
            "docs: {} block of {} rendered from {}",
            block.tag,
            doc.display(),
            block.data
        );
        if !written.contains(&doc) {
            written.push(doc);
        }
    }
    Ok(written)
}

/// Every problem with the documents' generated blocks: a block that is not what its data
/// renders, a marker no tool writes, a block that no document holds.
pub fn problems() -> Result<Vec<String>, String> {
    let root = root();
    let mut problems = Vec::new();
    for block in &BLOCKS {
        let want = (block.render)(&read_data(&root, block.data)?)
            .map_err(|e| format!("{}: {e}", block.tag))?;
        match markers::check_block(&root, block.tag, &want) {
            Ok(None) => {}
            Ok(Some(problem)) => problems.push(format!(
                "{problem}\n(the block is not what {} renders: edit the data's generator, not the figure, and run {})",
                block.data, block.made_by
            )),
            Err(e) => problems.push(e),
        }
    }
    if let Some(problem) = crate::lab::publish::check()? {
        problems.push(problem);
    }
    if let Some(problem) = crate::compare::publish::check()? {
        problems.push(problem);
    }
    let mut known: Vec<String> = BLOCKS.iter().map(|b| b.tag.to_string()).collect();
    known.extend(
        crate::lab::tables::EXPERIMENTS
            .iter()
            .map(|e| crate::lab::publish::tag(e)),
    );
    known.extend(crate::compare::publish::stored_tags()?);
    for doc in markers::documents(&root) {
        let text = read_data(&root, &doc.display().to_string())?;
        for tag in markers::tags(&text) {
            if !known.contains(&tag) {
                problems.push(format!(
                    "{} holds a <!-- {tag} --> marker that no tool writes",
                    doc.display()
                ));
            }
        }
    }
    Ok(problems)
}

/// What `boot docs` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Re-render every block from its stored data.
    Render,
    /// Check every block against its data.
    Check,
    /// Run these generators (`run`, `gdb`, `bench`, `seeds`, `wasted`), store their data and render
    /// their blocks.
    Generate(Vec<String>),
}

/// The generators `boot docs NAME` knows.
pub const GENERATORS: [&str; 5] = ["run", "gdb", "bench", "seeds", "wasted"];

pub fn main(action: &Action) -> Result<Status, String> {
    match action {
        Action::Render => {
            render_blocks(None)?;
            for doc in crate::lab::publish::render_stored()? {
                eprintln!(
                    "docs: lab tables of {} rendered from docs/lab/results.json",
                    doc.display()
                );
            }
            for doc in crate::compare::publish::render_stored()? {
                eprintln!(
                    "docs: compare tables of {} rendered from docs/compare/results.json",
                    doc.display()
                );
            }
            Ok(Status::Success)
        }
        Action::Check => {
            let problems = problems()?;
            if problems.is_empty() {
                eprintln!("docs: every generated block is what its data renders");
                return Ok(Status::Success);
            }
            for problem in &problems {
                eprintln!("docs: {problem}");
            }
            Ok(Status::Failure)
        }
        Action::Generate(names) => {
            for name in names {
                match name.as_str() {
                    "run" => {
                        store(run_output::DATA, &run_output::generate()?)?;
                        render_blocks(Some(run_output::DATA))?;
                    }
                    "gdb" => {
                        for session in [&gdb::SCHEDULER, &gdb::HELLO] {
                            store(session.data, &gdb::generate(session)?)?;
                            render_blocks(Some(session.data))?;
                        }
                    }
                    "bench" => {
                        store(bench::DATA, &bench::generate()?)?;
                        render_blocks(Some(bench::DATA))?;
                    }
                    "seeds" => {
                        store(SEEDS_DATA, &seeds()?)?;
                        render_blocks(Some(SEEDS_DATA))?;
                    }
                    "wasted" => {
                        store(wasted_sim::DATA, &wasted_sim::generate()?)?;
                        render_blocks(Some(wasted_sim::DATA))?;
                        store(wasted_kernel::DATA, &wasted_kernel::generate()?)?;
                        render_blocks(Some(wasted_kernel::DATA))?;
                    }
                    other => return Err(format!("no generator {other}")),
                }
            }
            Ok(Status::Success)
        }
    }
}

/// Runs a command in the workspace with its stdout captured (and echoed as it comes), its
/// stderr passed through; fails unless it succeeds.
fn captured(program: &str, args: &[&str]) -> Result<String, String> {
    use std::io::{BufRead, BufReader};
    eprintln!("docs: {program} {}", args.join(" "));
    let mut child = std::process::Command::new(program)
        .current_dir(root())
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let mut text = String::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| format!("{program}: {e}"))?;
            println!("{line}");
            text.push_str(&line);
            text.push('\n');
        }
    }
    let status = child.wait().map_err(|e| format!("{program}: {e}"))?;
    if !status.success() {
        return Err(format!("{program} {} failed ({status})", args.join(" ")));
    }
    Ok(text)
}

/// `cargo boot run --release ARGS` (the optimised kernel, as `make run` boots it), its
/// output captured.
fn boot_run(args: &[&str]) -> Result<String, String> {
    let mut all = vec!["run", "--release"];
    all.extend_from_slice(args);
    boot_tool(&all)
}

/// `cargo boot ARGS` (any mode: `run`, `linux`), its output captured.
fn boot_tool(args: &[&str]) -> Result<String, String> {
    let mut all = vec!["run", "-q", "-p", "boot", "--"];
    all.extend_from_slice(args);
    captured(&cargo(), &all)
}

/// `argv` (a program under `/bin` and its arguments) on cfslab's optimised kernel and on
/// Linux 6.1, each in QEMU with `cpus` CPUs at `-icount shift=0`, as `make bench` times
/// both: the two consoles, cfslab's first.
fn on_both_kernels(cpus: u32, argv: &[&str]) -> Result<(String, String), String> {
    let smp = cpus.to_string();
    let cfslab = on_cfslab(cpus, &format!("-- {}", argv.join(" ")))?;
    let mut linux = vec![
        "linux",
        "--icount-shift",
        "0",
        "--smp",
        &smp,
        "--timeout",
        "300",
        "--",
    ];
    linux.extend_from_slice(argv);
    Ok((cfslab, boot_tool(&linux)?))
}

/// cfslab's optimised kernel booted with boot options `opts` (a program after `--`), in
/// QEMU with `cpus` CPUs at `-icount shift=0`, as `make bench` times it: its console.
fn on_cfslab(cpus: u32, opts: &str) -> Result<String, String> {
    let smp = cpus.to_string();
    let args = [
        "run",
        "--release",
        "--icount-shift",
        "0",
        "--smp",
        &smp,
        "--opts",
        opts,
    ];
    boot_tool(&args)
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// The simulator's seed tables: what `cargo test -p sched --test seeds` prints, without the
/// test harness's lines.
fn seeds() -> Result<String, String> {
    let output = captured(
        &cargo(),
        &[
            "test",
            "-q",
            "-p",
            "sched",
            "--test",
            "seeds",
            "--",
            "--nocapture",
            "--test-threads",
            "1",
        ],
    )?;
    let tables = seed_tables(&output);
    if tables.is_empty() {
        return Err("the seeds test printed no table".into());
    }
    Ok(tables)
}

/// The tables in the seeds test's output: from the first `seed000 (` line on, without the
/// harness's lines (`running`, `test ... ok`, `test result`) and blank lines.
fn seed_tables(output: &str) -> String {
    let mut out = String::new();
    let mut started = false;
    for line in output.lines() {
        let line = line.trim_end();
        // With --nocapture the harness prints `test NAME ... ` before the test's own output.
        let line = match line
            .strip_prefix("test ")
            .and_then(|r| r.split_once(" ..."))
        {
            Some((_, after)) => after.trim_start(),
            None => line,
        };
        started |= line.starts_with("seed000 (");
        let harness = line.is_empty()
            || line == "ok"
            || line.starts_with("running ")
            || line.starts_with("test result")
            || line.chars().all(|c| c == '.');
        if started && !harness {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_by_three() {
        assert_eq!(grouped(7), "7");
        assert_eq!(grouped(981), "981");
        assert_eq!(grouped(1_296), "1 296");
        assert_eq!(grouped(155_035), "155 035");
        assert_eq!(grouped(1_000_000), "1 000 000");
    }

    #[test]
    fn the_seed_tables_are_read_without_the_harness() {
        let output = "\nrunning 2 tests\ntest seed000_x ... \nseed000 (2.6.24): a\nv  n\nok\n\
                      test seed002_y ... \nseed002 (HZ): b\nok\n\ntest result: ok. 2 passed\n";
        assert_eq!(
            seed_tables(output),
            "seed000 (2.6.24): a\nv  n\nseed002 (HZ): b\n"
        );
    }

    /// Every generated block of README.md and docs/ is what its stored data renders, and
    /// every marker belongs to a tool: a figure edited by hand fails here.
    #[test]
    fn every_generated_block_is_what_its_data_renders() {
        let problems = problems().unwrap();
        assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    }
}
