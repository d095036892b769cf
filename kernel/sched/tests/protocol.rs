//! The scheduling protocol is written once, in `src/rq.rs` and its submodules (`src/rq/`: a
//! task's move between two runqueues, the changes applied through the runqueue): the kernel
//! and the simulator both drive an `Rq`, and neither calls a policy's state-changing methods
//! itself. If either took a step of its own (an `enqueue` the other does not make, a pick
//! without `put_prev`), it would have to call the policy directly, and this test finds the
//! call.
//!
//! `Rq` keeps its policy private and lends it out only as `&P`, so outside `rq.rs` the
//! compiler already refuses such calls through an `Rq`; what is left to check is that no
//! file keeps a policy of its own to call.

use std::fs;
use std::path::{Path, PathBuf};

/// The `Policy` methods that change a policy's state, as called through a value.
const STEPS: [&str; 15] = [
    ".spawn(",
    ".fork(",
    ".enqueue(",
    ".dequeue(",
    ".exit(",
    ".check_preempt_wakeup(",
    ".put_prev(",
    ".pick_next(",
    ".tick(",
    ".yield_now(",
    ".set_nice(",
    ".set_uid(",
    ".migrate_out(",
    ".migrate_in(",
    ".fork_away(",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Lines of `dir`'s Rust files that call a policy step on something named like a policy.
fn direct_policy_calls(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    let mut found = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if STEPS
                .iter()
                .any(|step| code.contains(&format!("policy{step}")))
            {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn only_the_runqueue_drives_the_policy() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in [crate_dir.join("src/sim"), crate_dir.join("../src")] {
        let calls = direct_policy_calls(&dir);
        assert!(
            calls.is_empty(),
            "policy steps taken outside src/rq.rs and src/rq/:\n{}",
            calls.join("\n")
        );
    }
}

#[test]
fn the_check_finds_a_direct_call() {
    // The rule above must be able to fail: rq.rs and its submodules make every call.
    let rq = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let calls = direct_policy_calls(&rq);
    assert!(
        calls
            .iter()
            .any(|c| c.contains("rq.rs") && c.contains("policy.put_prev("))
    );
    assert!(
        calls
            .iter()
            .all(|c| c.contains("/rq.rs") || c.contains("/rq/") || c.contains("/tests.rs")),
        "{calls:?}"
    );
}
