//! The README's copy of the lab's tables. `make lab` writes the figures to
//! `docs/lab/results.json` and rewrites the README's tables between `<!-- lab:seedNNN -->` and
//! `<!-- /lab:seedNNN -->` from them (`crate::markers`); `boot lab --check` (and the test below, in `make test`)
//! renders the tables again from `results.json` and fails if the README says anything else.
//! So the README's figures are always the last lab run's, never numbers typed by hand.

use super::tables::{EXPERIMENTS, Tables};
use crate::markers;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The README marker tag of `experiment`'s table.
fn tag(experiment: &str) -> String {
    format!("lab:{experiment}")
}

/// What the README must hold between the markers of `experiment`.
fn readme_section(tables: &Tables, experiment: &str) -> String {
    format!(
        "\n{}\n\n{}",
        tables.provenance(experiment),
        tables.render(experiment, true)
    )
}

/// `readme` with every experiment's section rewritten from `tables`.
pub fn rewrite_readme(readme: &str, tables: &Tables) -> Result<String, String> {
    let mut out = readme.to_string();
    for experiment in EXPERIMENTS {
        out = markers::replace(&out, &tag(experiment), &readme_section(tables, experiment))?;
    }
    Ok(out)
}

/// Where the README and its published lab results live.
fn docs() -> (PathBuf, PathBuf) {
    let root = crate::build::workspace_root();
    (root.join("README.md"), root.join("docs/lab"))
}

/// After a successful lab run: copies the plots to `docs/lab/`, writes `results.json` there
/// and rewrites the README's tables. Returns the files written.
pub fn publish(out: &Path, tables: &Tables) -> Result<Vec<PathBuf>, String> {
    let (readme_path, docs) = docs();
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
    let readme = std::fs::read_to_string(&readme_path)
        .map_err(|e| format!("cannot read {}: {e}", readme_path.display()))?;
    std::fs::write(&readme_path, rewrite_readme(&readme, tables)?)
        .map_err(|e| format!("cannot write {}: {e}", readme_path.display()))?;
    written.push(readme_path);
    Ok(written)
}

/// `None` if the README's tables are those of `docs/lab/results.json`, else what differs.
pub fn check_readme() -> Result<Option<String>, String> {
    let (readme_path, docs) = docs();
    let results = docs.join("results.json");
    let json = std::fs::read_to_string(&results)
        .map_err(|e| format!("cannot read {}: {e}", results.display()))?;
    let value: Value =
        serde_json::from_str(&json).map_err(|e| format!("{}: {e}", results.display()))?;
    let tables = Tables::from_json(&value)?;
    let readme = std::fs::read_to_string(&readme_path)
        .map_err(|e| format!("cannot read {}: {e}", readme_path.display()))?;
    for experiment in EXPERIMENTS {
        let want = readme_section(&tables, experiment);
        let have = markers::section(&readme, &tag(experiment))?;
        if let Some(line) = markers::difference(&want, have) {
            return Ok(Some(format!(
                "README.md's {experiment} table is not what docs/lab/results.json holds (run make lab): {line}"
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
    fn the_readme_sections_are_rewritten_and_checked() {
        let t = sample_tables();
        let mut readme = String::from("intro\n");
        for e in EXPERIMENTS {
            readme.push_str(&format!(
                "<!-- lab:{e} -->\nstale\n<!-- /lab:{e} -->\ntext\n"
            ));
        }
        let fresh = rewrite_readme(&readme, &t).unwrap();
        assert!(!fresh.contains("stale") && fresh.starts_with("intro\n"));
        for e in EXPERIMENTS {
            assert_eq!(
                markers::section(&fresh, &tag(e)).unwrap(),
                readme_section(&t, e)
            );
        }
        assert!(rewrite_readme("no markers", &t).is_err());
    }

    /// The README's tables are what the last `make lab` measured (docs/lab/results.json).
    #[test]
    fn the_readme_tables_are_the_last_lab_runs() {
        if let Some(problem) = check_readme().unwrap() {
            panic!("{problem}");
        }
    }
}
