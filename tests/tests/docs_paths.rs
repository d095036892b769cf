//! docs/architecture.md's "Three paths through the kernel", checked against the source: every
//! file a path's steps name exists (in `kernel/src/`, or the policy crate's
//! `kernel/sched/src/`), every function a step opens with is defined in its file, and the
//! files each path crosses — its steps' files of `kernel/src/` and the leaf helpers of a
//! switch, which the section lists apart — are as many as its "Counted with them" sentence
//! says. A function that moves, a file split or a path that grows fails here until the text
//! says so.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn section() -> String {
    let text = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let start = text
        .find("## Three paths through the kernel")
        .expect("the section");
    let rest = &text[start..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
    rest[..end].to_string()
}

/// The backticked words of `text`, in order.
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// Where a file the text names is: `kernel/src/NAME` (counted), the policy crate's
/// `kernel/sched/src/NAME` or a path from the repository's root (not counted), or a bare
/// name beside the last file named (`user_state.rs`, "beside it").
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum File {
    Kernel(String),
    Elsewhere(String),
}

fn resolve(name: &str, last: Option<&str>) -> File {
    let kernel = root().join("kernel/src");
    if kernel.join(name).exists() {
        return File::Kernel(name.trim_end_matches('/').to_string());
    }
    if root().join("kernel/sched/src").join(name).exists() || root().join(name).exists() {
        return File::Elsewhere(name.to_string());
    }
    if let Some(dir) = last.and_then(|l| Path::new(l).parent())
        && kernel.join(dir).join(name).exists()
    {
        return File::Kernel(dir.join(name).display().to_string());
    }
    panic!("docs/architecture.md names `{name}`, which is no file of the kernel")
}

fn is_file(word: &str) -> bool {
    !word.contains(' ') && (word.ends_with(".rs") || word == "percpu/")
}

/// The files of `kernel/src/` that `text` names, resolved in order.
fn kernel_files(text: &str) -> BTreeSet<String> {
    let mut last: Option<String> = None;
    let mut files = BTreeSet::new();
    for word in backticked(text).into_iter().filter(|w| is_file(w)) {
        if let File::Kernel(path) = resolve(word, last.as_deref()) {
            last = Some(path.clone());
            files.insert(path);
        }
    }
    files
}

/// One path's steps: its numbered list, from `1.` to the blank line that ends it (what
/// comes before — how a sleeper went to sleep — and after is not the path).
fn path_text<'a>(section: &'a str, heading: &str) -> &'a str {
    let start = section.find(heading).expect(heading);
    let rest = &section[start..];
    let first = rest.find("\n1. ").expect("a numbered step") + 1;
    let end = rest[first..].find("\n\n").map_or(rest.len(), |e| first + e);
    &rest[first..end]
}

/// The leaf helpers a switch calls, which each path crosses beside its steps.
fn leaf_helpers(section: &str) -> BTreeSet<String> {
    let from = section
        .find("nor the leaf helpers")
        .expect("the helpers' list");
    let to = from
        + section[from..]
            .find("Counted with them")
            .expect("the count");
    kernel_files(&section[from..to])
}

/// The numbers the "Counted with them" sentence gives: the tick's, then the wake-up's.
fn stated_counts(section: &str) -> (usize, usize) {
    let from = section.find("Counted with them").unwrap();
    let sentence = &section[from..from + section[from..].find('.').unwrap()];
    let numbers: Vec<usize> = sentence
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 2, "{sentence}");
    (numbers[0], numbers[1])
}

#[test]
fn the_paths_name_files_and_functions_that_exist() {
    let section = section();
    // Each step that opens with a file names the function the path enters there.
    for line in section.lines() {
        let step = line.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ');
        if step.len() == line.len() || !step.starts_with('`') {
            continue;
        }
        let words = backticked(step);
        let (Some(file), Some(function)) = (words.first(), words.get(1)) else {
            continue;
        };
        if !is_file(file) || !step.contains(&format!("`{file}`: `{function}`")) {
            continue;
        }
        let name = function.split('(').next().unwrap();
        let File::Kernel(path) = resolve(file, None) else {
            continue;
        };
        let source = std::fs::read_to_string(root().join("kernel/src").join(&path)).unwrap();
        assert!(
            source.contains(&format!("fn {name}(")) || source.contains(&format!("fn {name}<")),
            "docs/architecture.md: `{path}` has no function `{name}`: {line}"
        );
    }
}

#[test]
fn each_path_crosses_as_many_files_as_the_text_says() {
    let section = section();
    let helpers = leaf_helpers(&section);
    let crossed = |heading: &str| -> BTreeSet<String> {
        let mut files = kernel_files(path_text(&section, heading));
        files.extend(helpers.iter().cloned());
        files
    };
    let tick = crossed("### A timer tick");
    let wake = crossed("### A wake-up");
    assert_eq!(
        stated_counts(&section),
        (tick.len(), wake.len()),
        "the tick crosses {tick:?}, the wake-up {wake:?}"
    );
}
