//! The documents' copy of the lab's tables. `make lab` writes the figures to
//! `docs/lab/results.json` and rewrites the tables between `<!-- lab:seedNNN -->` and
//! `<!-- /lab:seedNNN -->` from them, in whichever document holds those markers
//! (`docs/experiments.md` today; `crate::markers`). `boot lab --check` (and the test below,
//! in `make test`) renders the tables again from `results.json` and fails if the document
//! says anything else. So the tables' figures are always the last lab run's, never numbers
//! typed by hand.

use super::tables::{EXPERIMENTS, Tables};
use crate::markers;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The marker tag of `experiment`'s table.
pub fn tag(experiment: &str) -> String {
    format!("lab:{experiment}")
}

/// What the document must hold between the markers of `experiment`.
fn block(tables: &Tables, experiment: &str) -> String {
    format!(
        "\n{}\n\n{}",
        tables.provenance(experiment),
        tables.render(experiment, true)
    )
}

/// `text` with every experiment's block rewritten from `tables` (the blocks must all be in
/// `text`).
#[cfg(test)]
fn rewrite(text: &str, tables: &Tables) -> Result<String, String> {
    let mut out = text.to_string();
    for experiment in EXPERIMENTS {
        out = markers::replace(&out, &tag(experiment), &block(tables, experiment))?;
    }
    Ok(out)
}

/// The workspace root and where the published lab results live.
fn paths() -> (PathBuf, PathBuf) {
    let root = crate::build::workspace_root();
    let docs = root.join("docs/lab");
    (root, docs)
}

/// The tables `docs/lab/results.json` holds.
pub fn stored_tables() -> Result<Tables, String> {
    let results = paths().1.join("results.json");
    let json = std::fs::read_to_string(&results)
        .map_err(|e| format!("cannot read {}: {e}", results.display()))?;
    let value: Value =
        serde_json::from_str(&json).map_err(|e| format!("{}: {e}", results.display()))?;
    Tables::from_json(&value)
}

/// After a successful lab run: copies the plots to `docs/lab/`, writes `results.json` there
/// and rewrites the documents' tables. Returns the files written.
pub fn publish(out: &Path, tables: &Tables) -> Result<Vec<PathBuf>, String> {
    let (root, docs) = paths();
    std::fs::create_dir_all(&docs).map_err(|e| format!("cannot create {}: {e}", docs.display()))?;
    let mut written = Vec::new();
    for name in [
        "seed000-cdf.svg",
        "seed002-cdf.svg",
        "seed003-cdf.svg",
        "timeline.svg",
    ] {
        let (from, to) = (out.join(name), docs.join(name));
        if from.exists() {
            std::fs::copy(&from, &to)
                .map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
            written.push(to);
        }
    }
    let json = serde_json::to_string_pretty(&tables.to_json()).map_err(|e| e.to_string())?;
    let results = docs.join("results.json");
    std::fs::write(&results, json + "\n")
        .map_err(|e| format!("cannot write {}: {e}", results.display()))?;
    written.push(results);
    for experiment in EXPERIMENTS {
        let doc = markers::write_block(&root, &tag(experiment), &block(tables, experiment))?;
        let doc = root.join(doc);
        if !written.contains(&doc) {
            written.push(doc);
        }
    }
    Ok(written)
}

/// Rewrites the documents' tables from `docs/lab/results.json` as it is (no run): after
/// the text around them moved. Returns the documents written.
pub fn render_stored() -> Result<Vec<PathBuf>, String> {
    let root = paths().0;
    let tables = stored_tables()?;
    let mut written = Vec::new();
    for experiment in EXPERIMENTS {
        let doc = markers::write_block(&root, &tag(experiment), &block(&tables, experiment))?;
        if !written.contains(&doc) {
            written.push(doc);
        }
    }
    Ok(written)
}

/// `None` if the documents' tables are those of `docs/lab/results.json`, else what differs.
pub fn check() -> Result<Option<String>, String> {
    let root = paths().0;
    let tables = stored_tables()?;
    for experiment in EXPERIMENTS {
        if let Some(problem) =
            markers::check_block(&root, &tag(experiment), &block(&tables, experiment))?
        {
            return Ok(Some(format!(
                "{problem}\n(the table is not what docs/lab/results.json holds: run make lab)"
            )));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::tables::tests::sample_tables;

    #[test]
    fn the_blocks_are_rewritten_and_checked() {
        let t = sample_tables();
        let mut doc = String::from("intro\n");
        for e in EXPERIMENTS {
            doc.push_str(&format!(
                "<!-- lab:{e} -->\nstale\n<!-- /lab:{e} -->\ntext\n"
            ));
        }
        let fresh = rewrite(&doc, &t).unwrap();
        assert!(!fresh.contains("stale") && fresh.starts_with("intro\n"));
        for e in EXPERIMENTS {
            assert_eq!(markers::section(&fresh, &tag(e)).unwrap(), block(&t, e));
        }
        assert!(rewrite("no markers", &t).is_err());
    }

    /// The documents' tables are what the last `make lab` measured (docs/lab/results.json).
    #[test]
    fn the_documents_tables_are_the_last_lab_runs() {
        if let Some(problem) = check().unwrap() {
            panic!("{problem}");
        }
    }
}
